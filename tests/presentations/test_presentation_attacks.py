"""Attacks on the presentation endpoint, through HTTP, one table row per attack.

``tests/sdjwt/test_sdjwt_attacks.py`` pins each credential attack on the protocol package; here
the same table is posted to ``/oid4vp/responses/<id>`` so that nothing between the wallet and
the decision (the form, the vp_token, trust resolution, the decision order) lets one through.
The attacks only the service can meet follow: revocation, replays, unknown or missing state,
oversized bodies, and issuer or status list URLs that bait the service into fetching from
its own network.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from factories import make_staff, make_verification
from sdjwt.sdjwt_forge import NOW, Forge
from sdjwt.test_sdjwt_attacks import ATTACKS
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError
from support.race import all_at_once
from trust.trust_support import LocalServer
from trust.trust_support import sign as sign_jws
from wallets import Issuer, WalletRequest, node_presentation, post_response, read_request

from app import clock
from app.extensions import db
from app.statuslist import encode_status_list
from app.verifications.models import PresentationAttempt, PresentationRequest

FORGED_VCT = "urn:eudi:pid:1"


def start(client, app, **verification: Any) -> tuple[dict, WalletRequest]:
    """A PID verification with no conditions, an individual, and the request a wallet reads."""
    staff = make_staff(app)
    created = make_verification(client, staff, claims=["given_name"], attributes=[], **verification)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, read_request(client, link)


def status_of(client, individual: dict) -> dict:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


def attempts(app) -> list[PresentationAttempt]:
    with app.app_context():
        rows = list(db.session.query(PresentationAttempt))
        db.session.expunge_all()
        return rows


# -- the credential attacks, through HTTP ----------------------------------------------------


@dataclass
class RequestForge(Forge):
    """``Forge``'s credential, from a ``did:jwk`` issuer (no fetch), of the PID type, and with
    a key binding for one real request: each attack then differs from a presentation the
    service accepts in the one thing the attack changes."""

    audience: str = ""
    nonce: str = ""
    did: str = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.did = Issuer(self.issuer_key).did

    def payload(self, **changes: Any) -> dict[str, Any]:
        return super().payload(**{"iss": self.did, "vct": FORGED_VCT, **changes})

    def key_binding(self, sd_jwt: str, key: Any = None, header=None, **claims: Any) -> str:
        return super().key_binding(
            sd_jwt, key, header, **{"aud": self.audience, "nonce": self.nonce, **claims}
        )


# Where the service meets an attack before the protocol package would: the credential names
# its issuer only through a disclosure, so it carries no issuer the service can resolve.
CAUGHT_EARLIER = {
    "disclosed iss": "Presented credential carries no issuer: neither iss nor an x5c chain",
}


def at_forge_time() -> None:
    """The service's clock at the forge's ``NOW``, so the table's time attacks mean the same."""
    moment = datetime.fromtimestamp(NOW, UTC)
    clock.set_source(lambda: moment)


def test_the_forged_baseline_is_accepted(app, client):
    # Without this the table below would pass against a service that refuses everything.
    at_forge_time()
    individual, request = start(client, app)
    forge = RequestForge(audience=request.client_id, nonce=request.nonce)
    assert post_response(client, request, forge.present()).status_code == 200
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == ("VERIFIED", None)


@pytest.mark.parametrize(
    ("name", "build", "reason"),
    [pytest.param(name, build, reason, id=name) for name, build, reason in ATTACKS],
)
def test_each_credential_attack_fails_the_individual_with_its_reason(
    app, client, name: str, build: Callable[[Forge], str], reason: str
):
    at_forge_time()
    individual, request = start(client, app)
    forge = RequestForge(audience=request.client_id, nonce=request.nonce)
    response = post_response(client, request, build(forge))
    assert response.status_code == 200
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == (
        "FAILED",
        CAUGHT_EARLIER.get(name, reason),
    )
    [attempt] = attempts(app)
    assert (attempt.outcome.value, attempt.validation_error) == (
        "FAILED",
        CAUGHT_EARLIER.get(name, reason),
    )


# -- revocation ------------------------------------------------------------------------------


@pytest.fixture
def status_server():
    server = LocalServer()
    yield server
    server.stop()


