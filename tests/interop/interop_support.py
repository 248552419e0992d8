"""The interop matrix's pieces: deployments of the service as ``make run`` serves them, each with
its own settings on one shared database, and the OpenWallet Foundation's OpenID4VP client
(``owf_wallet.mjs``, npm packages pinned in this folder's package-lock.json) as their wallet.

Nothing here imports the application: the service is reached over HTTP and its operator
commands, like the black-box tests do.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
import signing_certificates
from cryptography.hazmat.primitives import serialization
from hardening.served import Served, flask, prepare, served, service_env
from sqlalchemy import create_engine, text
from support.npm import ensure_node_modules
from wallets import FRAME, PERSON, PID_VCT

from app.request_log import redacted_path

HERE = Path(__file__).resolve().parent
PID_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"  # EU PID, a shipped public schema
TIMEOUT = 30
# The deployment's host in PUBLIC_URL: a DNS name, so that a certificate can name it
# (x509_san_dns wants the response URI's host to be the client ID's name).
HOST = "localhost"
# Settings of the developer's environment that would change the deployments under test.
SCRUBBED = (
    "PUBLIC_URL",
    "RESPONSE_ENCRYPTION",
    "DC_API_RESPONSE_MODE",
    "VERIFIER_PROFILE",
    "REQUEST_SIGNING_CERT_FILE",
    "REQUEST_SIGNING_KEY_FILE",
    "REQUEST_CLIENT_ID_PREFIX",
    "REQUEST_URI_METHOD",
    "REQUEST_BY_REFERENCE",
    "CONNECT_LINK_SECONDS",
    "PRESENTATION_REQUEST_SECONDS",
    "VERITY_ENV",
)
OPEN_WALLET = re.compile(r'id="open-wallet"[^>]*href="([^"]+)"')
DC_REQUEST = re.compile(r'data-request-url="([^"]+)"')
DC_RESPONSE = re.compile(r'data-response-url="([^"]+)"')


# --------------------------------------------------------------------------- the certificate


@dataclass(frozen=True)
class Pki:
    """A CA the wallet trusts and a leaf it issued for ``localhost``, as a deployment's files."""

    anchor_pem: str
    settings: dict[str, str]  # REQUEST_SIGNING_CERT_FILE and REQUEST_SIGNING_KEY_FILE
    # base64url SHA-256 of the leaf's DER: the x509_hash client identifier's value.
    leaf_hash: str


def make_pki(directory: Path) -> Pki:
    made = signing_certificates.make_pki((HOST,))
    digest = hashlib.sha256(made.leaf.public_bytes(serialization.Encoding.DER)).digest()
    return Pki(
        signing_certificates.pem(made.ca).decode(),
        signing_certificates.write_files(directory, made),
        base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
    )


# --------------------------------------------------------------------------- the database


@contextlib.contextmanager
def interop_database(directory: Path) -> Iterator[str]:
    """A database of the matrix's own: a SQLite file, or a PostgreSQL schema of this run's."""
    if os.environ.get("VERITY_TEST_DB") != "postgresql":
        yield f"sqlite:///{directory / 'interop.sqlite3'}"
        return
    url = os.environ["TEST_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg://", 1)
    schema = f"verity_interop_{os.getpid()}"
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        separator = "&" if "?" in url else "?"
        yield f"{url}{separator}options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        engine.dispose()


# --------------------------------------------------------------------------- deployments


