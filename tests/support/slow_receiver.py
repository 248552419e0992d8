"""A receiver on loopback that reads the request, then sends its answer one byte at a time,
a byte every ``interval`` seconds: each read of the sender sees data long before any
per-read timeout, so only a deadline on the whole attempt ends it.

It records how each connection ended: whether the answer was sent in full, or the other side
closed first (and after how many bytes)."""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass

ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass
class Dribble:
    sent: int = 0
    finished: bool = False  # the whole answer went out
    cut_off: bool = False  # the sender closed the connection first


class SlowReceiver:
    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.connections: list[Dribble] = []
        self.lock = threading.Condition()
        self.stopped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    @property
    def whole_answer_takes(self) -> float:
        """Seconds the answer takes to dribble out in full."""
        return len(ANSWER) * self.interval

    def in_flight(self) -> int:
        with self.lock:
            return sum(not (c.finished or c.cut_off) for c in self.connections)

    def wait_for(self, count: int, timeout: float = 60) -> list[Dribble]:
        """Wait until ``count`` connections arrived (a deadline for a stuck test only)."""
        with self.lock:
            self.lock.wait_for(lambda: len(self.connections) >= count, timeout)
            return list(self.connections)

    def wait_until_ended(self, count: int, timeout: float = 60) -> list[Dribble]:
        with self.lock:
            self.lock.wait_for(
                lambda: sum(c.finished or c.cut_off for c in self.connections) >= count,
                timeout,
            )
            return list(self.connections)

    def close(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            dribble = Dribble()
            with self.lock:
                self.connections.append(dribble)
                self.lock.notify_all()
            threading.Thread(target=self._dribble, args=(connection, dribble), daemon=True).start()

    def _dribble(self, connection: socket.socket, dribble: Dribble) -> None:
        with connection:
            self._read_request(connection)
            for byte in ANSWER:
                if self.stopped.wait(self.interval):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    break
                dribble.sent += 1
                if self._closed_by_peer(connection):
                    break
            with self.lock:
                if dribble.sent == len(ANSWER):
                    dribble.finished = True
                else:
                    dribble.cut_off = True
                self.lock.notify_all()

    @staticmethod
    def _read_request(connection: socket.socket) -> None:
        """Headers, then the body its Content-Length announces."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = connection.recv(65536)
            if not chunk:
                return
            body += chunk

    @staticmethod
    def _closed_by_peer(connection: socket.socket) -> bool:
        """A readable socket with nothing to read is one the other side has closed."""
        connection.setblocking(False)
        try:
            return connection.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            connection.setblocking(True)
