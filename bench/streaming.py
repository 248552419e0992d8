"""The person's page with idle event streams open, against none: are pages starved?

``python bench/streaming.py`` makes a throwaway database (SQLite, or with
``BENCH_DATABASE_URL`` a PostgreSQL schema of its own, as ``bench/run.py`` does), starts the
web server as ``make run`` does (gunicorn, ``BENCH_WORKERS`` sync workers) and, beside it, the
event stream server (``gunicorn.events.conf.py``: one worker of ``EVENTS_THREADS`` threads).
It seeds a verification, an integration key and a REQUESTED individual over HTTP, then drives
the person's page ``GET /i/{individual_id}`` with wrk, alternating:

    none | streams | none | streams | none ...

where ``streams`` is the same run while ``BENCH_STREAMS`` (50) ``GET /events`` streams of the
organization are open and idle on the event stream server (each checked to answer 200 and its
first line; their heartbeats are read and dropped), with the default poll of the log
(``EVENTS_POLL_SECONDS``, 1 s: 50 indexed reads a second) and heartbeats every second (the
worst case: the default is 15 s). ``none`` is the page alone. The figure is page req/s with the
streams over the mean of the ``none`` runs on either side, the median over the rounds, and the
median p99 latency of each kind of run. Settings: ``BENCH_STREAMS``, ``BENCH_SECONDS`` (8), ``BENCH_WARMUP``
(2), ``BENCH_ROUNDS`` (2), ``BENCH_CONNECTIONS``/``BENCH_THREADS`` (8/2), ``BENCH_WORKERS``
(2), ``BENCH_DATABASE_URL``. The exit status is non-zero only when the benchmark could not run.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import run as bench
from run import BIN, ROOT, BenchError, Endpoint, Server, Settings

TARGET = 0.9  # page req/s with the streams open over without


class EventServer(Server):
    """The event stream server, as ``make run`` starts it."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.port = bench.free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "--config",
                str(ROOT / "gunicorn.events.conf.py"),
                "--bind",
                f"127.0.0.1:{self.port}",
                "wsgi:app",
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


class IdleStreams:
    """``count`` open streams whose heartbeats are read and dropped on one thread each."""

    def __init__(self, base: str, apikey: str, count: int) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.connections: list[http.client.HTTPConnection] = []
        self.threads: list[threading.Thread] = []
        for _ in range(count):
            connection = http.client.HTTPConnection(host, int(port), timeout=30)
            connection.request("GET", "/events", headers={"apikey": apikey})
            answer = connection.getresponse()
            if answer.status != 200:
                raise BenchError(f"GET /events answered {answer.status}: {answer.read()!r}")
            if not answer.readline().startswith(b"retry:"):
                raise BenchError("GET /events did not open with its retry field")
            self.connections.append(connection)
            thread = threading.Thread(target=self._drain, args=(answer,), daemon=True)
            thread.start()
            self.threads.append(thread)

    @staticmethod
    def _drain(answer: http.client.HTTPResponse) -> None:
        # Closing the connection under the reader ends it with one of these.
        with contextlib.suppress(OSError, ValueError, AttributeError, http.client.HTTPException):
            while answer.readline():
                pass

    def close(self) -> None:
        for connection in self.connections:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)
            connection.close()


def main() -> int:
    settings = Settings.from_environment()
    streams = bench.setting("BENCH_STREAMS", 50)
    servers: list[Server] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="verity-bench-streams-") as workdir,
            bench.database(settings, Path(workdir)) as (database_url, shown),
        ):
            print(f"database: {shown}", flush=True)
            env = bench.server_environment(database_url)
            env.update(
                EVENTS_STREAMS_PER_ORGANIZATION=str(streams),
                EVENTS_THREADS=str(streams + 8),
                EVENTS_HEARTBEAT_SECONDS="1",
            )
            token = bench.prepare_database(env)
            web = Server(env, settings.workers, Path(workdir) / "web.log")
            servers.append(web)
            web.wait_ready()
            events = EventServer({**env, "PUBLIC_URL": web.base}, Path(workdir) / "events.log")
            servers.append(events)
            events.wait_ready()
            endpoints, _ = bench.seed_over_http(web.base, token)
            page = next(e for e in endpoints if e.key == "page")
            apikey = next(e for e in endpoints if e.key == "lookup").headers[0].split(": ")[1]
            ratios, runs = measure(settings, web, page, events.base, apikey, streams)
            report(ratios, runs, streams)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        for server in servers:
            server.stop()
    return 0


def measure(
    settings: Settings, web: Server, page: Endpoint, events: str, apikey: str, streams: int
) -> tuple[list[float], dict[str, list[bench.Run]]]:
    runs: dict[str, list[bench.Run]] = {"none": [], "streams": []}
    ratios = []
    runs["none"].append(bench.measure(settings, web, _named(page, "none")))
    for _ in range(settings.rounds):
        opened = IdleStreams(events, apikey, streams)
        try:
            runs["streams"].append(bench.measure(settings, web, _named(page, "streams")))
        finally:
            opened.close()
        runs["none"].append(bench.measure(settings, web, _named(page, "none")))
        around = (runs["none"][-2].requests_per_second + runs["none"][-1].requests_per_second) / 2
        ratios.append(runs["streams"][-1].requests_per_second / around)
    return ratios, runs


def _named(endpoint: Endpoint, key: str) -> Endpoint:
    return Endpoint(key, endpoint.label, endpoint.path, endpoint.headers, endpoint.script_args)


def report(ratios: list[float], runs: dict[str, list[bench.Run]], streams: int) -> None:
    ratio = statistics.median(ratios)
    p99 = {key: statistics.median(run.p99_ms for run in found) for key, found in runs.items()}
    result = "PASS" if ratio >= TARGET else "MISS"
    print(
        f"\npage GET /i/{{iid}} with {streams} idle streams open, over none: {ratio:.2f}x "
        f"(rounds {min(ratios):.2f}-{max(ratios):.2f}), median p99 {p99['streams']:.1f} ms "
        f"against {p99['none']:.1f} ms; target >= {TARGET}x: {result}",
        flush=True,
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
