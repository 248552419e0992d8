"""The person's page under load: p50 and p99 latency and errors with locust (``make bench-load``).

It builds a throwaway database (SQLite; PostgreSQL with ``BENCH_DATABASE_URL``, in a schema of
its own), seeds it with the operator commands and the HTTP API (a PRO organization and a
verification any ``did:jwk`` issuer can answer), starts gunicorn as ``make run`` does and runs
bench/load/locustfile.py headless: ``BENCH_LOAD_USERS`` people (1000) arrive at
``BENCH_LOAD_SPAWN_RATE`` a second (20), each opens the person's page and polls it every 2 s,
and ``BENCH_LOAD_PRESENTING`` percent of them (10) present through the bench's wallet. Requests
are counted from ``BENCH_LOAD_SETTLE`` seconds (10) after the last person arrived, for
``BENCH_LOAD_SECONDS`` (60). Other settings: ``BENCH_WORKERS`` (gunicorn workers, 2) and
``BENCH_LOAD_NGINX=1`` (the people reach gunicorn through nginx with deploy/nginx's
configuration, as in production, instead of directly).

The target: p99 under 100 ms and no error, on 2 cores. It is a report: the exit status is 0
whether or not the target is met, and non-zero only when the benchmark itself could not run.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # bench/run.py imports its neighbours directly

from bench import run as bench  # noqa: E402
from deploy import cluster  # noqa: E402

LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"
TARGET_P99_MS = 100.0
GRACE = 30  # seconds locust may take beyond the planned run before it is stopped


@dataclass(frozen=True)
class LoadSettings:
    users: int
    spawn_rate: int
    settle: int
    seconds: int
    presenting: int  # percent
    workers: int
    database_url: str
    through_nginx: bool

    @classmethod
    def from_environment(cls) -> LoadSettings:
        presenting = bench.setting("BENCH_LOAD_PRESENTING", 10, minimum=0)
        if presenting > 100:
            raise bench.BenchError("BENCH_LOAD_PRESENTING is a percentage: at most 100")
        return cls(
            users=bench.setting("BENCH_LOAD_USERS", 1000),
            spawn_rate=bench.setting("BENCH_LOAD_SPAWN_RATE", 20),
            settle=bench.setting("BENCH_LOAD_SETTLE", 10, minimum=0),
            seconds=bench.setting("BENCH_LOAD_SECONDS", 60),
            presenting=presenting,
            workers=bench.setting("BENCH_WORKERS", 2),
            database_url=os.environ.get("BENCH_DATABASE_URL", "").strip(),
            through_nginx=os.environ.get("BENCH_LOAD_NGINX", "0") == "1",
        )

    @property
    def ramp(self) -> int:
        return -(-self.users // self.spawn_rate)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run_locust(settings: LoadSettings, base: str, verification_id: str, workdir: Path) -> dict:
    report = workdir / "locust.json"
    env = {
        **os.environ,
        "LOAD_VERIFICATION_ID": verification_id,
        "LOAD_PRESENTING": str(settings.presenting),
        "LOAD_SETTLE": str(settings.settle),
        "LOAD_REPORT": str(report),
    }
    planned = settings.ramp + settings.settle + settings.seconds
    command = [
        str(bench.BIN / "locust"),
        "-f",
        str(LOCUSTFILE),
        "--headless",
        "--only-summary",
        "--users",
        str(settings.users),
        "--spawn-rate",
        str(settings.spawn_rate),
        "--run-time",
        f"{planned}s",
        "--stop-timeout",
        "5",
        "--host",
        base,
        "--loglevel",
        "WARNING",
    ]
    log_path = workdir / "locust.log"
    try:
        with log_path.open("wb") as log:
            done = subprocess.run(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=planned + GRACE
            )
    except subprocess.TimeoutExpired:
        raise bench.BenchError(f"locust did not finish in {planned + GRACE} s") from None
    except FileNotFoundError:
        raise bench.BenchError("locust is missing: pip install -e '.[bench]'") from None
    # locust exits 1 when a request failed: that is a result, reported below.
    if done.returncode not in (0, 1) or not report.exists():
        tail = log_path.read_text(errors="replace")[-3000:]
        raise bench.BenchError(f"locust exited {done.returncode}:\n{tail}")
    counted = json.loads(report.read_text())
    if not counted["latencies_ms"]:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise bench.BenchError(
            f"no request was counted (all people arrived after "
            f"{counted['all_arrived_after']} s of {planned} s):\n{tail}"
        )
    return counted


def show(counted: dict, settings: LoadSettings, cpu: dict[str, float | None]) -> None:
    latencies: dict[str, list[float]] = counted["latencies_ms"]
    errors: dict[str, list[str]] = counted["errors"]
    seconds = counted["seconds"] or 1
    every = [value for values in latencies.values() for value in values]
    print(f"\n{'request':<42} {'count':>7} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    rows = [*sorted(latencies.items()), ("all", every)]
    for name, values in rows:
        failed = len(errors.get(name, [])) if name != "all" else sum(map(len, errors.values()))
        print(
            f"{name:<42} {len(values):>7} {len(values) / seconds:>7.1f} "
            f"{percentile(values, 0.5):>8.1f} {percentile(values, 0.99):>8.1f} {failed:>7}"
        )
    failed = sum(map(len, errors.values()))
    for name, messages in sorted(errors.items()):
        print(f"  {name}: {len(messages)} errors, e.g. {messages[0]}")
    p99 = percentile(every, 0.99)
    verdict = "met" if p99 < TARGET_P99_MS and failed == 0 else "NOT met"
    print(
        f"\n{counted['verified']} presentations verified, {counted['arrived']} pages opened "
        f"in the whole run; all people had arrived after {counted['all_arrived_after']:.0f} s; "
        f"counted {seconds:.0f} s."
    )
    print(
        f"CPU over the whole locust run: gunicorn {cpu['server']:.0%} of a core "
        f"({cpu['server_seconds'] * 1000 / max(1, counted['requests']):.2f} ms per request), "
        f"locust {cpu['locust']:.0%}"
        + (f", nginx {cpu['nginx']:.0%}" if cpu["nginx"] is not None else "")
        + f"; the machine has {os.cpu_count()} cores, load average "
        f"{cpu['load_before']:.1f} before the run and {cpu['load_after']:.1f} at its end."
    )
    print(
        f"target: p99 < {TARGET_P99_MS:.0f} ms and 0 errors: {verdict} "
        f"(p50 {percentile(every, 0.5):.1f} ms, p99 {p99:.1f} ms, {failed} errors)"
    )


def front(settings: LoadSettings, server: bench.Server, workdir: Path) -> cluster.Nginx | None:
    """With BENCH_LOAD_NGINX=1, nginx in front of gunicorn as in production (deploy/nginx)."""
    if not settings.through_nginx:
        return None
    listen = f"127.0.0.1:{bench.free_port()}"
    config = cluster.write_nginx_config(
        cluster.nginx_prefix(), listen, [f"127.0.0.1:{server.port}"]
    )
    try:
        return cluster.start_nginx(config, listen, workdir / "nginx.log")
    except cluster.ClusterError as exc:
        raise bench.BenchError(f"BENCH_LOAD_NGINX=1: {exc}") from None


def measure(settings: LoadSettings, database_url: str, workdir: Path) -> None:
    env = bench.server_environment(database_url)
    # make bench keeps one link for its whole run; here each page's link is renewed on the
    # service's own schedule, and every renewal draws a new QR code.
    for name in ("CONNECT_LINK_SECONDS", "PRESENTATION_REQUEST_SECONDS"):
        env.pop(name, None)
    if settings.through_nginx:
        env["TRUSTED_PROXY_COUNT"] = "1"
    token = bench.prepare_database(env)
    server = bench.Server(env, settings.workers, workdir / "gunicorn.log")
    proxy: cluster.Nginx | None = None
    try:
        server.wait_ready()
        proxy = front(settings, server, workdir)
        base = proxy.base if proxy else server.base
        verification_id = bench.seed_presentations(base, token)
        print(
            f"server:   gunicorn, {settings.workers} sync workers on {server.base}; "
            "request logging off (REQUEST_LOG=0)"
            + (f"; nginx in front on {proxy.base} (deploy/nginx)" if proxy else "; no proxy")
        )
        print(
            f"load:     locust, {settings.users} people arriving {settings.spawn_rate}/s, "
            f"each page polling every 2 s, {settings.presenting}% presenting; counted "
            f"{settings.seconds} s from {settings.settle} s after the last arrived",
            flush=True,
        )
        server_cpu = bench.server_cpu_seconds(server.process.pid) or 0.0
        proxy_cpu = (bench.server_cpu_seconds(proxy.process.pid) or 0.0) if proxy else 0.0
        client_cpu = children_cpu_seconds()
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        counted = run_locust(settings, base, verification_id, workdir)
        elapsed = time.monotonic() - started
        server_seconds = (bench.server_cpu_seconds(server.process.pid) or 0.0) - server_cpu
        cpu = {
            "server": server_seconds / elapsed,
            "server_seconds": server_seconds,
            "locust": (children_cpu_seconds() - client_cpu) / elapsed,
            "nginx": ((bench.server_cpu_seconds(proxy.process.pid) or 0.0) - proxy_cpu) / elapsed
            if proxy
            else None,
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
        }
    finally:
        if proxy:
            proxy.stop()
            shutil.rmtree(proxy.prefix, ignore_errors=True)
        server.stop()
    if server.process.returncode not in (0, -signal.SIGTERM):
        raise bench.BenchError(f"gunicorn exited {server.process.returncode}:\n{server.log_tail()}")
    show(counted, settings, cpu)


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    try:
        settings = LoadSettings.from_environment()
    except bench.BenchError as exc:
        print(f"bench-load: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = Path(tempfile.mkdtemp(prefix="verity-bench-load-"))
    try:
        with bench.database(settings, workdir) as (database_url, described):
            print(f"database: {described}", flush=True)
            measure(settings, database_url, workdir)
    except bench.BenchError as exc:
        print(f"\nbench-load failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbench-load interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
