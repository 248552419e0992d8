"""The example backends of ``examples/`` against a live Verity, end to end.

One Verity serves both: gunicorn on a free loopback port with ``make run``'s settings on a
database of its own (a temporary SQLite file; a PostgreSQL schema of its own in the PostgreSQL
pass), plus ``TRUST_ALLOW_PRIVATE=1`` so webhooks may go to a backend on this machine, and its
job worker, which delivers the webhooks. The staff set up what the
examples need (an integration key, a verification, one webhook endpoint for each example); a
credential is issued into the project's holder. Then, for each example, as a person would:
the backend's ``/verify`` redirects the browser to the individual's page, the holder
(``python -m app.holder present``) answers the page's wallet link, and the backend shows that
it received a webhook whose signature it checked and read ``VERIFIED`` from the lookup.

The same Verity also serves ``examples/socious_verify_client.py``, a backend written from
Socious Verify's own guide and never edited for Verity: its organization set to
``socious-verify``, a person follows the client's no-code link as a browser would and the
Identus SDK holder (the Socious Wallet's agent) presents over DIDComm through the tests'
loopback mediator; the client reads the decision and the claims from ``body``.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from didcomm.holder import Holder
from didcomm.mediator import Mediator
from interop.interop_support import interop_database
from support.npm import ensure_node_modules

from app.didcomm import prism
from demo.run import (
    DIDCOMM_SCHEMA,
    PERSON,
    SCHEMA,
    WALLET_HOLDER,
    Api,
    environment,
    free_port,
    gunicorn,
    identus_credential,
    stop,
    wait_ready,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# Huey's idle polling backs off to 10 s, and a delivery then takes a lookup: well within this.
OUTCOME_TIMEOUT = 60
START_TIMEOUT = 30
OUTCOME_EVENTS = ["individual.verified", "individual.failed"]


@dataclass
class Verity:
    base: str
    staff: Api
    apikey: str
    verification_id: str
    wallet: Path
    env: dict[str, str]


@dataclass
class Backend:
    base: str
    endpoint_id: str


@contextlib.contextmanager
def process(command: list[str], env: dict[str, str], log: Path, cwd: Path = ROOT) -> Iterator[Any]:
    """A process in a group of its own, stopped (children too) however the block ends."""
    with log.open("wb") as out:
        started = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            yield started
        finally:
            stop(started)


def holder(verity: Verity, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "app.holder", "--wallet", str(verity.wallet), *args],
        cwd=ROOT, env=verity.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


# The operator's commands (``flask db upgrade``, ``users create``, ``orgs create --plan PRO``,
# ``tokens create``) in one process rather than four: each start of the app costs seconds.
OPERATOR = """
import json
from wsgi import app

run = app.test_cli_runner()
for args in (
    ["db", "upgrade"],
    ["users", "create", "--email", "staff@example.org", "--name", "Staff"],
    ["orgs", "create", "--name", "Example Org", "--owner-email", "staff@example.org",
     "--plan", "PRO"],
    ["tokens", "create", "--email", "staff@example.org"],
):
    done = run.invoke(args=args, catch_exceptions=False)
    assert done.exit_code == 0, (args, done.output)
