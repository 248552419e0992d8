"""Zero-knowledge age proofs: Verity's check against the raw library call, and the person's
page while a flood of ZK answers is being checked.

``make bench-zk`` (needs the ``zk`` extra and wrk). Two figures, each a ratio to a baseline
measured in the same run:

- ``zk``: strict decisions of a ZK answer per second (``app.zk.check_answer``: decoding, the
  chain to the IACA, the claim, then the proof in a worker process of ``VerificationPool``)
  over raw ``Pylongfellow.verify`` calls (google-cpp) of the same proof, timed inside a worker
  process at the same CPU priority (so a busy machine shares itself alike), one at a time
  both; interleaved rounds (target >= 0.8x).
- ``zkflood``: the person's status poll (``GET /verifications/{iid}/verify``, wrk) while
  ZK answers are posted to the service as fast as it takes them, over the same poll with no
  answers (target >= 0.8x). The service runs as ``make run`` runs it: gunicorn and the job
  worker, whose ``zk`` queue checks the kept answers. Each posted answer passes every check
  before the proof (its IACA is the verification's pinned one, its timestamp today's) and
  costs a whole proof check, which then fails: it was made over another transcript. Answers
  beyond the deployment's capacity get 429 at once.

The proof is made once, by the isrg-rust backend, for a licence under a test IACA.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path

import cbor2
import run
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.mdoc import dc_api_session_transcript  # noqa: E402
from app.zk import VerificationPool, ZkRequest, check_answer  # noqa: E402
from app.zk.backend import ProofCheck, circuit_bytes  # noqa: E402
from app.zk.circuits import PINNED  # noqa: E402
from app.zk.pool import WORKER_NICENESS  # noqa: E402

TARGETS = {"zk": 0.8, "zkflood": 0.8}
MDL_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"
DOCTYPE = "org.iso.18013.5.1.mDL"
NAMESPACE = "org.iso.18013.5.1"
CIRCUIT = PINNED[1]  # version 6, one attribute
ROUNDS = int(os.environ.get("BENCH_ZK_ROUNDS", "3"))
PER_ROUND = int(os.environ.get("BENCH_ZK_PER_ROUND", "4"))
FLOOD_CLIENTS = int(os.environ.get("BENCH_ZK_CLIENTS", "4"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "8"))
FLOOD_REQUESTS = int(os.environ.get("BENCH_ZK_REQUESTS", "120"))


class Fixture:
    """A test IACA, its document signer, a licence and one isrg-rust proof of age_over_18."""

    def __init__(self) -> None:
        from pylongfellow import Pylongfellow, mdoc
        from pylongfellow.mdoc import testing

        now = datetime.now(UTC)
        self.now = now
        iaca_key = ec.generate_private_key(ec.SECP256R1())
        self.iaca = testing.create_certificate(
            "Bench IACA",
            iaca_key.public_key(),
            "Bench IACA",
            iaca_key,
            now - timedelta(days=1),
            now + timedelta(days=30),
            ca=True,
        )
        ds_key = ec.generate_private_key(ec.SECP256R1())
        self.ds = testing.create_certificate(
            "Bench DS",
            ds_key.public_key(),
            "Bench IACA",
            iaca_key,
            now - timedelta(days=1),
            now + timedelta(days=30),
        )
        self.transcript = dc_api_session_transcript("https://bench.invalid", "bench", None)
        specimen = testing.create_presentation(
            DOCTYPE,
            {NAMESPACE: {"family_name": "Mustermann", "age_over_18": True}},
            self.transcript,
            now - timedelta(days=1),
            now + timedelta(days=30),
            issuer_key=ds_key,
            issuer_certificate=self.ds,
        )
        self.timestamp = now.replace(hour=23, minute=59, second=59, microsecond=0)
        self.claims = [mdoc.RequestedAttribute(NAMESPACE, "age_over_18", cbor2.dumps(True))]
        self.public_key = specimen.issuer_public_key
        prover = Pylongfellow(backend="isrg-rust")
        prover.load_circuit(circuit_bytes(CIRCUIT), CIRCUIT.version, CIRCUIT.num_attributes)
        started = time.perf_counter()
        self.proof = prover.prove(
            specimen.mdoc, self.public_key, self.transcript, self.claims, self.timestamp
        )
        print(
            f"  proved once (isrg-rust, v{CIRCUIT.version}) in "
            f"{time.perf_counter() - started:.1f} s, {len(self.proof)} bytes",
            flush=True,
        )
        data = {
            "docType": DOCTYPE,
            "zkSystemId": CIRCUIT.circuit_hash,
            "timestamp": self.timestamp,
            "issuerSigned": {
                NAMESPACE: [{"elementIdentifier": "age_over_18", "elementValue": True}]
            },
            "msoX5chain": self.ds.public_bytes(serialization.Encoding.DER),
        }
        self.response = cbor2.dumps(
            {
                "version": "1.0",
                "status": 0,
                "zkDocuments": [
                    {"proof": self.proof, "documentData": cbor2.CBORTag(24, cbor2.dumps(data))}
                ],
            }
        )
        numbers = specimen.issuer_public_key
        self.check = ProofCheck(
            circuit_hash=CIRCUIT.circuit_hash,
            issuer_x=numbers.x,
            issuer_y=numbers.y,
            transcript=self.transcript,
            claims=((NAMESPACE, "age_over_18", cbor2.dumps(True)),),
            timestamp=self.timestamp,
            proof=self.proof,
            doctype=DOCTYPE,
        )
        self.entry = base64.urlsafe_b64encode(self.response).rstrip(b"=").decode()

    def iaca_pem(self) -> str:
        return self.iaca.public_bytes(serialization.Encoding.PEM).decode()


def _raw_round(check: ProofCheck, count: int) -> float:
    """``count`` raw ``Pylongfellow.verify`` calls in this (worker) process; their seconds."""
    from pylongfellow import Pylongfellow, mdoc

    verifier = Pylongfellow(backend="google-cpp")
    verifier.load_circuit(circuit_bytes(CIRCUIT), CIRCUIT.version, CIRCUIT.num_attributes)
    claims = [mdoc.RequestedAttribute(*claim) for claim in check.claims]
    key = mdoc.PublicKey(check.issuer_x, check.issuer_y)
    started = time.perf_counter()
    for _ in range(count):
        verifier.verify(key, check.transcript, claims, check.timestamp, check.proof, DOCTYPE)
    return time.perf_counter() - started


def _baseline_worker() -> None:
    """At the pool's workers' priority, so both sides get the same share of a busy machine."""
    os.nice(max(0, WORKER_NICENESS - os.nice(0)))


def raw_rate(fixture: Fixture, baseline: ProcessPoolExecutor) -> float:
    return PER_ROUND / baseline.submit(_raw_round, fixture.check, PER_ROUND).result()


def verity_rate(fixture: Fixture, pool: VerificationPool) -> float:
    request = ZkRequest(DOCTYPE, NAMESPACE, "age_over_18", True, (CIRCUIT.circuit_hash,))
    started = time.perf_counter()
    for _ in range(PER_ROUND):
        check_answer(
            fixture.response,
            request,
            transcript=fixture.transcript,
            anchors=[fixture.iaca],
            now=fixture.now,
            verify=pool.verify,
        )
    return PER_ROUND / (time.perf_counter() - started)


def measure_in_process(fixture: Fixture) -> float:
    """``raw | verity | raw | ... | raw``; the ratio of the means."""
    pool = VerificationPool(workers=1, timeout=120, yield_seconds=5)  # as deployed
    baseline = ProcessPoolExecutor(
        max_workers=1, mp_context=get_context("spawn"), initializer=_baseline_worker
    )
    try:
        verity_rate(fixture, pool)  # the worker starts and loads its circuits
        raws, verities = [raw_rate(fixture, baseline)], []
        for _ in range(ROUNDS):
            verities.append(verity_rate(fixture, pool))
            raws.append(raw_rate(fixture, baseline))
    finally:
        pool.shutdown()
        baseline.shutdown()
    raw, verity = sum(raws) / len(raws), sum(verities) / len(verities)
    print(f"  zk       raw {raw:.2f}/s per round {[round(r, 2) for r in raws]}", flush=True)
    print(
        f"  zk       verity {verity:.2f}/s per round {[round(v, 2) for v in verities]}", flush=True
    )
    return verity / raw


def post(base: str, path: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        f"{base}{path}",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        exc.read()
        return exc.code
    except OSError:
        return 0  # reset or timed out: counted as other


def pending_requests(base: str, verification_id: str, count: int) -> tuple[list[str], list[str]]:
    """``count`` people of the ZK verification, and the presentation request of each page."""
    ids, individuals = [], []
    for index in range(count):
        pair = {"customer_id": f"zk-{index}", "verification_id": verification_id}
        individual = run.call(base, "POST", "/verifications/individuals", 201, pair)
        status, page = run.fetch(base, f"/i/{individual['id']}")
        found = re.search(r"/oid4vp/dc-requests/([0-9a-f-]{36})", page)
        if status != 200 or found is None:
            raise run.BenchError("the ZK verification's page offers no DC API request")
        ids.append(found.group(1))
        individuals.append(individual["id"])
    return ids, individuals


def flood(base: str, fixture: Fixture, requests: list[str], stop: threading.Event) -> dict:
    """Post the answer to each request in turn from several clients until ``stop``."""
    lock = threading.Lock()
    counts = {"kept": 0, "busy": 0, "other": 0}
    # Serialized once: the clients' own CPU is not the service's.
    body = json.dumps(
        {"protocol": "openid4vp-v1-unsigned", "data": {"vp_token": {"credential": [fixture.entry]}}}
    ).encode()

    def client() -> None:
        while not stop.is_set():
            with lock:
                if not requests:
                    return
                request_id = requests.pop()
            status = post(base, f"/oid4vp/dc-responses/{request_id}", body, {"Origin": base})
            with lock:
                if status == 202:
                    counts["kept"] += 1
                    continue
                counts["busy" if status == 429 else "other"] += 1
                requests.append(request_id)  # not consumed: answer it again
            if status == 429:
                time.sleep(0.05)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(FLOOD_CLIENTS)]
    for thread in threads:
        thread.start()
    counts["threads"] = threads  # type: ignore[assignment]
    return counts


def start_worker(env: dict[str, str], base: str, log_path: Path) -> subprocess.Popen:
    """``flask jobs worker``, as ``make run`` starts it beside gunicorn."""
    return subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "wsgi", "jobs", "worker"],
        cwd=ROOT,
        env={**env, "PUBLIC_URL": base},
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def decided(base: str, individuals: list[str]) -> dict[str, int]:
    """How the flood's people stand: each kept answer the worker checked is FAILED."""
    counts: dict[str, int] = {}
    for individual_id in individuals:
        status, body = run.fetch(base, f"/verifications/{individual_id}/verify")
        state = json.loads(body).get("status", "?") if status == 200 else str(status)
        counts[state] = counts.get(state, 0) + 1
    return counts


