"""A database outage without touching the database: a TCP proxy of the test's own in front of
the real server, stopped (every connection cut, new ones refused) and started again.

The machine's PostgreSQL serves other runs too, so a test never stops it; it points the
service's DATABASE_URL at this proxy instead (``url_through``) and stops the proxy.
"""

from __future__ import annotations

import contextlib
import socket
import threading

from sqlalchemy.engine import make_url

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


class OutageProxy:
    """Forwards connections to ``target`` while started; stopped, it cuts every connection it
    carries and refuses new ones, as a server that went away does."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.listener: socket.socket | None = None
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()

    @classmethod
    def in_front_of(cls, database_url: str) -> OutageProxy:
        url = make_url(database_url)
        return cls((url.host or LOOPBACK, url.port or 5432))

    def url_through(self, database_url: str) -> str:
        """``database_url`` (database, user, query and all) reaching the server through here."""
        url = make_url(database_url).set(host=LOOPBACK, port=self.port)
        return url.render_as_string(hide_password=False)

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((LOOPBACK, self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        assert self.listener is not None
        # shutdown wakes the thread blocked in accept(); close alone would leave it listening.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.listener = None
        with self.lock:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                if self.listener is not listener:  # stopped meanwhile
                    client.close()
                    upstream.close()
                    return
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
