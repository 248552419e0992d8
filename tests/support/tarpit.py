"""A tarpit on loopback: it accepts every connection, reads nothing it needs to, and never
answers; each connection stays open until the other side gives up (or the tarpit closes).

It records each connection, whether the other side has closed it yet, and the most that were
open at once, so a test can tell that sends are hanging (and how many) without timing them."""

from __future__ import annotations

import contextlib
import socket
import threading


class Tarpit:
    def __init__(self, port: int = 0) -> None:
        self.lock = threading.Condition()
        self.arrived = 0
        self.ended = 0
        self.most_at_once = 0
        self.stopped = threading.Event()
        self._open: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", port), backlog=128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/didcomm"

    def hanging(self) -> int:
        with self.lock:
            return self.arrived - self.ended

    def wait_for(self, count: int, timeout: float = 60) -> int:
        """Wait until ``count`` connections arrived (a deadline for a stuck test only)."""
        with self.lock:
            self.lock.wait_for(lambda: self.arrived >= count, timeout)
            return self.arrived

    def wait_until_ended(self, count: int, timeout: float = 60) -> int:
        """Wait until the other side closed ``count`` connections (a deadline for a stuck
        test only)."""
        with self.lock:
            self.lock.wait_for(lambda: self.ended >= count, timeout)
            return self.ended

    def close(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        with self.lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> Tarpit:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.arrived += 1
                self._open.append(connection)
                self.most_at_once = max(self.most_at_once, self.arrived - self.ended)
                self.lock.notify_all()
            threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket) -> None:
        """Read (and drop) whatever comes until the other side closes; answer nothing."""
        with connection:
            while True:
                try:
                    if not connection.recv(65536):
                        break
                except OSError:
                    break
        with self.lock:
            self.ended += 1
            self._open.remove(connection)
            self.lock.notify_all()