@dataclass(frozen=True)
class Mode:
    """One way to deploy the service: its client identifier prefix, response mode and the
    method the wallet fetches a signed request with."""

    prefix: str  # redirect_uri, x509_san_dns, x509_hash
    response_mode: str  # direct_post, direct_post.jwt
    request_uri_method: str | None = None  # get or post; None: unsigned, by value
    dc_api_response_mode: str = "dc_api.jwt"  # over the browser API: dc_api.jwt or dc_api
    # org-iso-mdoc DeviceRequests signed (readerAuth) with the PKI's leaf as reader certificate
    reader_auth: bool = False

    @property
    def signed(self) -> bool:
        return self.prefix != "redirect_uri"

    @property
    def id(self) -> str:
        parts = [self.prefix, "signed" if self.signed else "unsigned", self.response_mode]
        parts += [self.request_uri_method] if self.request_uri_method else []
        # The default (dc_api.jwt) leaves the ID as it was: those cells share one server.
        parts += [self.dc_api_response_mode] if self.dc_api_response_mode != "dc_api.jwt" else []
        parts += ["reader_auth"] if self.reader_auth else []
        return "-".join(parts)

    def settings(self, pki: Pki) -> dict[str, str]:
        settings: dict[str, str] = {}
        if self.response_mode == "direct_post.jwt":
            settings["RESPONSE_ENCRYPTION"] = "1"
        if self.signed:
            settings.update(pki.settings)
        if self.prefix == "x509_hash":
            settings["REQUEST_CLIENT_ID_PREFIX"] = "x509_hash"
        if self.request_uri_method == "post":
            settings["REQUEST_URI_METHOD"] = "post"
        if self.dc_api_response_mode != "dc_api.jwt":
            settings["DC_API_RESPONSE_MODE"] = self.dc_api_response_mode
        if self.reader_auth:
            settings["READER_AUTH_CERT_FILE"] = pki.settings["REQUEST_SIGNING_CERT_FILE"]
            settings["READER_AUTH_KEY_FILE"] = pki.settings["REQUEST_SIGNING_KEY_FILE"]
        return settings


@dataclass
class Organization:
    """The organization every deployment serves: its verification and integration key, and
    its owner's session token for the staff API."""

    verification_id: str
    apikey: str
    staff_token: str = ""

    @property
    def staff(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.staff_token}"}


