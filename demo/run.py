"""``make demo``: the whole loop on this machine in one command, with nothing left behind.

In a temporary directory it builds an embedded SQLite database (never ``instance/``), starts
the service (gunicorn on a free loopback port, and the job worker) and then, as an operator, a
staff member, a person and a backend would:

1. creates a user, a demo organization on the PRO plan and a sign-in token (operator commands);
2. creates an integration key, a schema (published), a recipient and a verification (JSON API);
3. issues a credential to the recipient and takes it into a wallet file with the holder
   (``app.holder``) through OpenID4VCI 1.0: offer, metadata, token, nonce, proof, credential;
4. opens an individual of the verification and presents the credential through OpenID4VP 1.0;
5. reads the authenticated lookup, which is where a backend takes the decision from: VERIFIED;
6. revokes the credential (staff), and the person presents it again at once: FAILED.

Then, when ``node`` and ``npm`` are on the PATH, the same organization verifies a Socious
Wallet holder over DIDComm v2: the wallet's own agent (the Hyperledger Identus SDK, run by
``tests/didcomm/holder.py``; ``npm ci`` on first use) holds a credential from an
Identus-shaped issuer made here (a long-form did:prism signing a JWT VC with ES256K), accepts
the individual's ``connection_url`` (an out-of-band invitation), is asked for a presentation
through its mediator and presents; the lookup says VERIFIED. Its processes start while the
first service boots, so it adds little time. Without Node.js this run is skipped, and the
summary says so.

It prints the outcome (VERIFIED, then FAILED once revoked; and the DIDComm lookup), then stops
every process it started (gunicorn, the job workers, the mediator, node) and removes the
directory, also on failure or Ctrl-C. ``--keep`` (``make demo KEEP=1``) leaves the first service
running until Ctrl-C and prints the dashboard address and a sign-in token to visit it with;
without it they are not printed, since the service they name is stopped.

The service runs with the settings ``make run`` has: gunicorn and the job worker,
``PUBLIC_URL`` the address it serves (``http://127.0.0.1:<port>``) and no
``TRUST_ALLOW_PRIVATE``. The credential's issuer is the demo organization at
``http://127.0.0.1:<port>/issuers/<id>``, one of the deployment's own, whose keys and status
list the verifier reads from the database, never over the network: that the loop passes
without ``TRUST_ALLOW_PRIVATE`` is what shows it.

The DIDComm run therefore has a service of its own: a second gunicorn and job worker on the
same database with ``TRUST_ALLOW_PRIVATE=1``, ``PUBLIC_URL`` its own port and a job queue of
its own (``JOBS_QUEUE_NAME``, so each worker takes its own service's jobs). A wallet's mediator
on this machine is a private address, which only development settings may reach; allowing it
on the first service would take away what its loop shows. No public mediator is reachable
offline, so the demo borrows the tests' loopback mediator (``tests/didcomm/mediator.py``, test
infrastructure, just what the SDK needs from one) as the wallet's; the wallet polls it every
0.2 s instead of the Socious Wallet's 5 s, to wait less.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.didcomm import prism  # noqa: E402
from app.holder.issuance import receive  # noqa: E402  (the project root is on the path now)
from app.holder.presentation import present  # noqa: E402
from app.holder.store import Wallet  # noqa: E402

BIN = Path(sys.executable).parent
EMAIL = "demo@example.org"
COMMAND_TIMEOUT = 120
START_TIMEOUT = 60
STOP_TIMEOUT = 15
HTTP_TIMEOUT = 15
SCHEMA = {
    "name": "Demo membership",
    "description": "A membership card issued by the demo organization.",
    "vct": "urn:example:verity-demo:membership:1",
    "attributes": [
        {"name": "given_name", "description": "Given name", "type": "TEXT"},
        {"name": "family_name", "description": "Family name", "type": "TEXT"},
        {"name": "birthdate", "description": "Date of birth", "type": "DATETIME"},
        {"name": "member_number", "description": "Member number", "type": "NUMBER"},
    ],
}
PERSON = {
    "given_name": "Erika",
    "family_name": "Mustermann",
    "birthdate": "1984-01-26",
    "member_number": 1042,
}
# The DIDComm run: the credential the Socious Wallet presents (its KYC credential's shape,
# ``credentialSubject.type`` "verification"), and the schema and verification asking for it.
SDK_PACKAGE = "@hyperledger/identus-sdk"
DIDCOMM_TIMEOUT = 30
DIDCOMM_TYPE = "VerifiableCredential"
DIDCOMM_SCHEMA = {
    "name": "Socious KYC",
    "description": "The identity check the Socious Wallet holds.",
    "format": "jwt_vc_json",
    "types": [DIDCOMM_TYPE],
    "attributes": [
        {"name": "first_name", "description": "First name", "type": "TEXT"},
        {"name": "last_name", "description": "Last name", "type": "TEXT"},
        {"name": "country", "description": "Country", "type": "TEXT"},
    ],
}
WALLET_HOLDER = {"first_name": "Ada", "last_name": "Lovelace", "country": "GB"}


EXPECTED = "VERIFIED, then FAILED once revoked"


class DemoError(Exception):
    """A step of the demo failed; the message says which, with the server's log when useful."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(workdir: Path, port: int) -> dict[str, str]:
    """``make run``'s settings on a database of the demo's own, with fresh secrets; like
    ``make run``, the address served is the public URL."""
    env = dict(os.environ)
    for name in (
        "DATABASE_URL",
        "MAIL_URL",
        "REQUEST_SIGNING_CERT_FILE",
        "TRUST_ANCHORS_FILE",
        "PUBLIC_URL",
        "TRUST_ALLOW_PRIVATE",
        "JOBS_QUEUE_URL",
        "JOBS_QUEUE_NAME",
    ):
        env.pop(name, None)
    env.update(
        {
            "VERITY_ENV": "development",
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            "DATABASE_URL": f"sqlite:///{workdir / 'verity.sqlite3'}",
            "SECRET_KEY": secrets.token_urlsafe(32),
            "ISSUER_KEY_SECRET": secrets.token_urlsafe(32),
            "RATELIMIT_STORAGE_URI": "memory://",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def flask(env: dict[str, str], *args: str) -> Any:
    """An operator command; its JSON output (``db upgrade`` prints none)."""
    done = subprocess.run(
        [str(BIN / "flask"), "--app", "wsgi", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise DemoError(f"flask {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout) if done.stdout.strip().startswith("{") else None


def didcomm_environment(env: dict[str, str], port: int) -> dict[str, str]:
    """The DIDComm run's service: the same database and secrets, its own address and job
    queue, and the development setting that lets it reach a mediator on this machine."""
    return {
        **env,
        "PUBLIC_URL": f"http://127.0.0.1:{port}",
        "TRUST_ALLOW_PRIVATE": "1",
        "JOBS_QUEUE_NAME": "verity-didcomm",
    }


@dataclass
class Service:
    base: str
    web: subprocess.Popen
    worker: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]


@contextlib.contextmanager
def started(env: dict[str, str], port: int, log_path: Path, workers: int = 2) -> Iterator[Service]:
    """gunicorn and the job worker, as ``make run`` starts them, each in a process group of
    its own (one log for both), both stopped however the block ends. Not yet answering:
    :func:`wait_service` waits for that, so services can boot side by side."""
    with log_path.open("ab") as log, contextlib.ExitStack() as stopping:
        processes = []
        for command in (
            [
                str(BIN / "gunicorn"),
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{port}",
                "wsgi:app",
            ],
            [str(BIN / "flask"), "--app", "wsgi", "jobs", "worker"],
        ):
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            stopping.callback(stop, process)
            processes.append(process)
        yield Service(f"http://127.0.0.1:{port}", *processes, log_path)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOP_TIMEOUT)


@contextlib.contextmanager
def gunicorn(env: dict[str, str], port: int, log_path: Path) -> Iterator[subprocess.Popen]:
    """gunicorn alone in a process group of its own, stopped (workers too) however the block
    ends: for the tests that start the service as an operator would, a worker of their own."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), "--workers", "2", "--bind", f"127.0.0.1:{port}", "wsgi:app"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield process
        finally:
            stop(process)


def wait_ready(process: subprocess.Popen, base: str, log_path: Path) -> None:
    """Until ``base`` answers /healthz (for :func:`gunicorn`)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DemoError(f"gunicorn exited on start:\n{log_path.read_text()[-3000:]}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise DemoError(f"gunicorn did not answer /healthz in {START_TIMEOUT} s")


def wait_service(service: Service) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for name, process in (("gunicorn", service.web), ("the job worker", service.worker)):
            if process.poll() is not None:
                raise DemoError(f"{name} exited on start:\n{service.log()}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{service.base}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise DemoError(f"gunicorn did not answer /healthz in {START_TIMEOUT} s")


class Api:
    def __init__(self, base: str, headers: dict[str, str]) -> None:
        self.base = base
        self.headers = headers

    def __call__(self, method: str, path: str, expect: int, body: Any = None) -> dict[str, Any]:
        response = requests.request(
            method, self.base + path, json=body, headers=self.headers, timeout=HTTP_TIMEOUT
        )
        if response.status_code != expect:
            raise DemoError(f"{method} {path} answered {response.status_code}: {response.text}")
        return response.json()


def run_demo(workdir: Path, keep: bool = False) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(workdir, port)
    flask(env, "db", "upgrade")
    flask(env, "schemas", "seed")
    flask(env, "users", "create", "--email", EMAIL, "--name", "Demo Staff")
    organization = flask(
        env, "orgs", "create", "--name", "Demo Org", "--owner-email", EMAIL, "--plan", "PRO"
    )
    token = flask(env, "tokens", "create", "--email", EMAIL)["token"]
    with started(env, port, workdir / "server.log") as service:
        # The DIDComm run's service and wallet boot while this one does, and stop once it ran.
        with didcomm_started(workdir, env) as didcomm:
            wait_service(service)
            try:
                outcome = the_loop(base, token, Wallet.open(workdir / "wallet.json"))
            except Exception as exc:
                raise DemoError(f"{exc}\n-- server log --\n{service.log()}") from exc
            outcome["didcomm"] = didcomm(token) if didcomm else None
        outcome.update(
            {
                "service": base,
                "organization": organization,
                "dashboard": f"{base}/dashboard/login",
                "token": token,
            }
        )
        print_summary(outcome, workdir, keep)
        if keep:
            print("\nThe service keeps running; Ctrl-C stops it.", flush=True)
            service.web.wait()
    return outcome


def the_loop(base: str, token: str, wallet: Wallet) -> dict[str, Any]:
    staff = Api(base, {"Authorization": f"Bearer {token}"})
    apikey = staff("POST", "/integrations", 201, {"name": "Demo backend"})["key"]
    backend = Api(base, {"apikey": apikey})
    schema = staff("POST", "/schemas", 201, SCHEMA)
    staff("POST", f"/schemas/{schema['id']}/publish", 200)
    recipient = backend(
        "POST",
        "/recipients",
        201,
        {
            "first_name": "Erika",
            "last_name": "Mustermann",
            "email": "erika@example.org",
            "customer_id": "member-1042",
        },
    )
    verification = staff(
        "POST",
        "/verifications",
        201,
        {
            "name": "Adult members",
            "description": "We check that you are a member of age.",
            "schema_id": schema["id"],
            "claims": ["given_name", "family_name", "member_number"],
            "attributes": [{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
        },
    )
    credential = staff(
        "POST",
        "/credentials",
        201,
        {
            "name": "Membership of Erika Mustermann",
            "description": "Issued by make demo",
            "schema_id": schema["id"],
            "recipient_id": recipient["id"],
            "claims": [{"name": name, "value": value} for name, value in PERSON.items()],
        },
    )
    received = receive(credential["offer_url"], wallet)
    presented, decision = present_to(backend, verification["id"], recipient["customer_id"], wallet)
    issued = staff("GET", f"/credentials/{credential['id']}", 200)
    revoked = staff("POST", f"/credentials/{credential['id']}/revoke", 200)
    # VERIFIED is final, so the second presentation is another individual of the verification.
    _, again = present_to(backend, verification["id"], "member-1042-after-revocation", wallet)
    return {
        "credential": issued,
        "received": received["received"][0],
        "presented": {**presented["presented"][0], "verifier": presented["verifier"]},
        "decision": decision,
        "revoked": revoked,
        "again": again,
        "outcome": f"{decision['status']}, then {again['status']} once revoked",
    }


def present_to(
    backend: Api, verification_id: str, customer_id: str, wallet: Wallet
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Open an individual, present the credential to its link; what was presented and the
    authenticated lookup."""
    individual = backend(
        "POST",
        "/verifications/individuals",
        201,
        {"customer_id": customer_id, "verification_id": verification_id},
    )
    link = backend("GET", f"/verifications/{individual['id']}/connect", 200)["connection_url"]
    presented = present(link, wallet)
    decision = backend("GET", f"/verifications/{verification_id}/individuals/{customer_id}", 200)
    return presented, decision


@contextlib.contextmanager
def didcomm_started(
    workdir: Path, env: dict[str, str]
) -> Iterator[Callable[[str], dict[str, Any]] | None]:
    """The DIDComm run's parts, started while the first service boots: a service of its own on
    the same database, the tests' mediator and the SDK's agent as the person's wallet, all
    stopped when the block ends. Yields the run (given the staff token), or None without
    Node.js."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        yield None
        return
    # The SDK holder and the mediator are test infrastructure, borrowed from tests/.
    sys.path.insert(0, str(ROOT / "tests"))
    from didcomm.holder import SDK_DIR, Holder
    from didcomm.mediator import Mediator
    from support.npm import ensure_node_modules

    try:
        ensure_node_modules(SDK_DIR, SDK_PACKAGE)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        raise DemoError(f"npm ci of {SDK_PACKAGE} in {SDK_DIR} failed: {exc}") from exc
    sdk = json.loads((SDK_DIR / "node_modules" / SDK_PACKAGE / "package.json").read_text())
    port = free_port()
    with (
        # One web worker is enough for one wallet, and boots sooner beside the first service.
        started(didcomm_environment(env, port), port, workdir / "didcomm.log", 1) as service,
        Mediator() as mediator,
    ):
        try:
            wallet = Holder(mediator.did)
        except RuntimeError as exc:
            raise DemoError(f"the Identus SDK agent did not start: {exc}") from exc
        with wallet:

            def run(token: str) -> dict[str, Any]:
                wait_service(service)
                try:
                    done = the_didcomm_loop(service.base, token, wallet)
                except Exception as exc:
                    raise DemoError(f"DIDComm: {exc}\n-- server log --\n{service.log()}") from exc
                return {**done, "service": service.base, "sdk": sdk["version"]}

            yield run


def identus_credential(issuer: prism.NewPrismDid, subject: str) -> str:
    """A JWT VC as an Identus issuer signs one (ES256K, its long-form did:prism's issuing key)
    to the holder's did:prism, of the type the Socious Wallet presents."""
    now = int(time.time())
    payload = {
        "iss": issuer.did,
        "sub": subject,
        "nbf": now - 60,
        "exp": now + 3600,
        "vc": {
            "@context": ["https://www.w3.org/2018/credentials/v1"],
            "type": [DIDCOMM_TYPE],
            "credentialSubject": {"id": subject, "type": "verification", **WALLET_HOLDER},
        },
    }
    return prism.sign_es256k(payload, issuer.keys["issuing-0"], f"{issuer.did}#issuing-0")


def the_didcomm_loop(base: str, token: str, wallet: Any) -> dict[str, Any]:
    """Staff ask for the Socious KYC credential over DIDComm from a trusted Identus issuer; the
    wallet (``tests/didcomm/holder.py``'s ``Holder``) holds one, accepts the individual's
    invitation and presents; the lookup once the individual is decided."""
    staff = Api(base, {"Authorization": f"Bearer {token}"})
    apikey = staff("POST", "/integrations", 201, {"name": "Demo DIDComm backend"})["key"]
    backend = Api(base, {"apikey": apikey})
    schema = staff("POST", "/schemas", 201, DIDCOMM_SCHEMA)
    staff("POST", f"/schemas/{schema['id']}/publish", 200)
    issuer = prism.make()
    trusted = prism.parse(issuer.did).canonical
    verification = staff(
        "POST",
        "/verifications",
        201,
        {
            "name": "Socious Wallet holders",
            "description": "We check your identity with your Socious Wallet.",
            "schema_id": schema["id"],
            "claims": ["first_name", "last_name"],
            "attributes": [{"name": "country", "operator": "EQUAL", "value": "GB"}],
            "trusted_issuers": [trusted],
            "wallet_protocols": ["didcomm"],
        },
    )
    wallet.store_credential(identus_credential(issuer, wallet.prism_did()))
    customer_id = "wallet-holder-1"
    individual = backend(
        "POST",
        "/verifications/individuals",
        201,
        {"customer_id": customer_id, "verification_id": verification["id"]},
    )
    link = backend("GET", f"/verifications/{individual['id']}/connect", 200)["connection_url"]
    if not link.startswith(f"{base}/didcomm/invitation?_oob="):
        raise DemoError(f"the connection URL is not a DIDComm invitation: {link}")
    wallet.accept(link)
    wallet.wait_for("presented", timeout=DIDCOMM_TIMEOUT)
    deadline = time.monotonic() + DIDCOMM_TIMEOUT
    while backend("GET", f"/verifications/{individual['id']}/verify", 200)["status"] in (
        "CREATED",
        "REQUESTED",
    ):
        if time.monotonic() > deadline:
            raise DemoError(f"the presentation was not decided in {DIDCOMM_TIMEOUT} s")
        time.sleep(0.1)
    decision = backend("GET", f"/verifications/{verification['id']}/individuals/{customer_id}", 200)
    return {"issuer": trusted, "decision": decision}


def print_summary(outcome: dict[str, Any], workdir: Path, keep: bool = False) -> None:
    """The run in a few lines. The dashboard address and sign-in token only with ``keep``:
    without it the service stops right after, and an address that answers nothing is no
    invitation to visit."""
    received, presented, decision = outcome["received"], outcome["presented"], outcome["decision"]
    reason = f" ({decision['validation_error']})" if decision.get("validation_error") else ""
    again = outcome["again"]
    again_reason = f" ({again['validation_error']})" if again.get("validation_error") else ""
    lines = [
        "Verity demo",
        f"  service        {outcome['service']} (gunicorn, SQLite in {workdir})",
        f"  organization   {outcome['organization']['name']} ({outcome['organization']['plan']})",
        f"  issuer         {received['issuer']}",
        f"  credential     {outcome['credential']['status']}: {received['vct']} with "
        f"{', '.join(sorted(received['claims']))}",
        f"  presented      {', '.join(presented['disclosed'])} to {presented['verifier']}",
        f"  lookup         {decision['status']}{reason}, claims "
        f"{json.dumps(decision.get('claims') or {}, sort_keys=True)}",
        f"  revoked        credential {outcome['revoked']['status']} by the staff",
        f"  again          {again['status']}{again_reason}",
        didcomm_line(outcome["didcomm"]),
    ]
    if keep:
        lines += [
            f"  dashboard      {outcome['dashboard']}",
            f"  sign-in token  {outcome['token']}",
        ]
    lines.append(f"  outcome        {outcome['outcome']}")
    if not keep:
        lines.append("  (stopped: make demo KEEP=1 keeps it running, to sign in to the dashboard)")
    print("\n".join(lines), flush=True)


def didcomm_line(didcomm: dict[str, Any] | None) -> str:
    if didcomm is None:
        return "  didcomm        skipped (Node.js not found)"
    decision = didcomm["decision"]
    reason = f": {decision['validation_error']}" if decision.get("validation_error") else ""
    return (
        f"  didcomm        {decision['status']} (Socious Wallet SDK {didcomm['sdk']} over "
        f"DIDComm{reason}), claims {json.dumps(decision.get('claims') or {}, sort_keys=True)}"
    )


def succeeded(outcome: dict[str, Any]) -> bool:
    """The loop's outcome as expected, and the DIDComm run VERIFIED when it ran."""
    didcomm = outcome["didcomm"]
    return outcome["outcome"] == EXPECTED and (
        didcomm is None or didcomm["decision"]["status"] == "VERIFIED"
    )


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--keep", action="store_true", help="keep serving until Ctrl-C")
    arguments = options.parse_args(argv)
    # SIGTERM ends the demo like Ctrl-C does: through the cleanup below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = Path(tempfile.mkdtemp(prefix="verity-demo-"))
    try:
        outcome = run_demo(workdir, keep=arguments.keep)
    except KeyboardInterrupt:
        print("\nStopped.", file=sys.stderr)
        return 130
    except DemoError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if succeeded(outcome) else 1


if __name__ == "__main__":
    sys.exit(main())
