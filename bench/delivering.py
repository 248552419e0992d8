"""Webhook deliveries per second to a receiver on loopback, and the job queue's own speed.

``python bench/delivering.py`` (or ``main()``) makes a throwaway database (SQLite, or with
``BENCH_DATABASE_URL`` a PostgreSQL schema of its own), an organization with one webhook
endpoint pointing at a receiver this script runs on 127.0.0.1, and ``BENCH_DELIVERIES`` events
(one individual each moved to REQUESTED through ``set_status``, so each event is written and
rendered as in service). Then it starts the real worker (``flask --app wsgi jobs worker``) and
counts signed deliveries per second from the first one the receiver gets to the last, so the
worker's start-up is not measured. The receiver checks every signature with the Standard
Webhooks library and answers 204.

The baseline, measured in the same run: plain POSTs per second of the same bodies from the same
number of threads to the same receiver (a new connection each, as every delivery makes).

Before that it measures the queue alone: no-op jobs enqueued and then run per second by Huey
on SQLite storage and, when ``BENCH_REDIS_URL`` is set, on Redis.

Settings: ``BENCH_DELIVERIES`` (2000), ``BENCH_WORKER_THREADS`` (4), ``BENCH_QUEUE_JOBS``
(5000), ``BENCH_DATABASE_URL``, ``BENCH_REDIS_URL`` (also the queue the worker uses, when set).
The exit status is 0 when the run completed, whatever the figures; non-zero only when the
benchmark itself could not run.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from run import stop_group  # noqa: E402 (bench/, beside this file)

DEADLINE = 600  # seconds for the deliveries to finish before the run is called broken


class BenchError(Exception):
    """The benchmark could not run; the message says what broke."""


def setting(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise BenchError(f"{name} must be a whole number, not {raw!r}") from None
    if value < 1:
        raise BenchError(f"{name} must be at least 1")
    return value


@dataclass(frozen=True)
class Figures:
    deliveries: int
    threads: int
    per_second: float
    baseline_per_second: float
    queue: dict[str, float]
    database: str

    @property
    def ratio(self) -> float:
        return self.per_second / self.baseline_per_second


# -- the receiver -----------------------------------------------------------------------------


class Receiver:
    """Counts deliveries, checks each signature, remembers when the first and last arrived."""

    def __init__(self) -> None:
        self.secret: str | None = None
        self.count = 0
        self.ids: set[str] = set()
        self.bad = 0
        self.first = 0.0
        self.last = 0.0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.record(body, dict(self.headers.items()))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 128
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def record(self, body: bytes, headers: dict[str, str]) -> None:
        ok = True
        if self.secret is not None:
            from standardwebhooks import Webhook

            try:
                Webhook(self.secret).verify(body, headers)
            except Exception:
                ok = False
        now = time.perf_counter()
        with self.lock:
            if not ok:
                self.bad += 1
                return
            if self.secret is not None:
                self.ids.add(headers.get("webhook-id", headers.get("Webhook-Id", "")))
            self.count += 1
            self.first = self.first or now
            self.last = now

    def reset(self) -> None:
        with self.lock:
            self.count, self.first, self.last, self.bad = 0, 0.0, 0.0, 0
            self.ids.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the queue alone --------------------------------------------------------------------------


def queue_throughput(url: str, jobs: int, workdir: Path) -> float:
    """No-op jobs enqueued, then dequeued and run, per second, by one thread, on the storage
    the service builds for ``JOBS_QUEUE_URL`` = ``url``."""
    from app.jobs.queue import build_huey

    config = {
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{workdir / 'unused.sqlite3'}",
        "JOBS_QUEUE_URL": url,
        "JOBS_QUEUE_NAME": f"bench-{secrets.token_hex(4)}",
    }
    huey = build_huey(config)
    noop = huey.task(name="noop")(lambda: None)
    try:
        started = time.perf_counter()
        for _ in range(jobs):
            noop()
        ran = 0
        while huey.pending_count():
            huey.execute(huey.dequeue())
            ran += 1
        elapsed = time.perf_counter() - started
    finally:
        huey.flush()
    if ran != jobs:
        raise BenchError(f"the queue at {url.split(':')[0]} ran {ran} of {jobs} jobs")
    return jobs / elapsed


# -- the database and the events --------------------------------------------------------------


@contextlib.contextmanager
def database(workdir: Path) -> Iterator[tuple[str, str]]:
    url = os.environ.get("BENCH_DATABASE_URL", "").strip()
    if not url:
        path = workdir / "bench.sqlite3"
        yield f"sqlite:///{path}", "SQLite (temporary file)"
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(url)
    schema = f"verity_bench_{os.getpid()}_{secrets.token_hex(3)}"
    engine = create_engine(base)
    try:
        with engine.begin() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
        try:
            scoped = base.update_query_dict({"options": f"-csearch_path={schema}"})
            yield scoped.render_as_string(hide_password=False), f"PostgreSQL (schema {schema})"
        finally:
            with engine.begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    finally:
        engine.dispose()


def environment(database_url: str, queue_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "JOBS_QUEUE_URL": queue_url,
        "JOBS_QUEUE_NAME": f"bench-{secrets.token_hex(4)}",
        "SECRET_KEY": secrets.token_hex(32),
        "ISSUER_KEY_SECRET": secrets.token_hex(32),
        "TRUST_ALLOW_PRIVATE": "1",
        "REQUEST_LOG": "0",
        "PYTHONUNBUFFERED": "1",
    }


def flask(env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise BenchError(f"flask {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")


def make_events(env: dict[str, str], receiver_url: str, count: int) -> str:
    """An organization, its endpoint (the secret), and ``count`` committed events."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        from app import create_app
        from app.extensions import db
        from app.identity.operations import create_user
        from app.organizations.models import Plan
        from app.organizations.operations import create_organization
        from app.presentations.operations import set_status
        from app.schemas.public import PUBLIC_SCHEMAS, seed_public_schemas
        from app.verifications.models import Individual, Status, Verification
        from app.webhooks.operations import create_endpoint

        app = create_app()
        with app.app_context():
            seed_public_schemas()
            user = create_user("bench@example.com", "Bench")
            organization = create_organization(user, "Bench", Plan.PRO)
            secret = create_endpoint(
                organization, receiver_url, events=["individual.requested"]
            ).secret
            verification = Verification(
                organization_id=organization.id,
                schema_id=PUBLIC_SCHEMAS[0]["id"],
                name="Bench",
                claims=["given_name"],
            )
            db.session.add(verification)
            db.session.commit()
            for start in range(0, count, 200):
                for number in range(start, min(start + 200, count)):
                    individual = Individual(
                        verification_id=verification.id, customer_id=f"bench-{number}"
                    )
                    db.session.add(individual)
                    db.session.flush()
                    set_status(individual, Status.REQUESTED)
                db.session.commit()
            db.session.remove()
            db.engine.dispose()
        return secret
    finally:
        os.environ.clear()
        os.environ.update(saved)


