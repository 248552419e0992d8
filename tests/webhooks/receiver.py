"""A webhook receiver on loopback: records every delivery as it arrived, answers with the
status codes a test asks for (with the headers and body it asks for), can go down (connection refused) and come back on its port,
and can hold a request open until released (to kill a worker mid-delivery)."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    status: int

    def verified(self, secret: str) -> dict[str, Any]:
        """The payload, after the signature check of the Standard Webhooks library."""
        return Webhook(secret).verify(self.body, self.headers)

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.answers: deque[int] = deque()
        self.default_status = 204
        self.answer_headers: dict[str, str] = {}
        self.answer_body = b""
        self.hold_next = False
        self.holding = threading.Event()
        self.release = threading.Event()
        self.arrived = threading.Condition()
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                status = receiver.answers.popleft() if receiver.answers else None
                status = status or receiver.default_status
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver.arrived:
                    receiver.received.append(Received(headers, body, status))
                    receiver.arrived.notify_all()
                if receiver.hold_next:
                    receiver.hold_next = False
                    receiver.holding.set()
                    receiver.release.wait(30)
                self.send_response(status)
                for name, value in receiver.answer_headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(receiver.answer_body)))
                self.end_headers()
                self.wfile.write(receiver.answer_body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self) -> None:
        """Stop listening: connections are refused until ``up``."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for(self, count: int, timeout: float = 60) -> list[Received]:
        """Wait until ``count`` deliveries arrived (a deadline for a stuck test, not a timed
        assertion)."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
        return list(self.received)

    def close(self) -> None:
        self.release.set()
        self.down()
