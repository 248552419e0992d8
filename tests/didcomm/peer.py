"""A DIDComm party written in the test: its own did:peer:2 whose service is a loopback HTTP
endpoint, sending through ``app.didcomm.messaging`` and recording what arrives, unpacked.
It plays the verifier's part (or an issuer's) where the app itself is not under test."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from app.didcomm import invitation, messaging, peer_did
from app.didcomm.errors import DidcommError


class Peer:
    """Start with ``with Peer() as peer``; :attr:`did` is its DID, :attr:`received` what
    arrived at its endpoint (answered 202, as the SDK requires a 2xx)."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/didcomm"
        self.identity = peer_did.make(self.url)
        self.did = self.identity.did
        self._private_keys = messaging.private_keys(self.identity)
        self._changed = threading.Condition()
        self.received: list[messaging.Unpacked] = []
        self.refused: list[str] = []
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> Peer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)
        self._server.server_close()

    def send(self, msg: dict[str, Any], to_did: str) -> int:
        """Deliver ``msg`` to a holder the way Verity will (``messaging.for_holder``): through
        the mediator its DID names. Returns the HTTP status."""
        outbound = messaging.for_holder(msg, sender=self.identity, to_did=to_did)
        request = urllib.request.Request(
            outbound.url,
            data=outbound.body,
            headers={"Content-Type": outbound.content_type},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status

    def invitation_url(
        self, goal: str = "Connect", base: str = "https://verity.test/connect"
    ) -> tuple[str, str]:
        """An OOB 2.0 invitation from this peer as an ``_oob`` URL: (invitation id, URL)."""
        made = invitation.make(self.did, goal=goal)
        return made["id"], invitation.oob_url(base, made)

    def wait_for(
        self,
        type_: str,
        *,
        timeout: float = 30,
        where: Callable[[dict[str, Any]], bool] = lambda _: True,
    ) -> messaging.Unpacked:
        """The first message of ``type_`` received (satisfying ``where`` on the plaintext)."""
        found: list[messaging.Unpacked] = []

        def seen() -> bool:
            found[:] = [u for u in self.received if u.message["type"] == type_ and where(u.message)]
            return bool(found)

        with self._changed:
            if not self._changed.wait_for(seen, timeout):
                types = [u.message["type"] for u in self.received]
                raise AssertionError(f"no {type_} arrived; got {types}, refused {self.refused}")
        return found[0]

    def _receive(self, raw: bytes) -> int:
        try:
            unpacked = messaging.unpack(raw, private_keys=self._private_keys)
        except DidcommError as exc:
            with self._changed:
                self.refused.append(exc.reason)
            return 400
        with self._changed:
            self.received.append(unpacked)
            self._changed.notify_all()
        return 202


def _handler_for(peer: Peer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(peer._receive(raw))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
