"""Black-box contract checks: the documented surface of a running service.

The service is started the way ``make run`` starts it (migrations, public schemas, gunicorn with
two workers) on a SQLite file of its own, and driven only through HTTP and the operator commands
of the README. Every expectation comes from the contract existing clients rely on, as the
README documents it, or from the README's decisions where the contract is silent. Nothing
here imports the application.

Test names say which contract row they check. A test marked ``xfail(strict=True)`` records a
place where the running service disagrees with the documents; its reason names the discrepancy.
"""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import datetime
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlparse

import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

if os.environ.get("VERITY_TEST_DB") == "postgresql":
    pytest.skip(
        "black-box run: the service under test always gets a SQLite file of its own",
        allow_module_level=True,
    )

ROOT = Path(__file__).resolve().parents[2]
PID_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"  # EU PID, shipped public schema
NO_ROWS = "sql: no rows in result set"
ADULTS = [{"attribute_id": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}]
TIMEOUT = 15

# Configuration that would change the deployment under test (README, Configuration).
SCRUBBED_ENV = (
    "OIDC_ISSUER",
    "OIDC_CLIENT_ID",
    "OIDC_CLIENT_SECRET",
    "BILLING_PROVIDER",
    "STRIPE_API_KEY",
    "STRIPE_PRICE_PRO",
    "STRIPE_PRICE_PREMIUM_PLUS",
    "STRIPE_API_BASE",
    "VERITY_ENV",
    "TRUSTED_PROXY_COUNT",
    "RATELIMIT_STORAGE_URI",
    "VOUCHER_EXCHANGE_LIMIT",
    "ISSUER_NONCE_LIMIT",
    "SESSION_TOKEN_HOURS",
    "CONNECT_LINK_SECONDS",
    "PRESENTATION_REQUEST_SECONDS",
    "MAX_CONTENT_LENGTH",
    "FLASK_APP",
)


# --------------------------------------------------------------------------- the service


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Service:
    def __init__(self, base: str, env: dict[str, str], log_path: Path):
        self.base = base
        self.env = env
        self.log_path = log_path

    def cli(self, *args: str):
        """Run an operator command; it prints JSON on stdout."""
        proc = subprocess.run(
            [sys.executable, "-m", "flask", "--app", "wsgi", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, f"flask {' '.join(args)}: {proc.stderr}"
        return json.loads(proc.stdout)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def call(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        apikey: str | None = None,
        identity: str | None = None,
        headers: dict[str, str] | None = None,
        **kwargs,
    ) -> requests.Response:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if apikey is not None:
            sent["apikey"] = apikey
        if identity is not None:
            sent["current-identity"] = identity
        return requests.request(
            method, self.base + path, headers=sent, timeout=TIMEOUT, allow_redirects=False, **kwargs
        )


@pytest.fixture(scope="module")
def service():
    with tempfile.TemporaryDirectory(prefix="verity-bb-") as tmp:
        tmpdir = Path(tmp)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        env.update(
            DATABASE_URL=f"sqlite:///{tmpdir / 'bb.sqlite3'}",
            PUBLIC_URL=base,
            REQUEST_LOG="1",
            PYTHONUNBUFFERED="1",
        )
        log_path = tmpdir / "server.log"
        svc = Service(base, env, log_path)
        for args in (("db", "upgrade"), ("schemas", "seed")):
            proc = subprocess.run(
                [sys.executable, "-m", "flask", "--app", "wsgi", *args],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert proc.returncode == 0, f"flask {' '.join(args)}: {proc.stderr}"
        with open(log_path, "wb") as log_file:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "--workers",
                    "2",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "wsgi:app",
                ],
                cwd=ROOT,
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
            try:
                deadline = time.monotonic() + 30
                while True:
                    assert server.poll() is None, f"gunicorn exited:\n{svc.log()}"
                    with contextlib.suppress(requests.RequestException):
                        if requests.get(base + "/healthz", timeout=5).status_code == 200:
                            break
                    assert time.monotonic() < deadline, f"no /healthz:\n{svc.log()}"
                    time.sleep(0.1)
                yield svc
            finally:
                server.terminate()
                try:
                    server.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait(timeout=5)


def _owner(svc: Service, email: str, orgs: list[tuple[str, str]]):
    """One user, their organizations in the given order (oldest first), and a session token."""
    svc.cli("users", "create", "--email", email)
    made = [
        svc.cli("orgs", "create", "--name", name, "--owner-email", email, "--plan", plan)
        for name, plan in orgs
    ]
    token = svc.cli("tokens", "create", "--email", email)
    return token["token"], [org["id"] for org in made]


def _created(resp: requests.Response) -> dict:
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()


@pytest.fixture(scope="module")
def world(service):
    svc = service
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        owner = pool.submit(
            _owner, svc, "owner@bb.example", [("Owner Free", "FREE"), ("Owner Pro", "PRO")]
        )
        other = pool.submit(_owner, svc, "other@bb.example", [("Other Premium", "PREMIUM_PLUS")])
        free = pool.submit(_owner, svc, "free@bb.example", [("Free Only", "FREE")])
        codes = pool.submit(
            svc.cli, "vouchers", "mint", "--plan", "PRO", "--days", "30", "--count", "2"
        )
        t1, (owner_free, owner_pro) = owner.result()
        t2, (other_org,) = other.result()
        t3, (free_only,) = free.result()
        vouchers = codes.result()["codes"]

    def new_org(token: str, name: str) -> str:
        # The creator is OWNER, new organizations are FREE.
        org = _created(svc.call("POST", "/organizations", token=token, json={"name": name}))
        assert org["plan"] == "FREE", org
        return org["id"]

    other_switch = new_org(t2, "Other Switch")
    voucher_a = new_org(t3, "Voucher A")
    voucher_b = new_org(t3, "Voucher B")

    w = SimpleNamespace(
        t1=t1,
        owner_free=owner_free,
        owner_pro=owner_pro,
        t2=t2,
        other_org=other_org,
        other_switch=other_switch,
        t3=t3,
        free_only=free_only,
        voucher_a=voucher_a,
        voucher_b=voucher_b,
        vouchers=vouchers,
    )

    # The acting caller's own records (owner@, acting as Owner Pro).
    w.key1 = _created(
        svc.call("POST", "/integrations", token=t1, identity=owner_pro, json={"name": "backend"})
    )["key"]
    w.v1 = _created(
        svc.call(
            "POST",
            "/verifications",
            token=t1,
            identity=owner_pro,
            json={
                "name": "Adults",
                "schema_id": PID_SCHEMA,
                "claims": ["given_name"],
                "attributes": ADULTS,
            },
        )
    )["id"]
    w.v1_pinned = _created(
        svc.call(
            "POST",
            "/verifications",
            token=t1,
            identity=owner_pro,
            json={
                "name": "Adults, pinned issuer",
                "schema_id": PID_SCHEMA,
                "claims": ["given_name"],
                "attributes": ADULTS,
                "trusted_issuers": ["https://issuer.bb.example"],
            },
        )
    )["id"]

    # Another organization's records (other@, Premium+).
    integration2 = _created(
        svc.call("POST", "/integrations", token=t2, identity=other_org, json={"name": "theirs"})
    )
    w.key2, w.integration2 = integration2["key"], integration2["id"]
    w.v2 = _created(
        svc.call(
            "POST",
            "/verifications",
            token=t2,
            identity=other_org,
            json={"name": "Theirs", "schema_id": PID_SCHEMA, "attributes": ADULTS},
        )
    )["id"]
    w.customer2 = "their-customer"
    _created(
        svc.call(
            "POST",
            "/verifications/individuals",
            json={"customer_id": w.customer2, "verification_id": w.v2},
        )
    )
    w.recipient2 = _created(
        svc.call(
            "POST",
            "/recipients",
            apikey=w.key2,
            json={"first_name": "Theo", "last_name": "Other", "email": "theo@bb.example"},
        )
    )["id"]
    w.policy2 = _created(
        svc.call("POST", "/policy-requests", apikey=w.key2, json={"verification_id": w.v2})
    )["id"]
    w.premium_schema = _created(
        svc.call(
            "POST",
            "/schemas",
            token=t2,
            identity=other_org,
            json={
                "name": "Gold member",
                "description": "A Premium+ schema",
                "vct": "urn:bb.example:gold:1",
                "premium_plus": True,
                "attributes": [{"name": "level", "description": "Level", "type": "TEXT"}],
            },
        )
    )["id"]
    w.private_schema2 = _created(
        svc.call(
            "POST",
            "/schemas",
            token=t2,
            identity=other_org,
            json={
                "name": "Staff badge",
                "description": "Their own draft",
                "public": False,
                "vct": "urn:bb.example:badge:1",
                "premium_plus": False,
                "attributes": [{"name": "team", "description": "Team", "type": "TEXT"}],
            },
        )
    )["id"]
    published = svc.call(
        "POST", f"/schemas/{w.premium_schema}/publish", token=t2, identity=other_org
    )
    assert published.status_code == 200, published.text
    # Only an operator makes a schema public (README, Schemas); then every organization sees it.
    assert svc.cli("schemas", "publish-public", w.premium_schema)["public"] is True
    return w


@pytest.fixture
def rand() -> str:
    return str(uuid.uuid4())


def assert_error(resp: requests.Response, status: int, code: str | None = None) -> dict:
    """Every error is JSON with a string `error` and `code`."""
    assert resp.status_code == status, (resp.status_code, resp.text)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), resp.headers
    body = resp.json()
    assert isinstance(body, dict), body
    assert isinstance(body.get("error"), str) and body["error"], body
    assert isinstance(body.get("code"), str) and body["code"], body
    assert set(body) <= {"error", "code", "tier"}, body
    if code is not None:
        assert body["code"] == code, body
    return body


def assert_not_found(resp: requests.Response) -> None:
    """The contract's "400 not found", with its stable code."""
    body = assert_error(resp, 400, "NOT_FOUND")
    assert body["error"] == NO_ROWS, body


def open_individual(svc: Service, verification_id: str, customer_id: str) -> dict:
    resp = svc.call(
        "POST",
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification_id},
    )
    assert resp.status_code in (200, 201), resp.text
    return resp.json()