@dataclass
class Deployment:
    server: Served
    organization: Organization

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return requests.request(
            method, self.server.url(path), timeout=TIMEOUT, allow_redirects=False, **kwargs
        )

    def backend(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.call(method, path, headers={"apikey": self.organization.apikey}, **kwargs)

    def log_position(self) -> int:
        """Where the server's log ends now: ``methods_served`` reads only what comes after."""
        return len(self.server.log())

    def methods_served(self, path: str, after: int = 0) -> list[str]:
        """The HTTP methods the server's request log shows for ``path`` after ``after``, in
        order. The log redacts the request's ID in the path, so the path is compared redacted
        and ``after`` keeps other requests' lines out."""
        path = redacted_path(path, b"")
        methods = []
        for line in self.server.log()[after:].splitlines():
            start = line.find("{")
            with contextlib.suppress(ValueError):
                entry = json.loads(line[start:]) if start >= 0 else {}
                if isinstance(entry, dict) and entry.get("path") == path:
                    methods.append(entry["method"])
        return methods

    @property
    def origin(self) -> str:
        parts = urlsplit(self.server.base)
        return f"{parts.scheme}://{parts.netloc}"

    # The person's side: what a backend hands them, and the links on their page.

    def open_individual(self) -> tuple[str, str]:
        """A new individual: its ID and customer ID."""
        customer_id = f"crm-{uuid.uuid4().hex[:12]}"
        response = self.call(
            "POST",
            "/verifications/individuals",
            json={"customer_id": customer_id, "verification_id": self.organization.verification_id},
        )
        assert response.status_code == 201, response.text
        return response.json()["id"], customer_id

    def connect_link(self, individual_id: str) -> str:
        response = self.call("GET", f"/verifications/{individual_id}/connect")
        assert response.status_code == 200, response.text
        return response.json()["connection_url"]

    def open_policy(self) -> dict[str, Any]:
        response = self.backend(
            "POST",
            "/policy-requests",
            json={"verification_id": self.organization.verification_id},
        )
        assert response.status_code == 201, response.text
        return response.json()

    def page(self, path_or_url: str) -> str:
        response = self.call("GET", urlsplit(path_or_url).path)
        assert response.status_code == 200, response.text
        return response.text

    # The backend's side: the decision, from the authenticated lookups only.

    def individual_status(self, customer_id: str) -> str:
        vid = self.organization.verification_id
        response = self.backend("GET", f"/verifications/{vid}/individuals/{customer_id}")
        assert response.status_code == 200, response.text
        return response.json()["status"]

    def policy_status(self, policy_id: str) -> str:
        response = self.backend("GET", f"/policy-requests/{policy_id}/status")
        assert response.status_code == 200, response.text
        return response.json()["status"]


def wallet_link(page_html: str) -> str:
    match = OPEN_WALLET.search(page_html)
    assert match, "the page has no wallet link"
    return html.unescape(match.group(1))


def dc_api_urls(page_html: str, base: str) -> tuple[str, str]:
    """The request and response addresses of the page's Digital Credentials API button."""
    request, response = DC_REQUEST.search(page_html), DC_RESPONSE.search(page_html)
    assert request and response, "the page has no Digital Credentials API button"
    return (
        urljoin(base, html.unescape(request.group(1))),
        urljoin(base, html.unescape(response.group(1))),
    )


@dataclass
class Deployments:
    """One server per mode on one database, all started at once (their start-ups overlap) and
    stopped at the end; the organization they serve is made once, on the default deployment."""

    directory: Path
    database_url: str
    pki: Pki
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    servers: dict[str, Future[Served]] = field(default_factory=dict)
    organization: Future[Organization] | None = None
    pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(max_workers=16))

    def env(self, **settings: str) -> dict[str, str]:
        env = {k: v for k, v in service_env(self.database_url).items() if k not in SCRUBBED}
        return {**env, **settings}

    def start(self, modes: list[Mode]) -> None:
        """What ``make run`` does first (migrations, public schemas), once for all modes; then
        every mode's server and the default one, without waiting for them."""
        prepare(self.env())
        # make run with no settings at all (PUBLIC_URL the address served), and two workers.
        self.serve("default", self.env(), workers=2, host=None)
        for mode in modes:
            self.serve(mode.id, self.env(**mode.settings(self.pki)))
        self.organization = self.pool.submit(make_organization, self.env(), self.servers["default"])

    def serve(self, name: str, env: dict[str, str], workers: int = 1, host: str | None = HOST):
        if name not in self.servers:
            self.servers[name] = self.pool.submit(self._served, name, env, workers, host)

    def _served(self, name: str, env: dict[str, str], workers: int, host: str | None) -> Served:
        manager = served(env, self.directory / f"{name}.log", workers=workers, public_host=host)
        server = manager.__enter__()
        self.stack.push(manager.__exit__)
        return server

    def get(self, mode: Mode) -> Deployment:
        self.serve(mode.id, self.env(**mode.settings(self.pki)))
        return self.deployment(mode.id)

    def default(self) -> Deployment:
        return self.deployment("default")

    def deployment(self, name: str) -> Deployment:
        assert self.organization is not None, "start() first"
        return Deployment(self.servers[name].result(), self.organization.result())

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.stack.close()


def make_organization(
    env: dict[str, str],
    server: Future[Served],
    name: str = "Interop",
    owner: str = "owner@interop.test",
) -> Organization:
    """A paid organization with an integration key and a verification, made the way an operator
    and staff do: operator commands (while the servers start), then the staff API."""

    def cli(*args: str) -> dict[str, Any]:
        return json.loads(flask(env, *args))

    cli("users", "create", "--email", owner)
    cli("orgs", "create", "--name", name, "--owner-email", owner, "--plan", "PRO")
    token = cli("tokens", "create", "--email", owner)["token"]
    staff = {"Authorization": f"Bearer {token}"}
    base = server.result().base
    key = requests.post(
        f"{base}/integrations", json={"name": "backend"}, headers=staff, timeout=TIMEOUT
    )
    assert key.status_code == 201, key.text
    verification = requests.post(
        f"{base}/verifications",
        json={
            "name": "Adult residents",
            "description": "We check that you are of age and live in the EU.",
            "schema_id": PID_SCHEMA,
            "claims": ["given_name", "family_name"],
            "attributes": [
                {"attribute_id": "birthdate", "operator": "AGE_AT_LEAST", "value": 18},
                {"name": "address.country", "operator": "IN", "value": ["FR", "DE", "NL"]},
            ],
            "trusted_issuers": [],
        },
        headers=staff,
        timeout=TIMEOUT,
    )
    assert verification.status_code == 201, verification.text
    return Organization(verification.json()["id"], key.json()["key"], token)