def publish_status_list(server: LocalServer, issuer: Issuer, values: list[int]) -> str:
    """A Status List Token (typ statuslist+jwt, sub = its own URI) signed by the issuer."""
    uri = server.url("/lists/1")
    stamp = int(clock.now().timestamp())
    claims = {
        "iss": issuer.did,
        "sub": uri,
        "iat": stamp,
        "exp": stamp + 3600,
        "ttl": 300,
        "status_list": encode_status_list(values, 1),
    }
    token = sign_jws(claims, issuer.key, typ="statuslist+jwt")
    server.add("/lists/1", token, headers={"Content-Type": "application/statuslist+jwt"})
    return uri


@pytest.mark.parametrize(
    ("idx", "fail_open", "outcome"),
    [
        (0, False, ("VERIFIED", None)),
        (1, False, ("FAILED", "Credential has been revoked by its issuer")),
        (1, True, ("FAILED", "Credential has been revoked by its issuer")),
    ],
    ids=["valid entry", "revoked", "revoked even when failing open"],
)
def test_a_revoked_credential_fails(make_app, status_server, idx, fail_open, outcome):
    app = make_app(TRUST_ALLOW_PRIVATE=True, STATUS_FAIL_OPEN=fail_open)
    client = app.test_client()
    issuer = Issuer()
    uri = publish_status_list(status_server, issuer, [0, 1, 0, 0])
    individual, request = start(client, app)
    presentation = node_presentation(
        request, issuer, status={"status_list": {"idx": idx, "uri": uri}}
    )
    assert post_response(client, request, presentation).status_code == 200
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == outcome
    assert status_server.hits["/lists/1"] == 1


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("fail_open", "status"), [(False, "FAILED"), (True, "VERIFIED")], ids=["default", "fail-open"]
)
def test_an_unreachable_status_list_fails_closed_unless_configured(make_app, fail_open, status):
    app = make_app(TRUST_ALLOW_PRIVATE=True, STATUS_FAIL_OPEN=fail_open, FETCH_TIMEOUT=2)
    client = app.test_client()
    issuer = Issuer()
    individual, request = start(client, app)
    uri = f"http://127.0.0.1:{closed_port()}/lists/1"
    presentation = node_presentation(
        request, issuer, status={"status_list": {"idx": 0, "uri": uri}}
    )
    post_response(client, request, presentation)
    body = status_of(client, individual)
    assert body["status"] == status
    if status == "FAILED":
        assert body["validation_error"].startswith("Credential status could not be checked")


# -- replays, state, size ----------------------------------------------------------------------


def test_a_response_without_state_is_400_and_leaves_the_request_open(app, client):
    individual, request = start(client, app)
    presentation = node_presentation(request, Issuer())
    response = client.post(
        urlsplit(request.response_uri).path,
        data={"vp_token": json.dumps({"credential": [presentation]})},
    )
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_RESPONSE")
    assert status_of(client, individual)["status"] == "REQUESTED"
    assert attempts(app) == []
    assert post_response(client, request, presentation).status_code == 200


def test_a_response_replayed_to_another_request_fails_and_leaves_the_first_open(app, client):
    # A presentation lifted from one request, posted with the state of another: its key
    # binding names the first request's nonce and client ID, so the second one fails and the
    # first can still be answered.
    staff = make_staff(app)
    created = make_verification(client, staff, claims=["given_name"], attributes=[])
    requests = {}
    for customer in ("crm-1", "crm-2"):
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": customer, "verification_id": created["id"]},
        ).get_json()
        link = client.get(f"/verifications/{individual['id']}/connect").get_json()
        requests[customer] = (individual, read_request(client, link["connection_url"]))
    (first, first_request), (second, second_request) = requests.values()
    lifted = node_presentation(first_request, Issuer())
    assert post_response(client, second_request, lifted).status_code == 200
    body = status_of(client, second)
    assert (body["status"], body["validation_error"]) == (
        "FAILED",
        "Key binding audience does not match this verifier",
    )
    assert status_of(client, first)["status"] == "REQUESTED"
    assert post_response(client, first_request, lifted).status_code == 200
    assert status_of(client, first)["status"] == "VERIFIED"


def test_an_oversized_body_is_413_before_anything_is_read(app, client):
    individual, request = start(client, app)
    limit = app.config["MAX_CONTENT_LENGTH"]
    response = client.post(
        urlsplit(request.response_uri).path,
        data={"vp_token": "x" * (limit + 1), "state": request.state},
    )
    assert (response.status_code, response.get_json()["code"]) == (413, "PAYLOAD_TOO_LARGE")
    assert status_of(client, individual)["status"] == "REQUESTED"
    assert attempts(app) == []
    with app.app_context():
        stored = db.session.get(PresentationRequest, uuid.UUID(request.request_id))
        assert stored.consumed_at is None