# --------------------------------------------------------------------------- a wallet
# Only what a holder's wallet does per OpenID4VP 1.0 with an SD-JWT VC: read the request object
# the connection link points at, present a credential from a did:jwk issuer with a key-binding
# JWT, and post it to response_uri (direct_post).


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _public_jwk(key: ec.EllipticCurvePrivateKey) -> dict:
    numbers = key.public_key().public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": _b64(numbers.x.to_bytes(32, "big")),
        "y": _b64(numbers.y.to_bytes(32, "big")),
    }


def _es256(key: ec.EllipticCurvePrivateKey, header: dict, payload: dict) -> str:
    def part(obj: dict) -> str:
        return _b64(json.dumps(obj, separators=(",", ":")).encode())

    signing_input = f"{part(header)}.{part(payload)}"
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def request_of(connection_url: str) -> dict:
    """The request a link carries (unsigned, by value) or points at (by reference)."""
    assert connection_url.startswith("openid4vp://"), connection_url
    query = {name: values[0] for name, values in parse_qs(urlparse(connection_url).query).items()}
    if "request_uri" not in query:
        objects = ("dcql_query", "client_metadata")
        return {name: json.loads(v) if name in objects else v for name, v in query.items()}
    fetched = requests.get(query["request_uri"], timeout=TIMEOUT)
    assert fetched.status_code == 200, fetched.text
    return json.loads(_unb64(fetched.text.strip().split(".")[1]))