# -- the figures ------------------------------------------------------------------------------


def wait_for(receiver: Receiver, count: int, worker: subprocess.Popen) -> None:
    end = time.monotonic() + DEADLINE
    while receiver.count < count:
        if worker.poll() is not None:
            raise BenchError(f"the worker exited ({worker.returncode}) after {receiver.count}")
        if time.monotonic() > end:
            raise BenchError(f"only {receiver.count} of {count} deliveries in {DEADLINE} s")
        time.sleep(0.05)


def deliveries_per_second(
    env: dict[str, str], receiver: Receiver, count: int, threads: int
) -> float:
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "wsgi",
            "jobs",
            "worker",
            "--delivery-threads",
            str(threads),
        ],
        cwd=ROOT,
        # Every event is one organization's: let it use every delivery thread.
        env={**env, "WEBHOOK_DELIVERIES_PER_ORGANIZATION": str(threads)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(receiver, count, worker)
    finally:
        stop_group(worker)
    if receiver.bad:
        raise BenchError(f"{receiver.bad} deliveries failed their signature check")
    if len(receiver.ids) != count:
        raise BenchError(f"{count} deliveries carried {len(receiver.ids)} distinct webhook-ids")
    return (receiver.count - 1) / (receiver.last - receiver.first)


def plain_posts_per_second(receiver: Receiver, count: int, threads: int) -> float:
    """The same number of POSTs, a new connection each, from ``threads`` threads."""
    body = json.dumps({"type": "individual.requested", "data": {"id": "x" * 36}}).encode()
    port = receiver.server.server_address[1]
    share = [count // threads + (1 if n < count % threads else 0) for n in range(threads)]

    def post(times: int) -> None:
        for _ in range(times):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("POST", "/hooks", body, {"Content-Type": "application/json"})
            connection.getresponse().read()
            connection.close()

    receiver.reset()
    pool = [threading.Thread(target=post, args=(times,)) for times in share]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    if receiver.count != count:
        raise BenchError(f"the baseline got {receiver.count} of {count} answers")
    return (receiver.count - 1) / (receiver.last - receiver.first)


def run() -> Figures:
    count = setting("BENCH_DELIVERIES", 2000)
    threads = setting("BENCH_WORKER_THREADS", 4)
    queue_jobs = setting("BENCH_QUEUE_JOBS", 5000)
    redis_url = os.environ.get("BENCH_REDIS_URL", "").strip()
    with tempfile.TemporaryDirectory(prefix="verity-bench-") as tmp:
        workdir = Path(tmp)
        sqlite_queue = f"sqlite:///{workdir / 'queue.sqlite3'}"
        queue = {"huey-sqlite": queue_throughput(sqlite_queue, queue_jobs, workdir)}
        if redis_url:
            queue["huey-redis"] = queue_throughput(redis_url, queue_jobs, workdir)
        receiver = Receiver()
        try:
            with database(workdir) as (database_url, shown):
                queue_url = redis_url or f"sqlite:///{workdir / 'jobs.sqlite3'}"
                env = environment(database_url, queue_url)
                flask(env, "db", "upgrade")
                receiver.secret = make_events(env, receiver.url, count)
                per_second = deliveries_per_second(env, receiver, count, threads)
                if redis_url:
                    from app.jobs import QUEUES
                    from app.jobs.queue import build_huey

                    for name in QUEUES:
                        build_huey({**env, "JOBS_QUEUE_URL": redis_url}, name).flush()
            receiver.secret = None
            baseline = plain_posts_per_second(receiver, count, threads)
        finally:
            receiver.close()
    return Figures(count, threads, per_second, baseline, queue, shown)


def report(figures: Figures) -> str:
    lines = [
        f"webhook deliveries ({figures.database}, worker threads {figures.threads}, "
        f"{figures.deliveries} events)",
        "| figure | per second | baseline | ratio |",
        "| --- | --- | --- | --- |",
        f"| deliver | {figures.per_second:.0f} | {figures.baseline_per_second:.0f} plain POSTs "
        f"| {figures.ratio:.2f}x |",
        "",
        "queue alone: no-op jobs enqueued and run per second, one thread",
    ]
    lines += [f"  {name}: {rate:.0f}/s" for name, rate in figures.queue.items()]
    return "\n".join(lines)


def main() -> int:
    try:
        figures = run()
    except BenchError as exc:
        print(f"bench/delivering.py: {exc}", file=sys.stderr)
        return 1
    print(report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