def test_an_oversized_presentation_within_the_body_limit_is_refused_unparsed(app, client):
    individual, request = start(client, app)
    forge = RequestForge(audience=request.client_id, nonce=request.nonce)
    padded = forge.present(shown=[*forge.shown(), "A" * (80 * 1024)])
    post_response(client, request, padded)
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == ("FAILED", "Presentation is too large")


def test_twenty_concurrent_posts_leave_one_attempt_and_one_decision(app, client):
    # The concurrency test in test_presentations.py checks statuses; this one checks that the
    # losers were refused as replays and left no trace: one attempt, decided once.
    individual, request = start(client, app)
    presentation = node_presentation(request, Issuer())

    def post(_: int) -> str:
        response = post_response(app.test_client(), request, presentation)
        return response.get_json().get("code") or "OK"

    codes = all_at_once(20, post)
    assert sorted(codes) == ["ALREADY_ANSWERED"] * 19 + ["OK"]
    assert [a.outcome.value for a in attempts(app)] == ["VERIFIED"]
    assert status_of(client, individual)["status"] == "VERIFIED"


# -- SSRF bait -------------------------------------------------------------------------------


@pytest.fixture
def no_outbound(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every host the service tried to resolve or connect to; any connection fails the test.

    Names the table makes up resolve as an attacker's DNS would answer them; real names are
    never looked up, so the test sends nothing beyond this process.
    """
    seen: list[str] = []
    fake_dns = {"rebind.attacker.test": "10.0.0.7", "localhost": "127.0.0.1"}

    def getaddrinfo(host, port, *args, **kwargs):
        seen.append(f"resolve {host}")
        address = fake_dns.get(host)
        if address is None:
            try:
                address = str(ipaddress.ip_address(host.strip("[]")))
            except ValueError:
                address = _numeric_ipv4(host)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
        return [(family, socket.SOCK_STREAM, 6, "", sockaddr)]

    def connect(sock, address):
        seen.append(f"connect {address}")
        raise AssertionError(f"the service connected to {address}")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return seen


def _numeric_ipv4(host: str) -> str:
    """What the C resolver makes of ``0x7f000001``, ``2130706433`` or ``127.1`` (inet_aton)."""
    try:
        return socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        raise AssertionError(f"the service tried to resolve a real name: {host}") from None


METADATA = "Could not fetch issuer metadata: Refused to fetch from "
DID_WEB = "Could not fetch the DID document of "
SSRF_ISSUERS = [
    ("https://127.0.0.1/issuer", METADATA + "127.0.0.1: 127.0.0.1 is a loopback address"),
    ("https://localhost/issuer", METADATA + "localhost: 127.0.0.1 is a loopback address"),
    (
        "https://169.254.169.254/latest/meta-data",
        METADATA + "169.254.169.254: 169.254.169.254 is a link-local address",
    ),
    ("https://[::1]/issuer", METADATA + "::1: ::1 is a loopback address"),
    (
        "https://[::ffff:127.0.0.1]/issuer",
        METADATA + "::ffff:127.0.0.1: ::ffff:7f00:1 is a loopback address",
    ),
    ("https://10.0.0.7/issuer", METADATA + "10.0.0.7: 10.0.0.7 is a private address"),
    ("https://192.168.1.1/issuer", METADATA + "192.168.1.1: 192.168.1.1 is a private address"),
    ("https://0x7f000001/issuer", METADATA + "0x7f000001: 127.0.0.1 is a loopback address"),
    ("https://2130706433/issuer", METADATA + "2130706433: 127.0.0.1 is a loopback address"),
    ("https://127.1/issuer", METADATA + "127.1: 127.0.0.1 is a loopback address"),
    (
        "https://rebind.attacker.test/issuer",
        METADATA + "rebind.attacker.test: 10.0.0.7 is a private address",
    ),
    (
        "http://issuer.example/plain-http",
        "Issuer http://issuer.example/plain-http is neither an HTTPS URL nor a did:jwk, "
        "did:web or did:prism DID, and the credential has no x5c chain",
    ),
    (
        "https://user:secret@issuer.example/issuer",
        "Issuer https://user:secret@issuer.example/issuer carries credentials",
    ),
    (
        "did:web:127.0.0.1",
        DID_WEB + "did:web:127.0.0.1: Refused to fetch from 127.0.0.1: "
        "127.0.0.1 is a loopback address",
    ),
    (
        "did:web:169.254.169.254",
        DID_WEB + "did:web:169.254.169.254: Refused to fetch from 169.254.169.254: "
        "169.254.169.254 is a link-local address",
    ),
    (
        "did:web:localhost%3A8080",
        DID_WEB + "did:web:localhost%3A8080: Refused to fetch from localhost: "
        "127.0.0.1 is a loopback address",
    ),
]


def ssrf_presentation(request: WalletRequest, iss: str) -> str:
    """A credential naming ``iss`` as its issuer; the service must look the key up."""
    forge = RequestForge(audience=request.client_id, nonce=request.nonce)
    return forge.present(forge.issuer_jwt(forge.payload(iss=iss)))


@pytest.mark.parametrize(("iss", "reason"), SSRF_ISSUERS, ids=[iss for iss, _ in SSRF_ISSUERS])
def test_an_issuer_url_aimed_at_the_services_own_network_is_never_fetched(
    app, client, no_outbound, iss, reason
):
    individual, request = start(client, app)
    assert post_response(client, request, ssrf_presentation(request, iss)).status_code == 200
    body = status_of(client, individual)
    # Refused for where it points, before any connection, not for a later accident (a
    # signature, a timeout); the development setting that would allow it is off.
    assert (body["status"], body["validation_error"]) == ("FAILED", reason)
    assert not any(entry.startswith("connect") for entry in no_outbound)


@pytest.mark.parametrize(
    "uri",
    [
        "https://169.254.169.254/latest/meta-data",
        "https://127.0.0.1/lists/1",
        "https://rebind.attacker.test/lists/1",
        "http://issuer.example/lists/1",
    ],
)
def test_a_status_list_uri_aimed_at_the_services_own_network_is_never_fetched(
    app, client, no_outbound, uri
):
    individual, request = start(client, app)
    presentation = node_presentation(
        request, Issuer(), status={"status_list": {"idx": 0, "uri": uri}}
    )
    post_response(client, request, presentation)
    body = status_of(client, individual)
    assert body["status"] == "FAILED"
    assert body["validation_error"].startswith("Credential status could not be checked")
    assert not any(entry.startswith("connect") for entry in no_outbound)


# -- no lock held while another server answers -------------------------------------------------


def request_row_is_free(db_settings: dict, request_id: str) -> bool:
    """Whether another connection could take the write lock a response's transaction needs:
    SQLite's database write lock, or PostgreSQL's lock on the presentation request's row."""
    url = db_settings["SQLALCHEMY_DATABASE_URI"]
    if url.startswith("sqlite"):
        probe = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=0, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError:
            return False
        finally:
            probe.close()
    options = db_settings.get("SQLALCHEMY_ENGINE_OPTIONS", {})
    engine = create_engine(url, connect_args=options.get("connect_args", {}))
    try:
        with engine.connect() as connection, connection.begin():
            connection.execute(
                text("SELECT id FROM presentation_requests WHERE id = :id FOR UPDATE NOWAIT"),
                {"id": uuid.UUID(request_id)},
            )
        return True
    except OperationalError:
        return False
    finally:
        engine.dispose()


def test_no_database_lock_is_held_while_a_status_list_is_fetched(
    make_app, db_settings, status_server
):
    """Issuer metadata and status lists are fetched before the response's write transaction
    begins: a slow issuer never holds the database (or the request's row) for everyone else."""
    app = make_app(TRUST_ALLOW_PRIVATE=True)
    client = app.test_client()
    issuer = Issuer()
    uri = publish_status_list(status_server, issuer, [0, 0, 0, 0])
    individual, request = start(client, app)
    served = status_server.routes["/lists/1"]
    free_while_fetching: list[bool] = []

    def probing(http_request):
        free_while_fetching.append(request_row_is_free(db_settings, request.request_id))
        return served(http_request)

    status_server.add("/lists/1", probing)
    presentation = node_presentation(
        request, issuer, status={"status_list": {"idx": 0, "uri": uri}}
    )
    assert post_response(client, request, presentation).status_code == 200
    assert free_while_fetching == [True]
    assert status_of(client, individual)["status"] == "VERIFIED"