def present(connection_url: str, claims: dict, *, with_issuer: bool = True) -> str:
    """Answer the connection link with an SD-JWT VC disclosing ``claims``; return its issuer."""
    request = request_of(connection_url)
    query = request["dcql_query"]["credentials"][0]

    issuer_key = ec.generate_private_key(ec.SECP256R1())
    holder_key = ec.generate_private_key(ec.SECP256R1())
    issuer = "did:jwk:" + _b64(json.dumps(_public_jwk(issuer_key), separators=(",", ":")).encode())
    disclosures = [
        _b64(json.dumps([_b64(os.urandom(16)), name, value]).encode())
        for name, value in claims.items()
    ]
    now = int(time.time())
    payload = {
        "vct": query["meta"]["vct_values"][0],
        "iat": now,
        "exp": now + 3600,
        "cnf": {"jwk": _public_jwk(holder_key)},
        "_sd_alg": "sha-256",
        "_sd": sorted(_b64(hashlib.sha256(d.encode()).digest()) for d in disclosures),
    }
    header = {"alg": "ES256", "typ": "dc+sd-jwt"}
    if with_issuer:
        payload["iss"] = issuer
        header["kid"] = f"{issuer}#0"
    sd_jwt = _es256(issuer_key, header, payload) + "~" + "".join(f"{d}~" for d in disclosures)
    kb_jwt = _es256(
        holder_key,
        {"alg": "ES256", "typ": "kb+jwt"},
        {
            "iat": now,
            "aud": request["client_id"],
            "nonce": request["nonce"],
            "sd_hash": _b64(hashlib.sha256(sd_jwt.encode()).digest()),
        },
    )
    answered = requests.post(
        request["response_uri"],
        data={"vp_token": json.dumps({query["id"]: [sd_jwt + kb_jwt]}), "state": request["state"]},
        timeout=TIMEOUT,
    )
    assert answered.status_code == 200, (answered.status_code, answered.text)
    return issuer


def _years_ago(years: int) -> str:
    today = datetime.date.today()
    return today.replace(year=today.year - years, day=min(today.day, 28)).isoformat()


# ================================================================ endpoints


def test_post_individuals_creates_201_then_same_body_200(service, world):
    body = {"customer_id": "crm-42", "verification_id": world.v1}
    first = service.call("POST", "/verifications/individuals", json=body)
    assert first.status_code == 201, first.text
    created = first.json()
    # The individual's wire shape.
    for field in (
        "id",
        "individual_id",
        "verification_id",
        "customer_id",
        "status",
        "validation_error",
        "connection_url",
        "connection_at",
        "verified_at",
        "created_at",
        "updated_at",
    ):
        assert field in created, field
    assert created["id"] == created["individual_id"]
    uuid.UUID(created["individual_id"])
    assert created["verification_id"] == world.v1
    assert created["customer_id"] == "crm-42"
    assert created["status"] == "CREATED"
    assert created["validation_error"] is None

    again = service.call("POST", "/verifications/individuals", json=body)
    assert again.status_code == 200, again.text
    assert again.json() == created


def test_post_individuals_one_individual_per_customer_and_verification(service, world):
    a = open_individual(service, world.v1, "crm-pair-a")
    b = open_individual(service, world.v1, "crm-pair-b")
    other_verification = open_individual(service, world.v1_pinned, "crm-pair-a")
    ids = {a["individual_id"], b["individual_id"], other_verification["individual_id"]}
    assert len(ids) == 3


def test_post_individuals_concurrent_retries_return_the_same_individual(service, world):
    body = {"customer_id": "crm-race", "verification_id": world.v1}
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda _: service.call("POST", "/verifications/individuals", json=body), range(8)
            )
        )
    assert sorted(r.status_code for r in answers) == [200] * 7 + [201], [
        (r.status_code, r.text) for r in answers
    ]
    assert len({r.json()["individual_id"] for r in answers}) == 1


def test_connect_returns_connection_url_and_the_same_link_on_repeat(service, world):
    individual = open_individual(service, world.v1, "crm-connect")
    first = service.call("GET", f"/verifications/{individual['individual_id']}/connect")
    assert first.status_code == 200, first.text
    link = first.json()
    assert link["individual_id"] == individual["individual_id"]
    assert link["connection_url"].startswith("openid4vp://"), link
    assert link["status"] == "REQUESTED"  # a connect link was handed out
    second = service.call("GET", f"/verifications/{individual['individual_id']}/connect")
    assert second.status_code == 200, second.text
    assert second.json()["connection_url"] == link["connection_url"]
    assert second.json()["connection_at"] == link["connection_at"]


def test_connect_parallel_calls_agree_on_one_link(service, world):
    individual = open_individual(service, world.v1, "crm-connect-race")
    path = f"/verifications/{individual['individual_id']}/connect"
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: service.call("GET", path), range(6)))
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers]
    assert len({r.json()["connection_url"] for r in answers}) == 1


def test_connection_link_carries_the_request_for_the_wallet(service, world):
    individual = open_individual(service, world.v1, "crm-request-object")
    link = service.call("GET", f"/verifications/{individual['individual_id']}/connect").json()
    request = request_of(link["connection_url"])
    assert request["response_mode"] == "direct_post"
    assert request["response_uri"].startswith(service.base)
    assert request["client_id"] == "redirect_uri:" + request["response_uri"]
    asked = [c["path"] for c in request["dcql_query"]["credentials"][0]["claims"]]
    # The claims the verification wants plus those its conditions read, nothing else.
    assert sorted(asked) == [["birthdate"], ["given_name"]]


def test_verify_returns_200_with_status_and_no_disclosed_claims(service, world):
    individual = open_individual(service, world.v1, "crm-verify")
    path = f"/verifications/{individual['individual_id']}/verify"
    before = service.call("GET", path)
    assert before.status_code == 200, before.text
    assert before.json()["status"] == "CREATED"
    assert before.json()["validation_error"] is None
    service.call("GET", f"/verifications/{individual['individual_id']}/connect")
    after = service.call("GET", path)
    assert after.status_code == 200, after.text
    body = after.json()
    assert body["individual_id"] == individual["individual_id"]
    assert body["status"] == "REQUESTED"
    assert "validation_error" in body
    assert "claims" not in body  # unauthenticated endpoints never return claims


