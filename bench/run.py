"""Throughput of the hot public and backend endpoints, and of verifying presentations, each
as a ratio to a baseline measured in the same run.

``make bench`` (or ``.venv/bin/python bench/run.py``) first measures the SD-JWT verifier in
process: strict SD-JWT VC + key binding verifications with ``app.sdjwt`` over two raw ES256
verifications with ``cryptography`` (the floor), interleaved. It then builds a throwaway
database, seeds it with the operator commands and the HTTP API, starts gunicorn (2 workers) on
a free loopback port and drives four endpoints with wrk:

* ``GET /healthz`` (the baseline: no database), measured before and after the others;
* ``GET /verifications/{individual_id}/verify`` (the status poll);
* ``GET /verifications/{verification_id}/individuals/{customer_id}`` with ``apikey`` (lookup);
* ``POST /verifications/individuals`` for a pair that already exists (repeated open, 200).

Last, client processes (``bench/presenting.py``) make whole presentations over HTTP: the
connect link of a fresh individual, its request object, a key binding JWT for its nonce, and
the ``direct_post`` response; their baseline is ``GET /healthz`` driven by the same client.
Then the same clients make whole issuances (``bench/receiving.py``): token, nonce and credential
requests of OpenID4VCI 1.0 for offers made beforehand, over the same baseline (no target).

Settings, all optional: ``BENCH_DATABASE_URL`` (PostgreSQL; a schema of its own is created and
dropped), ``BENCH_SECONDS`` (measured seconds per run, 8), ``BENCH_WARMUP`` (2),
``BENCH_ROUNDS`` (2), ``BENCH_CONNECTIONS`` (8), ``BENCH_THREADS`` (2), ``BENCH_WORKERS`` (2),
``BENCH_CLIENTS`` (client processes of the presentation load, 4), ``BENCH_INPROCESS_ROUNDS``
(15).

It is a report: the exit status is 0 whether or not the targets are met, and non-zero only
when the benchmark itself could not run (a failed command, an error response, a socket error).
See bench/README.md for how to read the table.
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import http.client
import json
import math
import multiprocessing
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import didcomm
import issuing
import mdoc
import presenting
import receiving

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"
BIN = Path(sys.executable).parent
WRK = shutil.which("wrk") or "/usr/bin/wrk"
SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"
EMAIL = "bench@example.com"
COMMAND_TIMEOUT = 180  # seconds for one flask command
START_TIMEOUT = 60  # seconds for gunicorn to answer /healthz
HTTP_TIMEOUT = 10  # seconds for one set-up request
STOP_TIMEOUT = 15  # seconds for gunicorn to stop after SIGTERM

# The project's targets: the minimum of each figure as a fraction of its baseline in the same
# run. poll, lookup and open are over /healthz with wrk; sdjwt is over two raw ES256
# verifications in process; present is over /healthz driven by the same Python client; signing
# (SD-JWT VCs issued in process) is over one raw ES256 signature.
TARGETS = {
    "healthz": 0.85,  # over the bare Flask app (bench/bare.py) under the same gunicorn
    "pagepoll": 0.8,
    "page": 0.4,
    "poll": 0.8,
    "lookup": 0.7,
    "open": 0.5,
    "sdjwt": 0.6,
    "present": 0.4,  # over healthz / 3: a presentation is three requests
    "million": 0.7,  # the lookup on PostgreSQL with 1,000,000 individuals
    "signing": 0.5,
    "mdoc": 0.5,  # over the three raw ES256 verifications of an mdoc (issuer, device, chain)
    "isomdoc": 0.5,  # over one HPKE open plus those three verifications (org-iso-mdoc)
    "didcomm": 0.5,  # over the raw crypto of one DIDComm presentation (bench/didcomm.py)
}
# Figures reported with no target: whole issuances over HTTP, over healthz by the same client.
UNTARGETED = {"issue", "authcode", "batch", "metered", "mdocfirst"}


class BenchError(Exception):
    """The benchmark could not run; the message says what broke."""


def setting(name: str, default: int, minimum: int = 1) -> int:
    raw = os.environ.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BenchError(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum:
        raise BenchError(f"{name} must be at least {minimum}")
    return value


@dataclass(frozen=True)
class Settings:
    seconds: int
    warmup: int
    rounds: int
    connections: int
    threads: int
    workers: int
    clients: int
    inprocess_rounds: int
    database_url: str
    pg_url: str  # PostgreSQL for the lookup among a million individuals, after a SQLite run
    million: int  # individuals of that step
    million_only: bool  # run that step alone (make bench-pg)

    @classmethod
    def from_environment(cls) -> Settings:
        return cls(
            seconds=setting("BENCH_SECONDS", 8),
            warmup=setting("BENCH_WARMUP", 2, minimum=0),
            rounds=setting("BENCH_ROUNDS", 2),
            connections=setting("BENCH_CONNECTIONS", 8),
            threads=setting("BENCH_THREADS", 2),
            workers=setting("BENCH_WORKERS", 2),
            clients=setting("BENCH_CLIENTS", 4),
            inprocess_rounds=setting("BENCH_INPROCESS_ROUNDS", 15),
            database_url=os.environ.get("BENCH_DATABASE_URL", "").strip(),
            pg_url=os.environ.get("BENCH_PG_URL", "").strip(),
            million=setting("BENCH_MILLION", 1_000_000),
            million_only=False,
        )


# -- the database --------------------------------------------------------------------------


@contextlib.contextmanager
def database(
    settings: Settings, workdir: Path, url: str | None = None
) -> Iterator[tuple[str, str]]:
    """Yield ``(DATABASE_URL, description)`` for a database that exists only for this run."""
    url = settings.database_url if url is None else url
    if not url:
        path = workdir / "bench.sqlite3"
        yield f"sqlite:///{path}", f"SQLite (temporary file {path})"
        return  # the file goes with the work directory
    if not url.startswith("postgresql"):
        raise BenchError("BENCH_DATABASE_URL must be a postgresql:// or postgresql+driver:// URL")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(url)
    schema = f"verity_bench_{os.getpid()}_{secrets.token_hex(3)}"
    engine = create_engine(base, connect_args={"connect_timeout": 10})
    try:
        with engine.begin() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
        try:
            url = base.update_query_dict({"options": f"-csearch_path={schema}"})
            shown = f"PostgreSQL {base.render_as_string(hide_password=True)} (schema {schema})"
            yield url.render_as_string(hide_password=False), shown
        finally:
            with engine.begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    finally:
        engine.dispose()


def server_environment(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": secrets.token_hex(32),
            "REQUEST_LOG": "0",
            "PYTHONUNBUFFERED": "1",
            "METRICS_TOKEN": "",  # the default: nothing counted (the metered server sets one)
            # The person's page keeps one link for the whole run, so its poll measures the
            # common case: nothing changed (a new link every two minutes is one 200 in 60).
            "CONNECT_LINK_SECONDS": "3600",
            "PRESENTATION_REQUEST_SECONDS": "3600",
            # Every client process of the issuance load comes from 127.0.0.1 to one issuer:
            # the nonce throttle (60 a minute per address and issuer by default) would answer
            # 429 within a second. A budget no run reaches keeps its check in the measured
            # cost without a refusal.
            "ISSUER_NONCE_LIMIT": "10000000/minute",
        }
    )
    return env


def flask(env: dict[str, str], *args: str) -> str:
    command = [str(BIN / "flask"), "--app", "wsgi", *args]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{' '.join(args)} took over {COMMAND_TIMEOUT} s") from None
    if done.returncode != 0:
        raise BenchError(
            f"flask {' '.join(args)} exited {done.returncode}:\n{done.stderr.strip()[-2000:]}"
        )
    return done.stdout


def flask_json(env: dict[str, str], *args: str) -> dict[str, Any]:
    out = flask(env, *args)
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        raise BenchError(f"flask {' '.join(args)} printed no JSON:\n{out[-2000:]}") from None


def prepare_database(env: dict[str, str]) -> str:
    """Migrate, seed the public schemas, and create a user in a PRO organization; its token."""
    flask(env, "db", "upgrade")
    flask(env, "schemas", "seed")
    flask_json(env, "users", "create", "--email", EMAIL)
    flask_json(env, "orgs", "create", "--name", "Bench", "--owner-email", EMAIL, "--plan", "PRO")
    return str(flask_json(env, "tokens", "create", "--email", EMAIL)["token"])


# -- the server ----------------------------------------------------------------------------


def stop_group(process: subprocess.Popen, grace: float = 30) -> None:
    """SIGTERM to a process started in a session of its own, and its children; SIGKILL after
    ``grace`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """gunicorn in a process group of its own, so stopping it stops its workers too."""

    def __init__(
        self, env: dict[str, str], workers: int, log_path: Path, app: str = "wsgi:app"
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--pythonpath",
                str(BENCH_DIR),
                app,
            ],
            cwd=ROOT,
            # As make run: the address served is the public URL.
            env={**env, "PUBLIC_URL": self.base},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log_tail(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")[-3000:]

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BenchError(
                    f"gunicorn exited {self.process.returncode} on start:\n{self.log_tail()}"
                )
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.base}/healthz", timeout=2) as response,
            ):
                if response.status == 200:
                    return
            time.sleep(0.2)
        raise BenchError(
            f"gunicorn did not answer /healthz in {START_TIMEOUT} s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_TIMEOUT)
        self._log.close()


def call(
    base: str,
    method: str,
    path: str,
    expected: int,
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}", data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except OSError as exc:
        raise BenchError(f"{method} {path}: {exc}") from None
    if status != expected:
        raise BenchError(f"{method} {path} answered {status}, not {expected}: {raw[:500]!r}")
    return json.loads(raw) if raw else {}


@dataclass(frozen=True)
class Endpoint:
    key: str
    label: str
    path: str
    headers: tuple[str, ...] = ()
    script_args: tuple[str, ...] = ()
    # HTTP requests one operation makes: its ratio is over baseline / requests.
    requests: int = 1
    # Which server it is driven against: the service, the bare Flask app (bare), or the
    # service with its metrics on (metered).
    server: str = "service"


def fetch(base: str, path: str) -> tuple[int, str]:
    """``(status, body)`` of a GET that may answer a page or nothing."""
    try:
        with urllib.request.urlopen(f"{base}{path}", timeout=HTTP_TIMEOUT) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except OSError as exc:
        raise BenchError(f"GET {path}: {exc}") from None


def seed_over_http(base: str, token: str) -> tuple[list[Endpoint], str]:
    """A verification, an integration key and a REQUESTED individual; the endpoints to drive
    and the verification's ID."""
    session = {"Authorization": f"Bearer {token}"}
    verification = call(
        base,
        "POST",
        "/verifications",
        201,
        {
            "name": "Bench",
            "schema_id": SCHEMA_ID,
            "claims": ["given_name"],
            "attributes": [{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
        },
        session,
    )
    key = call(base, "POST", "/integrations", 201, {"name": "bench"}, session)["key"]
    customer_id = "bench-customer-1"
    pair = {"customer_id": customer_id, "verification_id": verification["id"]}
    individual = call(base, "POST", "/verifications/individuals", 201, pair)
    individual_id = individual["id"]
    call(base, "GET", f"/verifications/{individual_id}/connect", 200)

    # Every request wrk will send, once by hand: the right status, and the expected state.
    poll = call(base, "GET", f"/verifications/{individual_id}/verify", 200)
    if poll.get("status") != "REQUESTED":
        raise BenchError(f"the individual is {poll.get('status')}, not REQUESTED")
    lookup_path = f"/verifications/{verification['id']}/individuals/{customer_id}"
    call(base, "GET", lookup_path, 200, headers={"apikey": key})
    reopened = call(base, "POST", "/verifications/individuals", 200, pair)
    if reopened.get("id") != individual_id:
        raise BenchError("the repeated open returned another individual")
    call(base, "GET", "/healthz", 200)

    # The person's page as a browser sees it: the full page, then the poll its status region
    # makes (the address it polls says what the page shows, so an unchanged one is a 204).
    page_path = f"/i/{individual_id}"
    status, page = fetch(base, page_path)
    if status != 200:
        raise BenchError(f"GET {page_path} answered {status}, not 200")
    found = re.search(r'hx-get="([^"]+/status\?[^"]+)"', page)
    if found is None:
        raise BenchError(f"GET {page_path} has no polling status region")
    page_poll_path = html.unescape(found.group(1))
    status, _ = fetch(base, page_poll_path)
    if status != 204:
        raise BenchError(f"the page's poll {page_poll_path} answered {status}, not 204")

    endpoints = [
        Endpoint(
            "pagepoll",
            "pagepoll GET /i/{iid}/status (204, nothing changed)",
            page_poll_path,
        ),
        Endpoint("page", "page    GET /i/{iid} (full page, QR code)", page_path),
        Endpoint(
            "poll",
            "poll    GET /verifications/{iid}/verify",
            f"/verifications/{individual_id}/verify",
        ),
        Endpoint(
            "lookup",
            "lookup  GET /verifications/{vid}/individuals/{cid}",
            lookup_path,
            headers=(f"apikey: {key}",),
        ),
        Endpoint(
            "open",
            "open    POST /verifications/individuals (again)",
            "/verifications/individuals",
            script_args=(json.dumps(pair),),
        ),
    ]
    return endpoints, str(verification["id"])


# -- wrk ----------------------------------------------------------------------------------

HEALTHZ = Endpoint("healthz", "healthz GET /healthz (no database)", "/healthz")
BARE = Endpoint("bare", "bare    GET /healthz of a bare Flask app", "/healthz", server="bare")
METERED = Endpoint(
    "metered", "metered GET /healthz, METRICS_TOKEN set (counted)", "/healthz", server="metered"
)
UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


@dataclass(frozen=True)
class Run:
    requests_per_second: float
    requests: int
    p50_ms: float
    p99_ms: float
    cpu_ms: float | None = None  # gunicorn's own CPU time per request (Linux only)


def duration_ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    if match is None:
        raise BenchError(f"unreadable wrk latency {text!r}")
    return float(match.group(1)) * UNITS_MS[match.group(2)]


def parse_wrk(output: str, what: str) -> Run:
    errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    if errors and any(int(n) for n in errors.groups()):
        raise BenchError(f"wrk saw socket errors on {what} ({errors.group(0)}):\n{output}")
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if non_2xx and int(non_2xx.group(1)):
        raise BenchError(f"wrk saw {non_2xx.group(1)} error responses on {what}:\n{output}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in", output)
    p50 = re.search(r"^\s*50%\s+(\S+)", output, re.MULTILINE)
    p99 = re.search(r"^\s*99%\s+(\S+)", output, re.MULTILINE)
    if not (rate and total and p50 and p99):
        raise BenchError(f"unreadable wrk output for {what}:\n{output}")
    if int(total.group(1)) == 0:
        raise BenchError(f"wrk completed no request on {what}:\n{output}")
    return Run(
        float(rate.group(1)),
        int(total.group(1)),
        duration_ms(p50.group(1)),
        duration_ms(p99.group(1)),
    )


def wrk(settings: Settings, base: str, endpoint: Endpoint, seconds: int) -> Run:
    command = [
        WRK,
        f"-t{settings.threads}",
        f"-c{settings.connections}",
        f"-d{seconds}s",
        "--timeout",
        "5s",
        "--latency",
    ]
    for header in endpoint.headers:
        command += ["-H", header]
    if endpoint.script_args:
        command += ["-s", str(BENCH_DIR / "post_open.lua")]
    command += [f"{base}{endpoint.path}", *endpoint.script_args]
    what = f"{endpoint.key} ({seconds} s)"
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + 60, check=False
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"wrk on {what} did not finish in {seconds + 60} s") from None
    except FileNotFoundError:
        raise BenchError("wrk is not installed: apt-get install -y wrk") from None
    if done.returncode != 0:
        raise BenchError(f"wrk on {what} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return parse_wrk(done.stdout, what)


def server_cpu_seconds(master_pid: int) -> float | None:
    """User plus system CPU time used so far by gunicorn's master and its workers.

    Read from /proc, so Linux only (None elsewhere). Unlike req/s it hardly moves when other
    programs share the machine: it is what one request costs the server itself.
    """
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    ticks = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # the process ended meanwhile
        # Fields after "(comm)": state, ppid, ... utime and stime are the 12th and 13th.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(entry.name) == master_pid or int(fields[1]) == master_pid:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def with_cpu(run: Run, cpu_before: float | None, cpu_after: float | None) -> Run:
    if cpu_before is None or cpu_after is None:
        return run
    return dataclasses.replace(run, cpu_ms=(cpu_after - cpu_before) * 1000 / run.requests)


def show(key: str, run: Run, unit: str = "req") -> None:
    cpu = f"  server CPU {run.cpu_ms:.2f} ms/{unit}" if run.cpu_ms is not None else ""
    print(
        f"  {key:<8} {run.requests_per_second:>9.1f} {unit}/s"
        f"  p50 {run.p50_ms:7.2f} ms  p99 {run.p99_ms:7.2f} ms{cpu}",
        flush=True,
    )


def measure(
    settings: Settings, server: Server, endpoint: Endpoint, others: dict[str, Server] | None = None
) -> Run:
    server = (others or {}).get(endpoint.server, server)
    if settings.warmup:
        wrk(settings, server.base, endpoint, settings.warmup)
    cpu_before = server_cpu_seconds(server.process.pid)
    run = wrk(settings, server.base, endpoint, settings.seconds)
    run = with_cpu(run, cpu_before, server_cpu_seconds(server.process.pid))
    show(endpoint.key, run)
    return run


def wrk_schedule(endpoints: list[Endpoint], rounds: int) -> list[Endpoint]:
    """Like ``schedule``, with the bare app's healthz and the metered one next to every run of
    the service's: ``bare healthz metered | endpoints | metered healthz bare | ...``."""
    slot = [BARE, HEALTHZ, METERED]
    order = list(slot)
    for number in range(rounds):
        order += endpoints if number % 2 == 0 else list(reversed(endpoints))
        order += list(reversed(slot)) if number % 2 == 0 else slot
    return order


def schedule(
    endpoints: list[Endpoint], rounds: int, baseline: Endpoint | None = None
) -> list[Endpoint]:
    """The baseline (healthz) first and after every round; the order of the others reverses
    each round."""
    baseline = baseline or HEALTHZ
    order = [baseline]
    for number in range(rounds):
        order += endpoints if number % 2 == 0 else list(reversed(endpoints))
        order.append(baseline)
    return order


# -- the SD-JWT verifier in process --------------------------------------------------------

FLOOR = Endpoint("floor", "floor  2 x ES256 verify (cryptography)", "")
SDJWT = Endpoint("sdjwt", "sdjwt  parse + verify_presentation (SD-JWT VC+KB)", "")
SIGN_FLOOR = Endpoint("floor", "floor    1 x ES256 sign (cryptography)", "")
MDOC_FLOOR = Endpoint("floor", "floor  3 x ES256 verify (cryptography)", "")
MDOC = Endpoint("mdoc", "mdoc   verify_device_response (mso_mdoc, 6 elements)", "")
MDOC_FIRST = Endpoint("mdocfirst", "mdoc   the same, a document signer not seen before", "")
ISO_MDOC_FLOOR = Endpoint("floor", "floor  HPKE open + 3 x ES256 verify", "")
ISO_MDOC = Endpoint("isomdoc", "isomdoc  open + verify an org-iso-mdoc response", "")
DIDCOMM_FLOOR = Endpoint("floor", "floor  2 x X25519 + AES + 2 x ES256K verify", "")
DIDCOMM = Endpoint("didcomm", "didcomm  open + verify a DIDComm presentation", "")
SIGNING = Endpoint("signing", "signing  sign_sd_jwt_vc (SD-JWT VC, 6 disclosures)", "")
INPROCESS_SLICE = 0.25  # CPU seconds of each slice


def measure_in_process(settings: Settings) -> presenting.InProcess:
    """``floor | sdjwt | floor | ... | floor`` in this process, before the server starts."""
    floor, verify = presenting.in_process_operations()
    try:
        floor()
        verified = verify()
    except Exception as exc:
        raise BenchError(f"the verifier refused the bench's presentation: {exc}") from None
    if getattr(verified, "claims", {}).get("given_name") != presenting.PERSON["given_name"]:
        raise BenchError("the verifier did not return the disclosed claims")
    measured = presenting.in_process_rounds(settings.inprocess_rounds, INPROCESS_SLICE)
    rates = ", ".join(f"{s.ops_per_second:.0f}" for s in measured.verify)
    floors = ", ".join(f"{s.ops_per_second:.0f}" for s in measured.floor)
    print(f"  floor    ops/s per round: {floors}")
    print(f"  sdjwt    ops/s per round: {rates}", flush=True)
    return measured


# -- presentations over HTTP, and healthz by the same client -------------------------------

CLIENT_HEALTHZ = Endpoint("healthz", "healthz GET /healthz (same Python client)", "/healthz")
PRESENT = Endpoint(
    "present",
    "present connect, request object, KB-JWT, direct_post",
    "/oid4vp/responses",
    requests=3,
)
MARGIN = 1.5  # individuals ready for a run: this many times what the last rate would use
START_DELAY = 0.5  # seconds between handing out the jobs and the start of the run


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class SingleUseLoad:
    """Client processes that drive the server with healthz or with whole flows (``whole``)
    that each use up something of their own, made ahead of each run (not measured): enough for
    the last rate seen with a margin; a measured run that runs out is run again with twice as
    many. Subclasses say what is used up and how a client process runs its job."""

    whole: Endpoint
    unit: str
    used_up: str

    def __init__(self, settings: Settings, server: Server, pool: Any) -> None:
        self.settings = settings
        self.server = server
        self.pool = pool
        self.free: list[str] = []
        self.rate: float | None = None  # whole flows per second of the last run

    def replenish(self, wanted: int) -> None:
        raise NotImplementedError

    def job(self, endpoint: Endpoint, start_at: float, seconds: int, share: tuple, n: int) -> Any:
        raise NotImplementedError

    # The module-level function a client process runs (what the pool pickles).
    run_job_in_client: Callable[[Any], Any]

    def after_measured(self, outcomes: list[Any], shares: list[tuple[str, ...]]) -> None:
        """Checks on a sample of what a measured run used (none by default)."""

    def run(self, endpoint: Endpoint, seconds: int, measured: bool) -> Run:
        for _attempt in range(3):
            outcome = self._attempt(endpoint, seconds, measured)
            if outcome is not None:
                return outcome
            self.rate = 2 * (self.rate or 1.0)
        raise BenchError(f"the {self.whole.key} load kept running out of {self.used_up}")

    def _attempt(self, endpoint: Endpoint, seconds: int, measured: bool) -> Run | None:
        clients = self.settings.clients
        shares: list[tuple[str, ...]] = [()] * clients
        if endpoint is self.whole:
            self.replenish(math.ceil((self.rate or 50.0) * seconds * MARGIN) + 4 * clients)
            share = len(self.free) // clients
            shares = [tuple(self.free[n * share : (n + 1) * share]) for n in range(clients)]
        start_at = time.monotonic() + START_DELAY
        jobs = [self.job(endpoint, start_at, seconds, shares[n], n) for n in range(clients)]
        cpu_before = server_cpu_seconds(self.server.process.pid)
        outcomes = self.pool.map(type(self).run_job_in_client, jobs, chunksize=1)
        cpu_after = server_cpu_seconds(self.server.process.pid)
        errors = [o.error for o in outcomes if o.error]
        if errors:
            raise BenchError(f"the {endpoint.key} load failed: {errors[0]}")
        used = {i for o, mine in zip(outcomes, shares, strict=True) for i in mine[: o.used]}
        self.free = [i for i in self.free if i not in used]
        completed = sum(o.completed for o in outcomes)
        if completed == 0:
            raise BenchError(f"the {endpoint.key} load completed nothing in {seconds} s")
        if endpoint is self.whole:
            self.rate = completed / seconds
            if any(o.exhausted for o in outcomes):
                if measured:
                    return None  # run again with more made ahead
                self.rate *= 2  # a warm-up that ran short: its rate is too low
            if measured:
                self.after_measured(outcomes, shares)
        elif self.rate is None:
            # A whole flow is three requests, each dearer than healthz: a generous first guess.
            self.rate = completed / seconds / 3
        latencies = [ms for o in outcomes for ms in o.latencies_ms]
        run = Run(
            completed / seconds,
            completed,
            percentile(latencies, 0.5),
            percentile(latencies, 0.99),
        )
        return with_cpu(run, cpu_before, cpu_after)

    def measure(self, endpoint: Endpoint) -> Run:
        if self.settings.warmup:
            self.run(endpoint, self.settings.warmup, measured=False)
        run = self.run(endpoint, self.settings.seconds, measured=True)
        show(endpoint.key, run, self.unit if endpoint is self.whole else "req")
        return run


class PresentationLoad(SingleUseLoad):
    """Client processes that drive the server with healthz or whole presentations.

    Every presentation needs an individual of its own: a VERIFIED one is final and gets no new
    link. They are opened ahead of each run (not measured), enough for the last rate seen
    with a margin; a measured run that runs out is run again with twice as many.
    """

    whole = PRESENT
    unit = "pres"
    used_up = "individuals"
    run_job_in_client = staticmethod(presenting.run_job)

    def __init__(self, settings: Settings, server: Server, verification_id: str, pool: Any) -> None:
        super().__init__(settings, server, pool)
        self.verification_id = verification_id
        self.opened = 0
        # One credential per client process: a wallet presents the same credential again, with
        # a new key binding JWT for each request.
        self.credentials = [presenting.issue() for _ in range(settings.clients)]

    def replenish(self, wanted: int) -> None:
        missing = wanted - len(self.free)
        if missing <= 0:
            return
        names = [f"bench-present-{self.opened + n}" for n in range(missing)]
        self.opened += missing
        clients = self.settings.clients
        chunks = [names[n::clients] for n in range(clients)]
        args = [
            ("127.0.0.1", self.server.port, self.verification_id, chunk)
            for chunk in chunks
            if chunk
        ]
        try:
            for ids in self.pool.starmap(presenting.open_individuals, args):
                self.free.extend(ids)
        except presenting.LoadError as exc:
            raise BenchError(f"opening individuals for the presentations: {exc}") from None

    def verified(self, individual_id: str) -> None:
        status = call(self.server.base, "GET", f"/verifications/{individual_id}/verify", 200)
        if status.get("status") != "VERIFIED":
            raise BenchError(
                f"a bench presentation was not accepted: individual {individual_id} is "
                f"{status.get('status')}: {status.get('validation_error')}"
            )

    def check_by_hand(self) -> None:
        """One presentation and one healthz, from this process, before any load."""
        self.replenish(1)
        individual_id = self.free.pop()
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port)
        try:
            presenting.present_once(connection, individual_id, self.credentials[0])
        except presenting.LoadError as exc:
            raise BenchError(f"a presentation by hand failed: {exc}") from None
        finally:
            connection.close()
        self.verified(individual_id)

    def job(
        self, endpoint: Endpoint, start_at: float, seconds: int, share: tuple, n: int
    ) -> presenting.Job:
        credential = self.credentials[n] if endpoint is PRESENT else None
        return presenting.Job(
            endpoint.key, "127.0.0.1", self.server.port, start_at, seconds, share, credential
        )

    def after_measured(self, outcomes: list[Any], shares: list[tuple[str, ...]]) -> None:
        for o, mine in zip(outcomes, shares, strict=True):
            if o.used:
                for individual_id in {mine[0], mine[o.used // 2], mine[o.used - 1]}:
                    self.verified(individual_id)


def seed_presentations(base: str, token: str) -> str:
    """The verification the presentations answer: the same as the endpoints' one, with an
    empty ``trusted_issuers`` (any issuer whose key resolves and signature verifies, such as
    the bench's ``did:jwk`` issuers)."""
    verification = call(
        base,
        "POST",
        "/verifications",
        201,
        {
            "name": "Bench presentations",
            "schema_id": SCHEMA_ID,
            "claims": ["given_name"],
            "attributes": [{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
            "trusted_issuers": [],
        },
        {"Authorization": f"Bearer {token}"},
    )
    return str(verification["id"])


def measure_presentations(settings: Settings, server: Server, token: str) -> dict[str, list[Run]]:
    verification_id = seed_presentations(server.base, token)
    context = multiprocessing.get_context("fork")
    runs: dict[str, list[Run]] = {}
    with context.Pool(settings.clients, initializer=presenting.client_process_init) as pool:
        load = PresentationLoad(settings, server, verification_id, pool)
        load.check_by_hand()
        for endpoint in schedule([PRESENT], settings.rounds, CLIENT_HEALTHZ):
            runs.setdefault(endpoint.key, []).append(load.measure(endpoint))
    return runs


# -- issuances over HTTP, and healthz by the same client -----------------------------------

ISSUE = Endpoint("issue", "issue   token, nonce, credential (proof JWT)", "/issuers")
AUTHCODE = Endpoint(
    "authcode", "authcode  PAR, page, continue, token, nonce, credential (DPoP)", "/issuers"
)
BATCH = Endpoint(
    "batch",
    f"batch   token, nonce, credential ({receiving.BATCH_PROOFS} proofs: as many credentials)",
    "/issuers",
)
# The issuance flows, each reported beside the pre-authorized code flow (ISSUE).
ISSUANCE_FLOWS = [ISSUE, AUTHCODE, BATCH]


class IssuanceLoad(SingleUseLoad):
    """Client processes that drive the server with healthz or whole issuances.

    Every issuance needs an offer of its own (a pre-authorized code is single-use). Offers are
    made ahead of each run (not measured), enough for the last rate seen with a margin; a
    measured run that runs out is run again with twice as many.
    """

    whole = ISSUE
    unit = "iss"
    used_up = "offers"
    run_job_in_client = staticmethod(receiving.run_job)

    grant = receiving.PRE_AUTHORIZED_GRANT

    def __init__(
        self, settings: Settings, server: Server, token: str, pool: Any, body: dict | None = None
    ) -> None:
        super().__init__(settings, server, pool)
        self.token = token
        self.body = body or seed_issuances(server.base, token)
        offer = call(server.base, "POST", "/credentials", 201, self.body, self.headers)
        self.issuer, code = receiving.discover("127.0.0.1", server.port, offer["offer_url"])
        if self.grant == receiving.PRE_AUTHORIZED_GRANT:
            self.free.append(code)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def replenish(self, wanted: int) -> None:
        missing = wanted - len(self.free)
        if missing <= 0:
            return
        clients = self.settings.clients
        chunks = [missing // clients + (n < missing % clients) for n in range(clients)]
        args = [
            ("127.0.0.1", self.server.port, self.token, [self.body] * n, self.grant)
            for n in chunks
            if n
        ]
        try:
            for codes in self.pool.starmap(receiving.make_offers, args):
                self.free.extend(codes)
        except presenting.LoadError as exc:
            raise BenchError(f"making offers for the issuances: {exc}") from None

    def check_by_hand(self) -> None:
        """One issuance from this process, before any load: the credential must verify with
        the key the issuer publishes."""
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port)
        self.replenish(1)
        code = self.free.pop()
        try:
            if self.whole is BATCH:
                credentials = receiving.issue_batch_once(connection, self.issuer, code)
            elif self.whole is AUTHCODE:
                credentials = [receiving.authorize_once(connection, self.issuer, code)]
            else:
                credentials = [receiving.issue_once(connection, self.issuer, code)]
            for credential in credentials:
                receiving.check_credential(connection, self.issuer, credential)
        except presenting.LoadError as exc:
            raise BenchError(f"an issuance by hand failed: {exc}") from None
        finally:
            connection.close()

    def job(
        self, endpoint: Endpoint, start_at: float, seconds: int, share: tuple, n: int
    ) -> receiving.Job:
        return receiving.Job(
            endpoint.key, "127.0.0.1", self.server.port, start_at, seconds, share, self.issuer
        )


class AuthorizationCodeLoad(IssuanceLoad):
    """Whole issuances through the authorization code flow with DPoP; each uses up an
    offer's issuer_state."""

    whole = AUTHCODE
    grant = receiving.AUTHORIZATION_CODE_GRANT


class BatchLoad(IssuanceLoad):
    """Whole issuances through the pre-authorized code flow whose credential request carries
    ``receiving.BATCH_PROOFS`` proofs, so gets as many credentials."""

    whole = BATCH


def seed_issuances(base: str, token: str) -> dict[str, Any]:
    """A published schema of the bench organization and a recipient; the body that issues one
    credential of it to that recipient (a new offer on every POST)."""
    staff = {"Authorization": f"Bearer {token}"}
    key = call(base, "POST", "/integrations", 201, {"name": "bench issuance"}, staff)["key"]
    recipient = call(
        base,
        "POST",
        "/recipients",
        201,
        {"first_name": "Erika", "last_name": "Mustermann", "email": "erika@example.com"},
        {"apikey": key},
    )
    schema = call(base, "POST", "/schemas", 201, receiving.ISSUANCE_SCHEMA, staff)
    call(base, "POST", f"/schemas/{schema['id']}/publish", 200, None, staff)
    claims = {"given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26"}
    return {
        "name": "Bench credential",
        "schema_id": schema["id"],
        "recipient_id": recipient["id"],
        "claims": [{"name": name, "value": value} for name, value in claims.items()],
    }


def measure_issuances(settings: Settings, server: Server, token: str) -> dict[str, list[Run]]:
    context = multiprocessing.get_context("fork")
    runs: dict[str, list[Run]] = {}
    with context.Pool(settings.clients, initializer=presenting.client_process_init) as pool:
        load = IssuanceLoad(settings, server, token, pool)
        load.check_by_hand()
        authcode = AuthorizationCodeLoad(settings, server, token, pool, load.body)
        authcode.check_by_hand()
        batch = BatchLoad(settings, server, token, pool, load.body)
        batch.check_by_hand()
        loads = {ISSUE.key: load, AUTHCODE.key: authcode, BATCH.key: batch}
        for endpoint in schedule(ISSUANCE_FLOWS, settings.rounds, CLIENT_HEALTHZ):
            runs.setdefault(endpoint.key, []).append(
                loads.get(endpoint.key, load).measure(endpoint)
            )
    return runs


def report_issuances(runs: dict[str, list[Run]], clients: int) -> dict[str, float]:
    medians = table(CLIENT_HEALTHZ, ISSUANCE_FLOWS, runs, f"issuing ({clients} Python clients)")
    print()
    print(
        "issue: whole issuances per second (3 HTTP requests each: token, nonce, credential, "
        "plus the proof JWT the client signs; the offer is made and read beforehand, not "
        "measured); authcode: the authorization code flow with DPoP (6 requests: PAR, the "
        "authorization page, its Continue, token, nonce, credential; 3 DPoP proofs and the "
        f"key proof signed by the client); batch: the pre-authorized code flow whose credential "
        f"request carries {receiving.BATCH_PROOFS} proofs and gets {receiving.BATCH_PROOFS} "
        "credentials; healthz driven by the same client processes."
    )
    baseline_noise(runs[CLIENT_HEALTHZ.key], "healthz (Python client)")
    print()
    print("beside the pre-authorized code flow (issue), in the same rounds:")
    for endpoint in ISSUANCE_FLOWS[1:]:
        ratio = beside_pre_authorized(runs, endpoint.key)
        per_issuance = receiving.BATCH_PROOFS if endpoint is BATCH else 1
        credentials = (
            f", {ratio * per_issuance:.2f}x the credentials per second" if per_issuance > 1 else ""
        )
        print(f"  {endpoint.key:<8} {ratio:.2f}x the issuances per second of issue{credentials}")
    return medians


def beside_pre_authorized(runs: dict[str, list[Run]], key: str) -> float:
    """The flow's issuances per second over the pre-authorized flow's in the same round (the
    median over the rounds): the two ran minutes apart at most, between the same healthz runs."""
    return statistics.median(
        run.requests_per_second / issue.requests_per_second
        for run, issue in zip(runs[key], runs[ISSUE.key], strict=True)
    )


# -- the report ----------------------------------------------------------------------------


NOISY = 0.15  # baseline runs further apart than this: the machine was busy meanwhile


def mean(values: list[float]) -> float:
    return statistics.fmean(values)


def round_ratios(
    runs: dict[str, list[Run]], key: str, baseline: str = "healthz", requests: int = 1
) -> list[float]:
    """The endpoint's req/s in each round over the mean of the two baseline runs around it
    (over a third of it for an operation of three requests).

    Comparing each run with its neighbours in time, rather than with one overall figure,
    keeps a load that comes and goes on the machine from landing on one endpoint only.
    """
    rates = [r.requests_per_second for r in runs[baseline]]
    if len(rates) == len(runs[key]):  # healthz and the bare app: side by side in every slot
        return [run.requests_per_second / rate for run, rate in zip(runs[key], rates, strict=True)]
    return [
        run.requests_per_second * requests / mean(rates[number : number + 2])
        for number, run in enumerate(runs[key])
    ]


def verdict(key: str, ratio: float) -> tuple[str, str]:
    """``(target, result)`` as the table shows them."""
    if key in UNTARGETED:
        return "", "report"
    if key not in TARGETS:
        return "", "baseline"
    target = TARGETS[key]
    return f">={target:g}x", "PASS" if ratio >= target else "MISS"


def spread_of(ratios: list[float]) -> str:
    return f"{min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1 else ""


def table(
    baseline: Endpoint, endpoints: list[Endpoint], runs: dict[str, list[Run]], title: str
) -> dict[str, float]:
    """One line per endpoint: its figures and its ratio to the baseline (the median over
    rounds). Returns the ratios."""
    base = runs[baseline.key]
    cpu_known = all(r.cpu_ms is not None for rs in runs.values() for r in rs)
    baseline_cpu = mean([r.cpu_ms for r in base]) if cpu_known else 0.0  # type: ignore[misc]
    width = max(len(e.label) for e in [baseline, *endpoints])
    header = (
        f"{title:<{width}} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'cpu ms':>7} "
        f"{'cpu x':>6} {'ratio':>6} {'rounds':>11} {'target':>7}  result"
    )
    print()
    print(header)
    print("-" * len(header))
    medians: dict[str, float] = {}
    for endpoint in [baseline, *endpoints]:
        mine = runs[endpoint.key]
        if endpoint is baseline:
            ratio, spread = 1.0, ""
        else:
            ratios = round_ratios(runs, endpoint.key, baseline.key, endpoint.requests)
            ratio = medians[endpoint.key] = statistics.median(ratios)
            spread = spread_of(ratios)
        if cpu_known:
            cpu = mean([r.cpu_ms for r in mine])  # type: ignore[misc]
            cpu_text = f"{cpu:>7.2f} {baseline_cpu / cpu:>5.2f}x"
        else:
            cpu_text = f"{'-':>7} {'-':>6}"
        target_text, result = (
            ("", "baseline") if endpoint is baseline else verdict(endpoint.key, ratio)
        )
        print(
            f"{endpoint.label:<{width}} {mean([r.requests_per_second for r in mine]):>8.1f} "
            f"{mean([r.p50_ms for r in mine]):>7.2f} {mean([r.p99_ms for r in mine]):>7.2f} "
            f"{cpu_text} {ratio:>5.2f}x {spread:>11} {target_text:>7}  {result}"
        )
    return medians


def baseline_noise(runs: list[Run], what: str) -> None:
    rates = [r.requests_per_second for r in runs]
    apart = (max(rates) - min(rates)) / mean(rates)
    print(
        f"{what}: {len(rates)} runs, {min(rates):.0f} to {max(rates):.0f} req/s ({apart:.0%} apart)."
    )
    if apart > NOISY:
        print(
            f"WARNING: {what} moved {apart:.0%} between its runs: something else was using the "
            "machine, so the ratios are rough. Run again, or with more BENCH_ROUNDS."
        )


def report(endpoints: list[Endpoint], runs: dict[str, list[Run]]) -> dict[str, float]:
    """The endpoints driven by wrk, over healthz driven by wrk."""
    medians = table(HEALTHZ, endpoints, runs, "endpoint (wrk)")
    cpu_known = all(r.cpu_ms is not None for rs in runs.values() for r in rs)
    print()
    print(
        "ratio: req/s over the mean of the healthz runs just before and after it; with several "
        "rounds, the median (rounds: the lowest and highest)."
    )
    baseline_noise(runs[HEALTHZ.key], "healthz")
    if cpu_known:
        print(
            "cpu ms: gunicorn's own CPU time per request; cpu x: healthz's over the endpoint's, "
            "the ratio if the server only computed. A ratio well under cpu x is time spent waiting."
        )
    return medians


def measure_mdoc(settings: Settings, first_seen: bool = False) -> presenting.InProcess:
    """``floor | mdoc | floor | ... | floor``: the mdoc verifier in this process; with
    ``first_seen``, its kept chains forgotten before each verification."""
    measured = mdoc.in_process_rounds(settings.inprocess_rounds, INPROCESS_SLICE, first_seen)
    rates = ", ".join(f"{s.ops_per_second:.0f}" for s in measured.verify)
    print(f"  {'mdocfirst' if first_seen else 'mdoc':<8} ops/s per round: {rates}", flush=True)
    return measured


def measure_iso_mdoc(settings: Settings) -> presenting.InProcess:
    """``floor | isomdoc | floor | ... | floor``: an org-iso-mdoc response opened and verified
    in this process."""
    measured = mdoc.iso_mdoc_rounds(settings.inprocess_rounds, INPROCESS_SLICE)
    rates = ", ".join(f"{s.ops_per_second:.0f}" for s in measured.verify)
    print(f"  isomdoc  ops/s per round: {rates}", flush=True)
    return measured


def measure_didcomm(settings: Settings) -> presenting.InProcess:
    """``floor | didcomm | floor | ... | floor``: a Socious Wallet presentation opened and
    verified in this process."""
    measured = didcomm.didcomm_rounds(settings.inprocess_rounds, INPROCESS_SLICE)
    rates = ", ".join(f"{s.ops_per_second:.0f}" for s in measured.verify)
    print(f"  didcomm  ops/s per round: {rates}", flush=True)
    return measured


def measure_signing(settings: Settings) -> presenting.InProcess:
    """``floor | signing | floor | ... | floor``: the issuer's signer in this process."""
    try:
        measured = issuing.in_process_rounds(settings.inprocess_rounds, INPROCESS_SLICE)
    except issuing.SigningError as exc:
        raise BenchError(str(exc)) from None
    rates = ", ".join(f"{s.ops_per_second:.0f}" for s in measured.verify)
    print(f"  signing  ops/s per round: {rates}", flush=True)
    return measured


def report_in_process(
    measured: presenting.InProcess, floor_endpoint: Endpoint = FLOOR, endpoint: Endpoint = SDJWT
) -> float:
    """An in-process figure over its floor, in the same style: ops per CPU second and the
    ratio (the verifier's by default, the issuer's signer with SIGN_FLOOR and SIGNING)."""
    ratios = measured.ratios()
    ratio = statistics.median(ratios)
    floor = mean([s.ops_per_second for s in measured.floor])
    sdjwt = mean([s.ops_per_second for s in measured.verify])
    width = max(len(floor_endpoint.label), len(endpoint.label))
    header = (
        f"{'in process (1 thread)':<{width}} {'ops/s':>8} {'us/op':>7} {'ratio':>6} "
        f"{'rounds':>11} {'target':>7}  result"
    )
    print()
    print(header)
    print("-" * len(header))
    print(
        f"{floor_endpoint.label:<{width}} {floor:>8.1f} {1e6 / floor:>7.1f} {1.0:>5.2f}x {'':>11} {'':>7}  baseline"
    )
    target_text, result = verdict(endpoint.key, ratio)
    print(
        f"{endpoint.label:<{width}} {sdjwt:>8.1f} {1e6 / sdjwt:>7.1f} {ratio:>5.2f}x "
        f"{spread_of(ratios):>11} {target_text:>7}  {result}"
    )
    print()
    print(
        f"ops/s: per second of the bench process's CPU time, {len(ratios)} rounds of "
        f"{INPROCESS_SLICE} s each; ratio: each {endpoint.key} slice over the mean of the floor slices "
        "just before and after it, the median over the rounds."
    )
    floors = [s.ops_per_second for s in measured.floor]
    apart = (max(floors) - min(floors)) / mean(floors)
    if apart > NOISY:
        print(
            f"WARNING: the floor moved {apart:.0%} between its slices: something else was using "
            "the machine, so the ratio is rough. Run again, or with more BENCH_INPROCESS_ROUNDS."
        )
    return ratio


def report_presentations(runs: dict[str, list[Run]], clients: int) -> dict[str, float]:
    medians = table(CLIENT_HEALTHZ, [PRESENT], runs, f"end to end ({clients} Python clients)")
    print()
    print(
        "present: whole presentations per second (3 HTTP requests each, plus the key binding "
        "JWT the client signs); p50/p99 and cpu ms per presentation. healthz here is driven by "
        "the same client processes, so the ratio compares like with like."
    )
    baseline_noise(runs[CLIENT_HEALTHZ.key], "healthz (Python client)")
    return medians


# The issue's table, in its order: each figure and its baseline. The last two have no row
# there: signing keeps its earlier target, issue is reported.
SUMMARY = {
    "healthz": ("/healthz", "a bare Flask app (bench/bare.py), same gunicorn"),
    "metered": ("/healthz with METRICS_TOKEN set", "/healthz"),
    "pagepoll": ("person's page poll, nothing changed (204)", "healthz"),
    "page": ("person's page, first load", "healthz"),
    "poll": ("JSON status poll", "healthz"),
    "lookup": ("apikey lookup", "healthz"),
    "open": ("repeated open", "healthz"),
    "sdjwt": ("SD-JWT+KB verify, in process", "2 raw ES256 verifications"),
    "present": ("whole presentation (3 requests)", "healthz / 3, same Python client"),
    "million": ("apikey lookup, PostgreSQL, 1,000,000 individuals", "healthz"),
    "signing": ("SD-JWT VC signing, in process", "1 raw ES256 signature"),
    "mdoc": ("mdoc verify, in process", "3 raw ES256 verifications"),
    "mdocfirst": ("mdoc verify, a signer not seen before", "3 raw ES256 verifications"),
    "isomdoc": ("org-iso-mdoc open + verify, in process", "1 HPKE open + 3 raw ES256"),
    "issue": ("whole issuance (3 requests)", "healthz, same Python client"),
    "authcode": ("whole issuance, authorization code + DPoP (6)", "healthz, same Python client"),
    "batch": (
        f"whole issuance, batch of {receiving.BATCH_PROOFS} proofs (3)",
        "healthz, same Python client",
    ),
}


def summary(ratios: dict[str, float], only_measured: bool = False) -> None:
    width = max(len(figure) for figure, _ in SUMMARY.values())
    header = f"{'figure':<{width}} {'ratio':>6} {'target':>7}  {'result':<6}  baseline"
    print()
    print(header)
    print("-" * (len(header) + 40))
    for key, (figure, baseline) in SUMMARY.items():
        if key not in ratios:
            if only_measured:
                continue
            target_text = f">={TARGETS[key]:g}x" if key in TARGETS else ""
            print(
                f"{figure:<{width}} {'-':>6} {target_text:>7}  {'not run':<6}  {baseline} "
                "(needs PostgreSQL: BENCH_PG_URL or BENCH_DATABASE_URL)"
            )
            continue
        target_text, result = verdict(key, ratios[key])
        result = "MISS" if result == "BELOW" else result
        print(f"{figure:<{width}} {ratios[key]:>5.2f}x {target_text:>7}  {result:<6}  {baseline}")
    print()
    print("A MISS does not fail the command: the exit status is 0 whenever the benchmark ran.")


def main() -> int:
    try:
        settings = Settings.from_environment()
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    for tool in ("flask", "gunicorn"):
        if not (BIN / tool).exists():
            print(
                f"bench: {BIN / tool} is missing; run it with the project's venv", file=sys.stderr
            )
            return 2
    # A SIGTERM (a CI timeout, a killed make) unwinds like an exception, so the cleanup runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    if "--million" in sys.argv[1:]:
        pg_url = settings.pg_url or settings.database_url
        if not pg_url.startswith("postgresql"):
            print("bench: --million needs BENCH_PG_URL (a postgresql:// URL)", file=sys.stderr)
            return 2
        settings = dataclasses.replace(settings, million_only=True, pg_url=pg_url)
    workdir = Path(tempfile.mkdtemp(prefix="verity-bench-"))
    try:
        if settings.million_only:
            summary(bench_million(settings, workdir), only_measured=True)
            return 0
        if "--issuances" in sys.argv[1:]:
            summary(bench_issuances(settings, workdir), only_measured=True)
            return 0
        print(
            f"in process: app.sdjwt over two raw ES256 verifications, "
            f"{settings.inprocess_rounds} rounds",
            flush=True,
        )
        in_process = measure_in_process(settings)
        signing = measure_signing(settings)
        mdoc_measured = (
            measure_mdoc(settings),
            measure_mdoc(settings, first_seen=True),
            measure_iso_mdoc(settings),
            measure_didcomm(settings),
        )
        with database(settings, workdir) as (database_url, described):
            print(f"database: {described}", flush=True)
            ratios = bench(settings, database_url, workdir, in_process, signing, mdoc_measured)
        if "million" not in ratios and settings.pg_url:
            ratios.update(bench_million(settings, workdir))
        summary(ratios)
    except BenchError as exc:
        print(f"\nbench failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbench interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def bench(
    settings: Settings,
    database_url: str,
    workdir: Path,
    in_process: presenting.InProcess,
    signing: presenting.InProcess,
    mdoc_measured: tuple[presenting.InProcess, ...],
) -> dict[str, float]:
    env = server_environment(database_url)
    token = prepare_database(env)
    server = Server(env, settings.workers, workdir / "gunicorn.log")
    bare = Server(env, settings.workers, workdir / "bare.log", app="bare:app")
    metered = Server(
        {**env, "METRICS_TOKEN": secrets.token_urlsafe(16)},
        settings.workers,
        workdir / "metered.log",
    )
    million_runs: dict[str, list[Run]] = {}
    try:
        server.wait_ready()
        bare.wait_ready()
        metered.wait_ready()
        endpoints, verification_id = seed_over_http(server.base, token)
        print(
            f"server:   gunicorn, {settings.workers} sync workers on {server.base}; "
            f"request logging off (REQUEST_LOG=0); the bare app on {bare.base}"
        )
        print(
            f"load:     wrk -t{settings.threads} -c{settings.connections}, "
            f"{settings.warmup} s warm-up + {settings.seconds} s per run, "
            f"{settings.rounds} round(s), healthz and the bare app before and after each round",
            flush=True,
        )
        runs: dict[str, list[Run]] = {}
        for endpoint in wrk_schedule(endpoints, settings.rounds):
            runs.setdefault(endpoint.key, []).append(
                measure(settings, server, endpoint, {"bare": bare, "metered": metered})
            )
        bare.stop()
        metered.stop()
        check_page_poll(server.base, endpoints)
        print(
            f"load:     {settings.clients} Python client processes, one connection each: "
            "presentations, healthz before and after each round",
            flush=True,
        )
        presentation_runs = measure_presentations(settings, server, token)
        print(
            f"load:     {settings.clients} Python client processes, one connection each: "
            "issuances, healthz before and after each round",
            flush=True,
        )
        issuance_runs = measure_issuances(settings, server, token)
        if database_url.startswith("postgresql"):
            million_runs = measure_million(
                settings, server, database_url, verification_id, endpoints
            )
    finally:
        # Before the database goes: a PostgreSQL schema is dropped only after its users left.
        bare.stop()
        metered.stop()
        server.stop()
    if server.process.returncode not in (0, -signal.SIGTERM):
        raise BenchError(f"gunicorn exited {server.process.returncode}:\n{server.log_tail()}")
    ratios = table(BARE, [HEALTHZ], runs, "healthz over a bare Flask app (wrk)")
    print()
    print("ratio: the service's healthz over the bare app's run just before or after it.")
    ratios.update(table(HEALTHZ, [METERED], runs, "the cost of counting requests (wrk)"))
    print()
    print("metered: the same service with METRICS_TOKEN set, over healthz next to it.")
    baseline_noise(runs[BARE.key], "bare app")
    ratios.update(report(endpoints, runs))
    ratios[SDJWT.key] = report_in_process(in_process)
    ratios[SIGNING.key] = report_in_process(signing, SIGN_FLOOR, SIGNING)
    ratios[MDOC.key] = report_in_process(mdoc_measured[0], MDOC_FLOOR, MDOC)
    ratios[MDOC_FIRST.key] = report_in_process(mdoc_measured[1], MDOC_FLOOR, MDOC_FIRST)
    ratios[ISO_MDOC.key] = report_in_process(mdoc_measured[2], ISO_MDOC_FLOOR, ISO_MDOC)
    ratios[DIDCOMM.key] = report_in_process(mdoc_measured[3], DIDCOMM_FLOOR, DIDCOMM)
    ratios.update(report_presentations(presentation_runs, settings.clients))
    ratios.update(report_issuances(issuance_runs, settings.clients))
    if million_runs:
        ratios.update(report_million(million_runs, settings.million))
    return ratios


def check_page_poll(base: str, endpoints: list[Endpoint]) -> None:
    """The page's poll still answered 204 at the end: the runs measured "nothing changed"."""
    poll = next(e for e in endpoints if e.key == "pagepoll")
    status, _ = fetch(base, poll.path)
    if status != 204:
        raise BenchError(f"the page's poll answered {status} after the runs, not 204")


# -- the lookup among a million individuals (PostgreSQL) -----------------------------------


def seed_million(database_url: str, verification_id: str, count: int) -> float:
    """``count`` more individuals of the bench verification, in one INSERT ... SELECT over
    generate_series (no round trip per row); the seconds it took."""
    from sqlalchemy import create_engine, text

    started = time.monotonic()
    engine = create_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO individuals "
                    "(id, verification_id, customer_id, status, created_at, updated_at) "
                    "SELECT gen_random_uuid(), :verification, 'bench-million-' || n, "
                    "'CREATED', now(), now() FROM generate_series(1, :count) AS n"
                ),
                {"verification": verification_id, "count": count},
            )
        with engine.connect() as connection:
            connection.execute(text("ANALYZE individuals"))
            connection.commit()
    finally:
        engine.dispose()
    return time.monotonic() - started


def measure_million(
    settings: Settings,
    server: Server,
    database_url: str,
    verification_id: str,
    endpoints: list[Endpoint],
) -> dict[str, list[Run]]:
    """``healthz | lookup | healthz | ...`` once the verification has a million individuals."""
    lookup = next(e for e in endpoints if e.key == "lookup")
    million = dataclasses.replace(
        lookup,
        key="million",
        label=f"million GET /verifications/{{vid}}/individuals/{{cid}}, {settings.million:,} more",
    )
    print(f"seeding:  {settings.million:,} individuals (INSERT ... SELECT generate_series)")
    seconds = seed_million(database_url, verification_id, settings.million)
    print(f"seeding:  done in {seconds:.1f} s", flush=True)
    call(server.base, "GET", lookup.path, 200, headers=dict([lookup.headers[0].split(": ", 1)]))
    runs: dict[str, list[Run]] = {}
    for endpoint in schedule([million], settings.rounds):
        runs.setdefault(endpoint.key, []).append(measure(settings, server, endpoint))
    return runs


def report_million(runs: dict[str, list[Run]], count: int) -> dict[str, float]:
    million = Endpoint("million", f"million lookup, {count:,} more individuals", "")
    medians = table(HEALTHZ, [million], runs, "PostgreSQL, large (wrk)")
    print()
    print("million: the apikey lookup once the verification holds that many more individuals.")
    baseline_noise(runs[HEALTHZ.key], "healthz")
    return medians


def bench_million(settings: Settings, workdir: Path) -> dict[str, float]:
    """The million step alone, on a PostgreSQL schema of its own: after a SQLite run, or
    ``make bench-pg``."""
    with database(settings, workdir, settings.pg_url) as (database_url, described):
        print(f"\ndatabase: {described} (the lookup among a million individuals)", flush=True)
        env = server_environment(database_url)
        token = prepare_database(env)
        server = Server(env, settings.workers, workdir / "gunicorn-million.log")
        try:
            server.wait_ready()
            endpoints, verification_id = seed_over_http(server.base, token)
            runs = measure_million(settings, server, database_url, verification_id, endpoints)
        finally:
            server.stop()
        return report_million(runs, settings.million)


def bench_issuances(settings: Settings, workdir: Path) -> dict[str, float]:
    """The issuance step alone (``bench/run.py --issuances``): every flow beside the
    pre-authorized one, on a database and a gunicorn of its own."""
    with database(settings, workdir) as (database_url, described):
        print(f"database: {described} (issuances only)", flush=True)
        env = server_environment(database_url)
        token = prepare_database(env)
        server = Server(env, settings.workers, workdir / "gunicorn-issuances.log")
        try:
            server.wait_ready()
            print(
                f"load:     {settings.clients} Python client processes, one connection each: "
                "issuances, healthz before and after each round",
                flush=True,
            )
            runs = measure_issuances(settings, server, token)
        finally:
            server.stop()
        return report_issuances(runs, settings.clients)


if __name__ == "__main__":
    sys.exit(main())