def measure_flood(fixture: Fixture, workdir: Path) -> float:
    settings = run.Settings.from_environment()
    with run.database(settings, workdir) as (database_url, shown):
        print(f"  database: {shown}", flush=True)
        env = run.server_environment(database_url)
        env.update({"DC_API_RESPONSE_MODE": "dc_api", "ZK_ANSWER_LIMIT": "100000/minute"})
        token = run.prepare_database(env)
        server = run.Server(env, settings.workers, workdir / "gunicorn.log")
        try:
            server.wait_ready()
            base = server.base
            session = {"Authorization": f"Bearer {token}"}
            verification = run.call(
                base,
                "POST",
                "/verifications",
                201,
                {
                    "name": "Bench ZK",
                    "schema_id": MDL_SCHEMA_ID,
                    "claims": ["age_over_18"],
                    "attributes": [],
                    "trusted_issuers": [fixture.iaca_pem()],
                    "zk": True,
                },
                session,
            )
            pair = {"customer_id": "zk-person", "verification_id": verification["id"]}
            person = run.call(base, "POST", "/verifications/individuals", 201, pair)
            poll = run.Endpoint(
                "zkpoll",
                "poll while ZK answers are checked",
                f"/verifications/{person['id']}/verify",
            )
            requests, individuals = pending_requests(base, verification["id"], FLOOD_REQUESTS)
            worker = start_worker(env, server.base, workdir / "worker.log")
            run.wrk(settings, base, poll, settings.warmup or 1)
            quiet = [run.wrk(settings, base, poll, SECONDS).requests_per_second]
            loaded = []
            for _ in range(settings.rounds):
                stop = threading.Event()
                counts = flood(base, fixture, requests, stop)
                time.sleep(2)  # the pool's workers start and the flood is under way
                loaded.append(run.wrk(settings, base, poll, SECONDS).requests_per_second)
                stop.set()
                for thread in counts.pop("threads"):  # type: ignore[union-attr]
                    thread.join(timeout=120)
                print(f"  zkflood  answers: {counts}", flush=True)
                quiet.append(run.wrk(settings, base, poll, SECONDS).requests_per_second)
            run.stop_group(worker, grace=40)
            print(f"  zkflood  decided: {decided(base, individuals)}", flush=True)
        finally:
            server.stop()
    q, lo = sum(quiet) / len(quiet), sum(loaded) / len(loaded)
    print(f"  zkflood  quiet {q:.0f} req/s {[round(x) for x in quiet]}", flush=True)
    print(f"  zkflood  under the flood {lo:.0f} req/s {[round(x) for x in loaded]}", flush=True)
    return lo / q


def main() -> int:
    # SIGTERM ends the run like Ctrl-C: gunicorn and the database go with it (``finally``).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        fixture = Fixture()
        ratios = {"zk": measure_in_process(fixture)}
        with tempfile.TemporaryDirectory(prefix="verity-bench-zk-") as workdir:
            ratios["zkflood"] = measure_flood(fixture, Path(workdir))
    except run.BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    print("\nfigure    ratio   target  verdict")
    for key, ratio in ratios.items():
        target = TARGETS[key]
        print(f"{key:<9} {ratio:5.2f}x  >= {target}x  {'PASS' if ratio >= target else 'MISS'}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