def test_authenticated_lookup_with_apikey_header(service, world):
    individual = open_individual(service, world.v1, "crm-lookup")
    resp = service.call(
        "GET", f"/verifications/{world.v1}/individuals/crm-lookup", apikey=world.key1
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["individual_id"] == individual["individual_id"]
    assert body["customer_id"] == "crm-lookup"
    assert "status" in body and "validation_error" in body
    assert "claims" in body and "issuer" in body


def test_authenticated_lookup_with_apikey_query_parameter(service, world):
    individual = open_individual(service, world.v1, "crm-lookup-query")
    resp = service.call(
        "GET",
        f"/verifications/{world.v1}/individuals/crm-lookup-query",
        params={"apikey": world.key1},
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["individual_id"] == individual["individual_id"]


def test_authenticated_lookup_of_customer_never_opened_is_400_no_rows(service, world):
    resp = service.call(
        "GET", f"/verifications/{world.v1}/individuals/never-opened", apikey=world.key1
    )
    assert_not_found(resp)


def test_policy_request_create_and_status_with_apikey(service, world):
    created = service.call(
        "POST", "/policy-requests", apikey=world.key1, json={"verification_id": world.v1}
    )
    assert created.status_code == 201, created.text
    body = created.json()
    for field in ("id", "token", "url", "expires_at", "status"):
        assert field in body, field
    assert isinstance(body["token"], str) and body["token"]
    status = service.call("GET", f"/policy-requests/{body['id']}/status", apikey=world.key1)
    assert status.status_code == 200, status.text
    assert status.json()["status"] == body["status"]


def test_policy_request_status_410_when_its_token_has_expired(service, world):
    created = service.call(
        "POST",
        "/policy-requests",
        apikey=world.key1,
        json={"verification_id": world.v1, "expires_in": 1},
    )
    assert created.status_code == 201, created.text
    time.sleep(1.6)
    status = service.call(
        "GET", f"/policy-requests/{created.json()['id']}/status", apikey=world.key1
    )
    assert_error(status, 410, "EXPIRED")


def test_policy_request_for_a_recipient(service, world):
    recipient = _created(
        service.call(
            "POST",
            "/recipients",
            apikey=world.key1,
            json={"first_name": "Pia", "last_name": "Policy", "email": "pia@bb.example"},
        )
    )
    created = service.call(
        "POST",
        "/policy-requests",
        apikey=world.key1,
        json={"verification_id": world.v1, "recipient_id": recipient["id"]},
    )
    assert created.status_code == 201, created.text


def test_recipients_get_post_put_delete_with_apikey(service, world):
    posted = service.call(
        "POST",
        "/recipients",
        apikey=world.key1,
        json={
            "first_name": "Ann",
            "last_name": "Lee",
            "email": "ann@bb.example",
            "customer_id": "crm-ann",
        },
    )
    assert posted.status_code == 201, posted.text
    rid = posted.json()["id"]

    listed = service.call("GET", "/recipients", apikey=world.key1)
    assert listed.status_code == 200, listed.text
    page = listed.json()
    assert isinstance(page["total"], int)
    assert rid in [r["id"] for r in page["results"]]

    # On /recipients the id travels in the body or the query.
    in_body = service.call(
        "PUT", "/recipients", apikey=world.key1, json={"id": rid, "first_name": "Anne"}
    )
    assert in_body.status_code == 200, in_body.text
    assert in_body.json()["first_name"] == "Anne"
    in_query = service.call(
        "PUT", "/recipients", apikey=world.key1, params={"id": rid}, json={"last_name": "Leigh"}
    )
    assert in_query.status_code == 200, in_query.text
    assert (in_query.json()["first_name"], in_query.json()["last_name"]) == ("Anne", "Leigh")

    fetched = service.call("GET", f"/recipients/{rid}", apikey=world.key1)
    assert fetched.status_code == 200, fetched.text
    assert fetched.json()["last_name"] == "Leigh"

    deleted = service.call("DELETE", "/recipients", apikey=world.key1, params={"id": rid})
    assert deleted.status_code in (200, 204), deleted.text
    assert_not_found(service.call("GET", f"/recipients/{rid}", apikey=world.key1))
    assert_not_found(service.call("DELETE", "/recipients", apikey=world.key1, params={"id": rid}))


def test_post_verifications_with_session_token_201(service, world):
    resp = service.call(
        "POST",
        "/verifications",
        token=world.t1,
        identity=world.owner_pro,
        json={
            "name": "Residents",
            "description": "Country of residence",
            "schema_id": PID_SCHEMA,
            "type": "SINGLE",
            "claims": ["family_name"],
            "attributes": [
                {"attribute_id": "address.country", "operator": "IN", "value": ["DE", "NL"]}
            ],
            "trusted_issuers": [],
        },
    )
    assert resp.status_code == 201, resp.text
    body = resp.json()
    uuid.UUID(body["id"])
    assert body["schema_id"] == PID_SCHEMA
    fetched = service.call(
        "GET", f"/verifications/{body['id']}", token=world.t1, identity=world.owner_pro
    )
    assert fetched.status_code == 200, fetched.text
    # Records belong to the acting organization: the default one (Owner Free) does not see it.
    assert_not_found(service.call("GET", f"/verifications/{body['id']}", token=world.t1))


def test_post_auth_without_identity_provider_is_503_not_configured(service):
    assert_error(service.call("POST", "/auth", json={}), 503, "NOT_CONFIGURED")


def test_post_auth_session_without_identity_provider_is_503_not_configured(service):
    resp = service.call("POST", "/auth/session", json={"code": "c", "state": "s"})
    assert_error(resp, 503, "NOT_CONFIGURED")


def test_vouchers_exchange_unknown_code_404(service, world):
    resp = service.call(
        "POST",
        "/vouchers/exchange",
        token=world.t3,
        identity=world.voucher_b,
        json={"code": "vv_no-such-voucher"},
    )
    assert_error(resp, 404, "NOT_FOUND")


def test_vouchers_exchange_redeems_then_409_already_redeemed(service, world):
    code = world.vouchers[0]
    blocked = service.call(
        "POST", "/integrations", token=world.t3, identity=world.voucher_a, json={"name": "x"}
    )
    assert_error(blocked, 402, "UPGRADE_REQUIRED")

    redeemed = service.call(
        "POST", "/vouchers/exchange", token=world.t3, identity=world.voucher_a, json={"code": code}
    )
    assert redeemed.status_code == 200, redeemed.text
    # The acting organization is now on the paid plan.
    unblocked = service.call(
        "POST", "/integrations", token=world.t3, identity=world.voucher_a, json={"name": "x"}
    )
    assert unblocked.status_code == 201, unblocked.text

    again = service.call(
        "POST", "/vouchers/exchange", token=world.t3, identity=world.voucher_b, json={"code": code}
    )
    assert_error(again, 409, "ALREADY_REDEEMED")


def test_vouchers_exchange_on_a_paid_organization_409_and_voucher_kept(service, world):
    code = world.vouchers[1]
    paid = service.call(
        "POST", "/vouchers/exchange", token=world.t1, identity=world.owner_pro, json={"code": code}
    )
    assert_error(paid, 409, "ALREADY_PAID")
    kept = service.call(
        "POST", "/vouchers/exchange", token=world.t3, identity=world.voucher_b, json={"code": code}
    )
    assert kept.status_code == 200, kept.text


def test_vouchers_exchange_429_after_repeated_attempts_from_one_ip_and_nothing_else(service, world):
    # Keep this the last test to call /vouchers/exchange: the throttle window is a minute.
    statuses = []
    for attempt in range(80):
        resp = service.call(
            "POST",
            "/vouchers/exchange",
            token=world.t3,
            identity=world.voucher_b,
            json={"code": f"vv_guess-{attempt}"},
        )
        statuses.append(resp.status_code)
        if resp.status_code == 429:
            break
    assert statuses[-1] == 429, statuses
    assert set(statuses[:-1]) == {404}, statuses
    assert_error(resp, 429, "RATE_LIMITED")
    # Only /vouchers/exchange is throttled (8).
    for _ in range(30):
        assert service.call("GET", "/me", token=world.t3).status_code == 200
        again = service.call(
            "POST",
            "/verifications/individuals",
            json={"customer_id": "crm-after-throttle", "verification_id": world.v1},
        )
        assert again.status_code in (200, 201), again.text


# ============================================================= credentials

SESSION_ONLY = [
    ("GET", "/verifications"),
    ("POST", "/verifications"),
    ("GET", "/schemas"),
    ("GET", "/organizations"),
    ("GET", "/integrations"),
    ("POST", "/integrations"),
    ("GET", "/me"),
]


@pytest.mark.parametrize(("method", "path"), SESSION_ONLY)
def test_apikey_refused_on_session_only_resources_401(service, world, method, path):
    body = {"name": "x"} if method == "POST" else None
    assert_error(service.call(method, path, apikey=world.key1, json=body), 401, "UNAUTHORIZED")
    assert_error(
        service.call(method, path, params={"apikey": world.key1}, json=body), 401, "UNAUTHORIZED"
    )


def test_credentials_reachable_by_session_token_only(service, world):
    assert_error(service.call("GET", "/credentials", apikey=world.key1), 401, "UNAUTHORIZED")
    listed = service.call("GET", "/credentials", token=world.t1, identity=world.owner_pro)
    assert listed.status_code == 200, listed.text
    assert isinstance(listed.json()["total"], int)


def _apikey_only(world) -> list[tuple[str, str, dict]]:
    return [
        ("GET", f"/verifications/{world.v1}/individuals/crm-42", {}),
        ("POST", "/policy-requests", {"json": {"verification_id": world.v1}}),
        ("GET", f"/policy-requests/{uuid.uuid4()}/status", {}),
        ("GET", "/recipients", {}),
        ("POST", "/recipients", {"json": {"first_name": "A", "last_name": "B", "email": "a@b.c"}}),
        ("PUT", "/recipients", {"json": {"id": str(uuid.uuid4()), "first_name": "A"}}),
        ("DELETE", "/recipients", {"params": {"id": str(uuid.uuid4())}}),
    ]


def test_session_token_refused_on_apikey_resources_401(service, world):
    for method, path, kwargs in _apikey_only(world):
        resp = service.call(method, path, token=world.t1, identity=world.owner_pro, **kwargs)
        assert_error(resp, 401, "UNAUTHORIZED")


def test_missing_or_invalid_credentials_401(service, world):
    for method, path, kwargs in _apikey_only(world):
        assert_error(service.call(method, path, **kwargs), 401, "UNAUTHORIZED")
        assert_error(
            service.call(method, path, apikey="vk_not-a-real-key", **kwargs), 401, "UNAUTHORIZED"
        )
    for method, path in SESSION_ONLY:
        body = {"name": "x"} if method == "POST" else None
        assert_error(service.call(method, path, json=body), 401, "UNAUTHORIZED")
        assert_error(
            service.call(method, path, token="vs_not-a-real-token", json=body), 401, "UNAUTHORIZED"
        )


def test_key_rotation_deleted_integration_key_401_second_key_works(service, world):
    first = _created(
        service.call(
            "POST", "/integrations", token=world.t1, identity=world.owner_pro, json={"name": "old"}
        )
    )
    second = _created(
        service.call(
            "POST", "/integrations", token=world.t1, identity=world.owner_pro, json={"name": "new"}
        )
    )
    assert first["key"] != second["key"]
    listed = service.call("GET", "/integrations", token=world.t1, identity=world.owner_pro)
    assert listed.status_code == 200, listed.text
    assert first["key"] not in listed.text  # shown once, at creation
    assert service.call("GET", "/recipients", apikey=first["key"]).status_code == 200

    deleted = service.call(
        "DELETE", f"/integrations/{first['id']}", token=world.t1, identity=world.owner_pro
    )
    assert deleted.status_code in (200, 204), deleted.text
    assert_error(service.call("GET", "/recipients", apikey=first["key"]), 401, "UNAUTHORIZED")
    assert_error(
        service.call(
            "GET",
            f"/verifications/{world.v1}/individuals/crm-42",
            params={"apikey": first["key"]},
        ),
        401,
        "UNAUTHORIZED",
    )
    assert service.call("GET", "/recipients", apikey=second["key"]).status_code == 200


def test_current_identity_not_a_valid_organization_id_403_says_so(service, world):
    body = assert_error(service.call("GET", "/me", token=world.t1, identity="not-an-org-id"), 403)
    member = assert_error(service.call("GET", "/me", token=world.t1, identity=world.other_org), 403)
    assert "not-an-org-id" in body["error"]
    assert "valid" in body["error"].lower()
    assert body["code"] != member["code"]  # which of the two, machine-readably
    assert body["code"] == "INVALID_IDENTITY"  # README


def test_current_identity_of_a_non_member_403_says_so(service, world, rand):
    for org in (world.other_org, rand):
        body = assert_error(service.call("GET", "/me", token=world.t1, identity=org), 403)
        assert org in body["error"]
        assert "member" in body["error"].lower()
        assert body["code"] == "NOT_A_MEMBER"  # README
    # The same on a tier-gated action: the organization named must be one of the caller's.
    gated = service.call(
        "POST",
        "/verifications",
        token=world.t1,
        identity=world.other_org,
        json={"name": "x", "schema_id": PID_SCHEMA, "attributes": ADULTS},
    )
    assert_error(gated, 403, "NOT_A_MEMBER")


def test_default_organization_is_the_oldest_membership(service, world):
    me = service.call("GET", "/me", token=world.t1)
    assert me.status_code == 200, me.text
    assert me.json()["default_organization_id"] == world.owner_free
    assert me.json()["acting_organization_id"] == world.owner_free
    body = {"name": "Default org", "schema_id": PID_SCHEMA, "attributes": ADULTS}
    # Without current-identity the oldest membership (FREE) acts: 402.
    assert_error(
        service.call("POST", "/verifications", token=world.t1, json=body), 402, "UPGRADE_REQUIRED"
    )
    # current-identity picks the paid one.
    acting = service.call("GET", "/me", token=world.t1, identity=world.owner_pro)
    assert acting.json()["acting_organization_id"] == world.owner_pro
    ok = service.call("POST", "/verifications", token=world.t1, identity=world.owner_pro, json=body)
    assert ok.status_code == 201, ok.text


def test_default_organization_oldest_paid_membership_acts_without_header(service, world):
    ok = service.call(
        "POST",
        "/verifications",
        token=world.t2,
        json={"name": "Default paid", "schema_id": PID_SCHEMA, "attributes": ADULTS},
    )
    assert ok.status_code == 201, ok.text


# ================================================================ errors


def assert_upgrade_required(resp: requests.Response) -> None:
    """The 402 body shape: exactly error, code and tier."""
    assert resp.status_code == 402, (resp.status_code, resp.text)
    body = resp.json()
    assert set(body) == {"error", "code", "tier"}, body
    assert isinstance(body["error"], str) and body["error"]
    assert body["code"] == "UPGRADE_REQUIRED"
    assert body["tier"] == "FREE"


def test_free_org_creating_a_verification_402_exact_body(service, world):
    resp = service.call(
        "POST",
        "/verifications",
        token=world.t3,
        identity=world.free_only,
        json={"name": "Blocked", "schema_id": PID_SCHEMA, "attributes": ADULTS},
    )
    assert_upgrade_required(resp)
    # Without current-identity the default organization (Free Only, the oldest) acts: the same.
    resp = service.call(
        "POST",
        "/verifications",
        token=world.t3,
        json={"name": "Blocked", "schema_id": PID_SCHEMA, "attributes": ADULTS},
    )
    assert_upgrade_required(resp)


def test_free_org_creating_an_integration_402_exact_body(service, world):
    resp = service.call(
        "POST", "/integrations", token=world.t3, identity=world.free_only, json={"name": "x"}
    )
    assert_upgrade_required(resp)


def test_free_org_minting_organization_codes_402_exact_body(service, world):
    resp = service.call(
        "POST",
        f"/organizations/{world.free_only}/codes",
        token=world.t3,
        identity=world.free_only,
        json={},
    )
    assert_upgrade_required(resp)


def test_operator_set_plan_moves_the_402_gate(service, world):
    def create():
        return service.call(
            "POST", "/integrations", token=world.t2, identity=world.other_switch, json={"name": "s"}
        )

    assert_upgrade_required(create())
    assert service.cli("orgs", "set-plan", world.other_switch, "PRO")["plan"] == "PRO"
    assert create().status_code == 201
    assert service.cli("orgs", "set-plan", world.other_switch, "FREE")["plan"] == "FREE"
    assert_upgrade_required(create())


def test_premium_plus_schema_from_a_non_premium_plus_org_403(service, world):
    body = {
        "name": "Gold",
        "schema_id": world.premium_schema,
        "attributes": [{"attribute_id": "level", "operator": "EQUAL", "value": "gold"}],
    }
    refused = service.call(
        "POST", "/verifications", token=world.t1, identity=world.owner_pro, json=body
    )
    assert_error(refused, 403)
    allowed = service.call(
        "POST", "/verifications", token=world.t2, identity=world.other_org, json=body
    )
    assert allowed.status_code == 201, allowed.text


UNKNOWN_ID_CASES = [
    ("connect", "GET", "/verifications/{rand}/connect", None, None),
    ("verify", "GET", "/verifications/{rand}/verify", None, None),
    (
        "open-individual",
        "POST",
        "/verifications/individuals",
        None,
        {"customer_id": "crm-x", "verification_id": "{rand}"},
    ),
    ("lookup", "GET", "/verifications/{rand}/individuals/crm-42", "apikey", None),
    ("policy-status", "GET", "/policy-requests/{rand}/status", "apikey", None),
    ("policy-create", "POST", "/policy-requests", "apikey", {"verification_id": "{rand}"}),
    ("recipient", "GET", "/recipients/{rand}", "apikey", None),
    ("recipient-put", "PUT", "/recipients", "apikey", {"id": "{rand}", "first_name": "A"}),
    ("verification", "GET", "/verifications/{rand}", "session", None),
    ("verification-individuals", "GET", "/verifications/{rand}/individuals", "session", None),
    ("verification-delete", "DELETE", "/verifications/{rand}", "session", None),
    ("schema", "GET", "/schemas/{rand}", "session", None),
    ("organization", "GET", "/organizations/{rand}", "session", None),
    ("integration-delete", "DELETE", "/integrations/{rand}", "session", None),
    (
        "verification-schema",
        "POST",
        "/verifications",
        "session",
        {"name": "x", "schema_id": "{rand}", "attributes": []},
    ),
]


def _fill(value, rand: str):
    if isinstance(value, str):
        return value.replace("{rand}", rand)
    if isinstance(value, dict):
        return {k: _fill(v, rand) for k, v in value.items()}
    return value


def _auth(world, kind: str | None) -> dict:
    if kind == "apikey":
        return {"apikey": world.key1}
    if kind == "session":
        return {"token": world.t1, "identity": world.owner_pro}
    return {}


@pytest.mark.parametrize(
    ("method", "path", "auth", "body"),
    [pytest.param(*case[1:], id=case[0]) for case in UNKNOWN_ID_CASES],
)
def test_unknown_uuid_is_400_sql_no_rows_in_result_set(
    service, world, rand, method, path, auth, body
):
    resp = service.call(method, _fill(path, rand), json=_fill(body, rand), **_auth(world, auth))
    assert_not_found(resp)


def test_malformed_id_answers_like_an_unknown_one(service, world):
    # README "Malformed IDs": an ID that is not a UUID cannot exist.
    assert_not_found(service.call("GET", "/verifications/not-a-uuid/connect"))
    assert_not_found(service.call("GET", "/verifications/not-a-uuid/verify"))
    assert_not_found(
        service.call("GET", "/verifications/not-a-uuid/individuals/crm-42", apikey=world.key1)
    )


def test_deleted_verification_is_hidden_and_opens_no_individuals(service, world):
    vid = _created(
        service.call(
            "POST",
            "/verifications",
            token=world.t1,
            identity=world.owner_pro,
            json={"name": "Short-lived", "schema_id": PID_SCHEMA, "attributes": ADULTS},
        )
    )["id"]
    kept = open_individual(service, vid, "crm-before-delete")
    deleted = service.call(
        "DELETE", f"/verifications/{vid}", token=world.t1, identity=world.owner_pro
    )
    assert deleted.status_code in (200, 204), deleted.text
    assert_not_found(
        service.call("GET", f"/verifications/{vid}", token=world.t1, identity=world.owner_pro)
    )
    assert_not_found(
        service.call(
            "POST",
            "/verifications/individuals",
            json={"customer_id": "crm-after-delete", "verification_id": vid},
        )
    )
    # Its individuals are kept (README): the person's status poll still answers.
    assert service.call("GET", f"/verifications/{kept['individual_id']}/verify").status_code == 200


def _other_org_pairs(world, rand: str):
    """(request for another organization's record, the same request for a missing record)."""
    k1 = {"apikey": world.key1}
    s1 = {"token": world.t1, "identity": world.owner_pro}
    return [
        (("GET", f"/verifications/{world.v2}", s1), ("GET", f"/verifications/{rand}", s1)),
        (
            ("GET", f"/verifications/{world.v2}/individuals", s1),
            ("GET", f"/verifications/{rand}/individuals", s1),
        ),
        (
            ("PUT", f"/verifications/{world.v2}", {**s1, "json": {"name": "Mine now"}}),
            ("PUT", f"/verifications/{rand}", {**s1, "json": {"name": "Mine now"}}),
        ),
        (("DELETE", f"/verifications/{world.v2}", s1), ("DELETE", f"/verifications/{rand}", s1)),
        (("GET", f"/organizations/{world.other_org}", s1), ("GET", f"/organizations/{rand}", s1)),
        (("GET", f"/schemas/{world.private_schema2}", s1), ("GET", f"/schemas/{rand}", s1)),
        (
            ("POST", f"/schemas/{world.private_schema2}/publish", s1),
            ("POST", f"/schemas/{rand}/publish", s1),
        ),
        (
            (
                "POST",
                "/verifications",
                {**s1, "json": {"name": "x", "schema_id": world.private_schema2, "attributes": []}},
            ),
            (
                "POST",
                "/verifications",
                {**s1, "json": {"name": "x", "schema_id": rand, "attributes": []}},
            ),
        ),
        (
            ("DELETE", f"/integrations/{world.integration2}", s1),
            ("DELETE", f"/integrations/{rand}", s1),
        ),
        (
            ("GET", f"/verifications/{world.v2}/individuals/{world.customer2}", k1),
            ("GET", f"/verifications/{rand}/individuals/{world.customer2}", k1),
        ),
        (
            ("GET", f"/policy-requests/{world.policy2}/status", k1),
            ("GET", f"/policy-requests/{rand}/status", k1),
        ),
        (("GET", f"/recipients/{world.recipient2}", k1), ("GET", f"/recipients/{rand}", k1)),
        (
            ("PUT", "/recipients", {**k1, "json": {"id": world.recipient2, "first_name": "X"}}),
            ("PUT", "/recipients", {**k1, "json": {"id": rand, "first_name": "X"}}),
        ),
        (
            ("DELETE", "/recipients", {**k1, "params": {"id": world.recipient2}}),
            ("DELETE", "/recipients", {**k1, "params": {"id": rand}}),
        ),
        (
            ("POST", "/policy-requests", {**k1, "json": {"verification_id": world.v2}}),
            ("POST", "/policy-requests", {**k1, "json": {"verification_id": rand}}),
        ),
        (
            (
                "POST",
                "/policy-requests",
                {**k1, "json": {"verification_id": world.v1, "recipient_id": world.recipient2}},
            ),
            (
                "POST",
                "/policy-requests",
                {**k1, "json": {"verification_id": world.v1, "recipient_id": rand}},
            ),
        ),
    ]


def test_another_organizations_record_looks_the_same_as_a_missing_one(service, world, rand):
    for theirs, missing in _other_org_pairs(world, rand):
        a = service.call(theirs[0], theirs[1], **theirs[2])
        b = service.call(missing[0], missing[1], **missing[2])
        assert (a.status_code, a.json()) == (b.status_code, b.json()), (theirs[:2], a.text)
        assert_not_found(a)
    # And nothing of theirs was touched.
    assert service.call("GET", f"/verifications/{world.v2}", token=world.t2).status_code == 200
    assert (
        service.call("GET", f"/recipients/{world.recipient2}", apikey=world.key2).json()[
            "first_name"
        ]
        == "Theo"
    )
    assert service.call("GET", "/recipients", apikey=world.key2).status_code == 200


def test_unknown_route_404_is_json(service):
    assert_error(service.call("GET", "/no/such/route"), 404)
    assert_error(service.call("POST", "/no/such/route", json={}), 404)


def test_wrong_method_405_is_json(service):
    assert_error(service.call("PATCH", "/verifications/individuals", json={}), 405)
    assert_error(service.call("DELETE", "/healthz"), 405)


def test_malformed_json_400_is_json(service, world):
    for data in (b"{not json", b"[1, 2]", b""):
        resp = service.call(
            "POST",
            "/verifications/individuals",
            data=data,
            headers={"Content-Type": "application/json"},
        )
        assert_error(resp, 400, "INVALID_REQUEST")
    resp = service.call(
        "POST",
        "/recipients",
        apikey=world.key1,
        data=b'{"first_name": ',
        headers={"Content-Type": "application/json"},
    )
    assert_error(resp, 400, "INVALID_REQUEST")


def test_rejected_values_and_unknown_fields_400_are_json(service, world):
    unknown_field = service.call(
        "POST",
        "/verifications/individuals",
        json={"customer_id": "crm-x", "verification_id": world.v1, "customer": "typo"},
    )
    assert_error(unknown_field, 400, "INVALID_REQUEST")
    missing = service.call("POST", "/verifications/individuals", json={"customer_id": "crm-x"})
    assert_error(missing, 400, "INVALID_REQUEST")
    out_of_range = service.call(
        "POST",
        "/policy-requests",
        apikey=world.key1,
        json={"verification_id": world.v1, "expires_in": 86401},
    )
    assert_error(out_of_range, 400, "INVALID_REQUEST")


def test_payload_too_large_413_is_json(service):
    big = b'{"customer_id": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    resp = service.call(
        "POST",
        "/verifications/individuals",
        data=big,
        headers={"Content-Type": "application/json"},
    )
    assert_error(resp, 413)


# ===================================================== FAILED is not an error


def test_verify_failed_condition_200_status_failed_names_attribute_and_operator(service, world):
    individual = open_individual(service, world.v1, "crm-underage")
    iid = individual["individual_id"]
    link = service.call("GET", f"/verifications/{iid}/connect").json()
    present(link["connection_url"], {"given_name": "Kim", "birthdate": _years_ago(10)})
    for _ in range(2):  # FAILED stays FAILED on every read
        resp = service.call("GET", f"/verifications/{iid}/verify")
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["status"] == "FAILED"
        assert "birthdate" in body["validation_error"]
        assert "AGE_AT_LEAST" in body["validation_error"]
        assert "claims" not in body
    lookup = service.call(
        "GET", f"/verifications/{world.v1}/individuals/crm-underage", apikey=world.key1
    )
    assert lookup.status_code == 200, lookup.text
    assert lookup.json()["status"] == "FAILED"


def test_verify_failed_untrusted_issuer_message_shape(service, world):
    individual = open_individual(service, world.v1_pinned, "crm-untrusted")
    iid = individual["individual_id"]
    link = service.call("GET", f"/verifications/{iid}/connect").json()
    present(link["connection_url"], {"given_name": "Uma", "birthdate": _years_ago(30)})
    resp = service.call("GET", f"/verifications/{iid}/verify")
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "FAILED"
    assert re.search(
        r"Credential issuer .+ is not trusted by this verification", resp.json()["validation_error"]
    )


def test_verify_failed_no_issuer_while_issuers_pinned_message_shape(service, world):
    individual = open_individual(service, world.v1_pinned, "crm-no-issuer")
    iid = individual["individual_id"]
    link = service.call("GET", f"/verifications/{iid}/connect").json()
    present(
        link["connection_url"],
        {"given_name": "Noa", "birthdate": _years_ago(30)},
        with_issuer=False,
    )
    resp = service.call("GET", f"/verifications/{iid}/verify")
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "FAILED"
    assert (
        "Presented credential carries no issuer, and this verification pins its issuers"
        in resp.json()["validation_error"]
    )


def test_good_presentation_is_verified_and_keeps_only_asked_claims(service, world):
    individual = open_individual(service, world.v1, "crm-adult")
    iid = individual["individual_id"]
    link = service.call("GET", f"/verifications/{iid}/connect").json()
    issuer = present(
        link["connection_url"],
        {"given_name": "Ben", "family_name": "Unasked", "birthdate": _years_ago(40)},
    )
    polled = service.call("GET", f"/verifications/{iid}/verify")
    assert polled.status_code == 200, polled.text
    assert polled.json()["status"] == "VERIFIED"
    assert "claims" not in polled.json()
    lookup = service.call(
        "GET", f"/verifications/{world.v1}/individuals/crm-adult", apikey=world.key1
    ).json()
    assert lookup["status"] == "VERIFIED"
    assert lookup["issuer"] == issuer
    # The record keeps only the claims the verification asked for.
    assert lookup["claims"]["given_name"] == "Ben"
    assert "family_name" not in lookup["claims"]


# ========================================================= the rest of the map


def test_api_map_health_readiness_and_openapi(service):
    assert service.call("GET", "/healthz").status_code == 200
    assert service.call("GET", "/readyz").status_code == 200
    doc = service.call("GET", "/openapi.json")
    assert doc.status_code == 200, doc.text
    assert doc.json()["openapi"].startswith("3.1")


def test_person_page_for_an_individual(service, world):
    individual = open_individual(service, world.v1, "crm-page")
    resp = service.call("GET", f"/i/{individual['individual_id']}")
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"].startswith("text/html")


def test_person_page_for_a_policy_request(service, world):
    created = _created(
        service.call(
            "POST", "/policy-requests", apikey=world.key1, json={"verification_id": world.v1}
        )
    )
    resp = requests.get(created["url"], timeout=TIMEOUT)
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"].startswith("text/html")


# ================================================= query strings are logged


def test_apikey_query_parameter_never_appears_in_the_server_log(service, world):
    bogus = "vk_bogus-key-" + uuid.uuid4().hex
    marker = "crm-log-" + uuid.uuid4().hex[:8]
    open_individual(service, world.v1, marker)
    lookup = f"/verifications/{world.v1}/individuals/{marker}"
    sent = [
        ("GET", lookup, {"apikey": world.key1}, 200),
        ("GET", lookup, {"page": "1", "apikey": world.key1, "x": "y"}, 200),
        ("GET", lookup, {"apikey": bogus}, 401),
        ("PATCH", lookup, {"apikey": world.key1}, 405),
        ("GET", "/recipients", {"apikey": world.key1}, 200),
        ("GET", f"/no-such-route/{marker}", {"apikey": world.key1}, 404),
    ]
    for method, path, params, status in sent:
        assert service.call(method, path, params=params).status_code == status
    assert service.call("GET", "/me", token=world.t1).status_code == 200

    deadline = time.monotonic() + 5
    while marker not in service.log() or f"no-such-route/{marker}" not in service.log():
        assert time.monotonic() < deadline, "the requests were not logged (REQUEST_LOG=1)"
        time.sleep(0.1)
    log = service.log()
    lines = [line for line in log.splitlines() if marker in line]
    assert len(lines) >= sum(marker in path for _, path, _, _ in sent), lines
    for secret in (world.key1, world.key2, bogus, world.t1, world.t2, world.t3):
        assert secret not in log