print(json.dumps(json.loads(done.output)))
"""


def operator_setup(env: dict[str, str]) -> str:
    """A migrated database with a staff user of a PRO organization; their sign-in token."""
    done = subprocess.run(
        [sys.executable, "-c", OPERATOR], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])["token"]


@pytest.fixture(scope="module")
def verity(tmp_path_factory) -> Iterator[Verity]:
    workdir = tmp_path_factory.mktemp("verity")
    port = free_port()
    with interop_database(workdir) as database_url:
        env = environment(workdir, port)
        env.update(
            DATABASE_URL=database_url,
            JOBS_QUEUE_URL=f"sqlite:///{workdir / 'jobs.sqlite3'}",
            TRUST_ALLOW_PRIVATE="1",
        )
        yield from live_verity(workdir, env, port)


def live_verity(workdir: Path, env: dict[str, str], port: int) -> Iterator[Verity]:
    token = operator_setup(env)
    base = f"http://127.0.0.1:{port}"
    log = workdir / "server.log"
    worker_command = [str(Path(sys.executable).parent / "flask"), "--app", "wsgi", "jobs", "worker"]
    with gunicorn(env, port, log) as server, process(worker_command, env, workdir / "worker.log"):
        wait_ready(server, base, log)
        staff = Api(base, {"Authorization": f"Bearer {token}"})
        apikey = staff("POST", "/integrations", 201, {"name": "Example backends"})["key"]
        schema = staff("POST", "/schemas", 201, SCHEMA)
        staff("POST", f"/schemas/{schema['id']}/publish", 200)
        verification = staff("POST", "/verifications", 201, {
            "name": "Members", "schema_id": schema["id"],
            "claims": ["given_name", "family_name", "member_number"],
            "anonymous_open": "refused",
        })  # fmt: skip
        recipient = Api(base, {"apikey": apikey})("POST", "/recipients", 201, {
            "first_name": "Erika", "last_name": "Mustermann", "email": "erika@example.org",
        })  # fmt: skip
        credential = staff("POST", "/credentials", 201, {
            "name": "Membership", "schema_id": schema["id"], "recipient_id": recipient["id"],
            "claims": [{"name": name, "value": value} for name, value in PERSON.items()],
        })  # fmt: skip
        served = Verity(base, staff, apikey, verification["id"], workdir / "wallet.json", env)
        holder(served, "receive", credential["offer_url"])
        yield served


def start_backend(verity: Verity, command: list[str], cwd: Path, log: Path) -> Any:
    """A webhook endpoint for the backend on a free port, then the backend with its settings."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    endpoint = verity.staff("POST", "/webhooks/endpoints", 201, {
        "url": f"{base}/webhooks/verity", "events": OUTCOME_EVENTS,
    })  # fmt: skip
    env = {
        **os.environ,
        "VERITY_URL": verity.base,
        "VERITY_APIKEY": verity.apikey,
        "VERITY_VERIFICATION_ID": verity.verification_id,
        "VERITY_WEBHOOK_SECRET": endpoint["secret"],
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    started = process(command, env, log, cwd)
    return started, Backend(base, endpoint["id"])


def wait_listening(running: subprocess.Popen, backend: Backend, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert running.poll() is None, log.read_text()
        with contextlib.suppress(requests.ConnectionError):
            requests.get(f"{backend.base}/customers/nobody", timeout=2)
            return
        time.sleep(0.2)
    pytest.fail(f"the example backend did not listen within {START_TIMEOUT} s:\n{log.read_text()}")


def the_person_verifies_through(verity: Verity, backend: Backend, customer_id: str) -> dict:
    """Redirected by the backend to the person's page, whose wallet link the holder answers;
    then what the backend knows of the customer once the webhook came."""
    sent = requests.get(
        f"{backend.base}/verify", params={"customer_id": customer_id}, allow_redirects=False,
        timeout=15,
    )  # fmt: skip
    assert sent.status_code == 303, sent.text
    page_url = sent.headers["Location"]
    assert re.fullmatch(rf"{re.escape(verity.base)}/i/[0-9a-f-]{{36}}", page_url)
    page = requests.get(page_url, timeout=15)
    assert page.status_code == 200
    link = re.search(r'id="open-wallet"[^>]*href="([^"]+)"', page.text)
    assert link, "the person's page has no wallet link"
    presented = holder(verity, "present", html.unescape(link.group(1)))
    assert presented["presented"], presented

    deadline = time.monotonic() + OUTCOME_TIMEOUT
    while time.monotonic() < deadline:
        known = requests.get(f"{backend.base}/customers/{customer_id}", timeout=5)
        if known.status_code == 200:
            return known.json()
        time.sleep(0.5)
    pytest.fail(f"no verified webhook reached the example within {OUTCOME_TIMEOUT} s")


def delivered(verity: Verity, backend: Backend) -> bool:
    """Verity saw the backend's 2xx (recorded just after the backend answered)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        path = f"/webhooks/endpoints/{backend.endpoint_id}/deliveries"
        states = [delivery["state"] for delivery in verity.staff("GET", path, 200)["results"]]
        if "DELIVERED" in states:
            return True
        time.sleep(0.2)
    return False


def unsigned_is_refused(backend: Backend) -> None:
    """A forged event (a signature made with another secret) is answered 400 and not believed."""
    forged = requests.post(
        f"{backend.base}/webhooks/verity",
        data=json.dumps({"type": "individual.verified", "timestamp": "2026-01-01T00:00:00Z",
                         "data": {"customer_id": "mallory"}}),
        headers={"Content-Type": "application/json", "webhook-id": "msg_forged",
                 "webhook-timestamp": str(int(time.time())),
                 "webhook-signature": "v1,bm90IHRoZSBzaWduYXR1cmUgVmVyaXR5IG1hZGU="},
        timeout=5,
    )  # fmt: skip
    assert forged.status_code == 400
    assert requests.get(f"{backend.base}/customers/mallory", timeout=5).status_code == 404


def assert_verified(outcome: dict) -> None:
    assert outcome["webhook"]["signature"] == "verified"
    assert outcome["webhook"]["type"] == "individual.verified"
    assert outcome["webhook"]["id"].startswith("msg_")
    assert outcome["status"] == "VERIFIED"
    assert outcome["opened_by"]["kind"] == "backend"  # opened with the key, as refused needs
    assert outcome["claims"] == {
        "given_name": "Erika", "family_name": "Mustermann", "member_number": 1042,
    }  # fmt: skip


def test_the_python_example_redirects_checks_the_signed_webhook_and_reads_verified(
    verity, tmp_path
):
    log = tmp_path / "python-example.log"
    command = [sys.executable, str(EXAMPLES / "python" / "backend.py")]
    started, backend = start_backend(verity, command, ROOT, log)
    with started as running:
        wait_listening(running, backend, log)
        unsigned_is_refused(backend)
        outcome = the_person_verifies_through(verity, backend, "python-customer-1")
        assert_verified(outcome)
        assert delivered(verity, backend)


def test_the_node_example_redirects_checks_the_signed_webhook_and_reads_verified(verity, tmp_path):
    node = shutil.which("node")
    assert node, "the Node example needs node on PATH"
    ensure_node_modules(EXAMPLES / "node", "standardwebhooks")
    log = tmp_path / "node-example.log"
    started, backend = start_backend(verity, [node, "backend.mjs"], EXAMPLES / "node", log)
    with started as running:
        wait_listening(running, backend, log)
        unsigned_is_refused(backend)
        outcome = the_person_verifies_through(verity, backend, "node-customer-1")
        assert_verified(outcome)
        assert delivered(verity, backend)


SOCIOUS_VERIFY_CLIENT = EXAMPLES / "socious_verify_client.py"


def socious_verify_client(verity: Verity, verification_id: str, *args: str) -> subprocess.Popen:
    """The old client as its operator runs it: its own settings, both of Socious Verify's
    addresses (app and API) now Verity's one base URL, and Verity's key; nothing else."""
    env = {
        **os.environ,
        "SHINID_APP": verity.base,
        "SHINID_API": verity.base,
        "SHINID_API_KEY": verity.apikey,
        "SHINID_VERIFICATION_ID": verification_id,
        "SHINID_TIMEOUT": str(OUTCOME_TIMEOUT),
    }
    return subprocess.Popen(
        [sys.executable, str(SOCIOUS_VERIFY_CLIENT), *args], cwd=EXAMPLES, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def finished(client: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = client.communicate(timeout=OUTCOME_TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        stop(client)
        out, err = client.communicate()
    return client.returncode, out, err


def test_the_socious_verify_client_unchanged_reads_verified_and_body_after_a_didcomm_presentation(
    verity,
):
    """Acceptance (issue 34): the old client gets the decision and the claims from ``body``
    through its no-code link and a DIDComm presentation by the Identus SDK 7.0.0 holder."""
    staff = verity.staff
    organization_id = staff("GET", "/me", 200)["acting_organization_id"]
    staff(
        "PATCH", f"/organizations/{organization_id}", 200, {"api_compatibility": "socious-verify"}
    )
    try:
        schema = staff("POST", "/schemas", 201, DIDCOMM_SCHEMA)
        staff("POST", f"/schemas/{schema['id']}/publish", 200)
        issuer = prism.make()  # an Identus-shaped KYC issuer: a long-form did:prism, ES256K
        verification = staff("POST", "/verifications", 201, {
            "name": "Socious KYC", "schema_id": schema["id"],
            # Every claim the old client reads from body: Verity keeps only those asked for.
            "claims": ["first_name", "last_name", "country"],
            "trusted_issuers": [prism.parse(issuer.did).canonical],
            "wallet_protocols": ["didcomm"],
        })  # fmt: skip
        customer = "shinid-customer-1"
        with Mediator() as mediator, Holder(mediator.did) as wallet:
            wallet.store_credential(identus_credential(issuer, wallet.prism_did()))
            # The backend polls from before the person comes (the lookup is a 400 until then).
            waiting = socious_verify_client(verity, verification["id"], "wait", customer)
            try:
                code, out, err = finished(
                    socious_verify_client(verity, verification["id"], "link", customer)
                )
                assert code == 0, err
                link = out.strip()
                assert link == (
                    f"{verity.base}/connect/redirect/{verification['id']}?customer={customer}"
                )
                # The person's browser: the link, its 303 to their page, the page's wallet link.
                sent = requests.get(link, allow_redirects=False, timeout=15)
                assert sent.status_code == 303, sent.text
                page_url = requests.compat.urljoin(link, sent.headers["Location"])
                assert re.fullmatch(rf"{re.escape(verity.base)}/i/[0-9a-f-]{{36}}", page_url)
                page = requests.get(page_url, timeout=15)
                assert page.status_code == 200
                found = re.search(r'id="open-wallet"[^>]*href="([^"]+)"', page.text)
                assert found, "the person's page has no wallet link"
                invitation = html.unescape(found.group(1))
                assert invitation.startswith(f"{verity.base}/didcomm/invitation?_oob=")
                wallet.accept(invitation)
                wallet.wait_for("presented", timeout=OUTCOME_TIMEOUT)
            finally:
                code, out, err = finished(waiting)
        assert code == 0, out + err
        outcome = json.loads(out)
        assert outcome == {
            "status": "VERIFIED",
            "claims": WALLET_HOLDER,
            "validation_error": None,
            "verified_at": outcome["verified_at"],
            "verification": "Socious KYC",
        }
        assert outcome["verified_at"]
        # Opened by the link (the person), as Socious Verify's link did.
        lookup = Api(verity.base, {"apikey": verity.apikey})(
            "GET", f"/verifications/{verification['id']}/individuals/{customer}", 200
        )
        assert lookup["opened_by"]["kind"] == "link"
    finally:
        staff("PATCH", f"/organizations/{organization_id}", 200, {"api_compatibility": "verity"})
