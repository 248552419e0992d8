"""``make demo``: the whole loop on this machine in one command, with nothing left behind.

In a temporary directory it builds an embedded SQLite database (never ``instance/``), starts
the service with gunicorn on a free loopback port, and then, as an operator, a staff member, a
person and a backend would:

1. creates a user, a demo organization on the PRO plan and a sign-in token (operator commands);
2. creates an integration key, a schema (published), a recipient and a verification (JSON API);
3. issues a credential to the recipient and takes it into a wallet file with the holder
   (``app.holder``) through OpenID4VCI 1.0: offer, metadata, token, nonce, proof, credential;
4. opens an individual of the verification and presents the credential through OpenID4VP 1.0;
5. reads the authenticated lookup, which is where a backend takes the decision from: VERIFIED;
6. revokes the credential (staff), and the person presents it again at once: FAILED.

It prints the dashboard address, a sign-in token and the outcome (VERIFIED, then FAILED once
revoked), then stops the server and removes the directory, also on failure or Ctrl-C.
``--keep`` leaves the service running until Ctrl-C so the dashboard can be visited with that
token.

The service runs with the settings ``make run`` has: ``PUBLIC_URL`` the address it serves
(``http://127.0.0.1:<port>``) and no ``TRUST_ALLOW_PRIVATE``. The credential's issuer is the demo
organization at ``http://127.0.0.1:<port>/issuers/<id>``, one of the deployment's own, whose
keys and status list the verifier reads from the database, never over the network.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


@contextlib.contextmanager
def gunicorn(env: dict[str, str], port: int, log_path: Path) -> Iterator[subprocess.Popen]:
    """gunicorn in a process group of its own, stopped (workers too) however the block ends."""
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


def wait_ready(process: subprocess.Popen, base: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DemoError(f"gunicorn exited on start:\n{log_path.read_text()[-3000:]}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
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
    log_path = workdir / "server.log"
    with gunicorn(env, port, log_path) as process:
        wait_ready(process, base, log_path)
        try:
            outcome = the_loop(base, token, Wallet.open(workdir / "wallet.json"))
        except Exception as exc:
            raise DemoError(f"{exc}\n-- server log --\n{log_path.read_text()[-3000:]}") from exc
        outcome.update(
            {
                "service": base,
                "organization": organization,
                "dashboard": f"{base}/dashboard/login",
                "token": token,
            }
        )
        print_summary(outcome, workdir)
        if keep:
            print("\nThe service keeps running; Ctrl-C stops it.", flush=True)
            process.wait()
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


def print_summary(outcome: dict[str, Any], workdir: Path) -> None:
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
        f"  dashboard      {outcome['dashboard']}",
        f"  sign-in token  {outcome['token']}",
        f"  outcome        {outcome['outcome']}",
    ]
    print("\n".join(lines), flush=True)


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
    return 0 if outcome["outcome"] == EXPECTED else 1


if __name__ == "__main__":
    sys.exit(main())