# --------------------------------------------------------------------------- the wallet


@dataclass(frozen=True)
class Answer:
    """What the wallet resolved from the request, and how the verifier took its response."""

    request: dict[str, Any]
    status: int
    body: dict[str, Any]
    # The same answer posted again ({"status", "body"}), when the job asked for a replay.
    replay: dict[str, Any] | None = None


CREDENTIAL = {"vct": PID_VCT, "claims": PERSON, "frame": FRAME}


def run_wallet(job: dict[str, Any]) -> Answer:
    """One run of the OWF client (one node process); a refusal on either side fails the test
    with the client's own words."""
    ensure_node_modules(HERE, "@openid4vc/openid4vp")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run the OpenID4VP interop wallet")
    completed = subprocess.run(
        [node, "owf_wallet.mjs"],
        cwd=HERE,
        input=json.dumps({"credential": CREDENTIAL, **job}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    result = json.loads(completed.stdout or "{}")
    if completed.returncode != 0:
        raise AssertionError(f"the OWF wallet failed: {result.get('error') or completed.stderr}")
    return Answer(result["request"], result["status"], result["body"], result.get("replay"))


def answer_link(link: str, pki: Pki | None, **options: Any) -> Answer:
    return run_wallet(
        {"kind": "link", "link": link, "trust_anchor": pki.anchor_pem if pki else None, **options}
    )


def answer_dc_api(
    deployment: Deployment,
    page_html: str,
    protocols: list[str],
    pki: Pki | None,
    **options: Any,
) -> Answer:
    request_url, response_url = dc_api_urls(page_html, deployment.server.base)
    return run_wallet(
        {
            "kind": "dc_api",
            "request_url": request_url,
            "response_url": response_url,
            "origin": deployment.origin,
            "protocols": protocols,
            "trust_anchor": pki.anchor_pem if pki else None,
            **options,
        }
    )


# Transaction data (OpenID4VP 1.0 §5.1): one EUDI TS12 payment, as a backend attaches it.
PAYMENT = {
    "type": "urn:eudi:sca:payment:1",
    "payload": {
        "transaction_id": "8D8AC610-566D-4EF0-9C22-186B2A5ED793",
        "payee": {"name": "Merchant", "id": "DE89370400440532013000"},
        "currency": "EUR",
        "amount": 23.58,
    },
}


def payment_individual(deployment: Deployment) -> str:
    """The organization enables the payment type (staff API); its backend opens an individual
    with one payment attached. The customer ID."""
    staff = deployment.organization.staff
    (membership,) = deployment.call("GET", "/organizations", headers=staff).json()["results"]
    enabled = deployment.call(
        "PATCH",
        f"/organizations/{membership['organization']['id']}",
        json={"transaction_data_types": [PAYMENT["type"]]},
        headers=staff,
    )
    assert enabled.status_code == 200, enabled.text
    customer_id = f"pay-{uuid.uuid4().hex[:12]}"
    opened = deployment.backend(
        "POST",
        "/verifications/individuals",
        json={
            "customer_id": customer_id,
            "verification_id": deployment.organization.verification_id,
            "transaction_data": [PAYMENT],
        },
    )
    assert opened.status_code == 201, opened.text
    return customer_id
