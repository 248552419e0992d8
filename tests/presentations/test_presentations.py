"""Presenting real credentials end to end: OpenID4VP direct_post, decisions and their messages.

The decisions an organization reads (accepted, untrusted issuer, no issuer on a pinned
verification, each operator met and unmet) are checked with credentials and presentations from
both implementations we did not write: npm @sd-jwt/sd-jwt-vc and PyPI sd-jwt.
"""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID
from factories import make_apikey, make_staff, make_verification
from support.race import all_at_once
from trust.trust_support import Issued, make_cert, x5c
from wallets import Issuer, node_presentation, post_response, python_presentation, read_request

from app import clock
from app.extensions import db
from app.verifications.models import PresentationAttempt


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(params=["npm-sd-jwt-vc", "pypi-sd-jwt"])
def present(request):
    """A presentation from each independent implementation, called like ``node_presentation``."""
    return {"npm-sd-jwt-vc": node_presentation, "pypi-sd-jwt": python_presentation}[request.param]


def start(app, client, **verification):
    """A verification, an individual, and the request its connect link points at."""
    staff = make_staff(app)
    created = make_verification(client, staff, **verification)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return staff, created, individual, read_request(client, link)


def status_of(client, individual) -> dict:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


def test_a_valid_presentation_verifies_and_keeps_only_requested_claims(
    app, client, issuer, present
):
    staff, verification, individual, request = start(app, client)
    # The wallet shows more than was asked (locality); only the requested claims are kept.
    reveal = {
        "given_name": True,
        "family_name": True,
        "birthdate": True,
        "address": {"country": True, "locality": True},
    }
    response = post_response(client, request, present(request, issuer, reveal=reveal))
    assert response.status_code == 200
    redirect = response.get_json()["redirect_uri"]
    assert redirect.startswith(f"https://verity.test/i/{individual['id']}?response_code=")
    assert status_of(client, individual)["status"] == "VERIFIED"
    key = make_apikey(app, staff.organization_id)
    lookup = client.get(
        f"/verifications/{verification['id']}/individuals/crm-1", headers={"apikey": key}
    ).get_json()
    assert lookup["issuer"] == issuer.did
    assert lookup["claims"] == {
        "given_name": "Erika",
        "family_name": "Mustermann",
        "birthdate": "1984-01-26",
        "address": {"country": "DE"},
    }
    assert lookup["verified_at"] is not None


def test_an_untrusted_issuer_fails_with_the_contract_message(app, client, issuer, present):
    _, _, individual, request = start(app, client, trusted_issuers=["did:jwk:someone-else"])
    assert post_response(client, request, present(request, issuer)).status_code == 200
    body = status_of(client, individual)
    assert body["status"] == "FAILED"
    assert (
        body["validation_error"]
        == f"Credential issuer {issuer.did} is not trusted by this verification"
    )


def test_a_pinned_issuer_is_accepted(app, client, issuer, present):
    _, _, individual, request = start(app, client, trusted_issuers=[issuer.did])
    post_response(client, request, present(request, issuer))
    assert status_of(client, individual)["status"] == "VERIFIED"


def test_no_issuer_on_a_pinned_verification_fails_with_the_contract_message(
    app, client, issuer, present
):
    _, _, individual, request = start(app, client, trusted_issuers=[issuer.did])
    post_response(client, request, present(request, issuer, iss=None))
    body = status_of(client, individual)
    assert body["status"] == "FAILED"
    assert body["validation_error"] == (
        "Presented credential carries no issuer, and this verification pins its issuers"
    )


def self_signed_x5c(issuer: Issuer) -> list[str]:
    """A certificate for the issuer's own key, signed by that key: a chain to no anchor."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Self-made issuer")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(issuer.key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .sign(issuer.key, hashes.SHA256())
    )
    return [base64.b64encode(certificate.public_bytes(serialization.Encoding.DER)).decode()]


def test_no_iss_and_a_self_signed_x5c_on_a_pinned_verification_names_no_issuer(app, client, issuer):
    _, _, individual, request = start(app, client, trusted_issuers=[issuer.did])
    presentation = python_presentation(request, issuer, iss=None, x5c=self_signed_x5c(issuer))
    assert post_response(client, request, presentation).status_code == 200
    body = status_of(client, individual)
    assert body["status"] == "FAILED"
    assert body["validation_error"] == (
        "Presented credential carries no issuer, and this verification pins its issuers"
    )


X5C_ISSUER = "https://issuer.verity.test/pid"


def x5c_under(root: Issued, issuer: Issuer) -> list[str]:
    """The issuer's certificate, signed by ``root`` and naming ``X5C_ISSUER``: its x5c."""
    return x5c(make_cert("PID issuer", issuer=root, key=issuer.key, uris=[X5C_ISSUER]))


@pytest.mark.parametrize(("pinned_root", "status"), [(True, "VERIFIED"), (False, "FAILED")])
def test_a_pem_pinned_in_trusted_issuers_anchors_an_sd_jwt_vc_x5c_chain(
    app, client, issuer, pinned_root, status
):
    root = make_cert("PID Root CA", ca=True)
    pinned = root if pinned_root else make_cert("Another Root CA", ca=True)
    _, _, individual, request = start(app, client, trusted_issuers=[pinned.pem])
    presentation = python_presentation(request, issuer, iss=X5C_ISSUER, x5c=x5c_under(root, issuer))
    assert post_response(client, request, presentation).status_code == 200
    body = status_of(client, individual)
    assert body["status"] == status
    if status == "FAILED":
        assert body["validation_error"] == (
            f"Credential issuer {X5C_ISSUER} is not trusted by this verification"
        )


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (
            {"name": "given_name", "operator": "EQUAL", "value": "Max"},
            'Attribute given_name does not satisfy EQUAL "Max"',
        ),
        (
            {"name": "family_name", "operator": "NOT", "value": "Mustermann"},
            'Attribute family_name does not satisfy NOT "Mustermann"',
        ),
        (
            {"name": "birthdate", "operator": "BIGGER", "value": "1990-01-01"},
            'Attribute birthdate does not satisfy BIGGER "1990-01-01"',
        ),
        (
            {"name": "birthdate", "operator": "SMALLER", "value": "1980-01-01"},
            'Attribute birthdate does not satisfy SMALLER "1980-01-01"',
        ),
        (
            {"name": "address.country", "operator": "IN", "value": ["FR", "NL"]},
            'Attribute address.country does not satisfy IN ["FR", "NL"]',
        ),
        (
            {"name": "address.locality", "operator": "EXISTS"},
            "Attribute address.locality is missing, so EXISTS cannot be satisfied",
        ),
        (
            {"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 120},
            "Attribute birthdate does not satisfy AGE_AT_LEAST 120",
        ),
    ],
)
def test_each_operator_fails_with_a_message_naming_attribute_and_operator(
    app, client, issuer, present, condition, message
):
    _, _, individual, request = start(app, client, attributes=[condition])
    assert post_response(client, request, present(request, issuer)).status_code == 200
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == ("FAILED", message)


def test_the_authenticated_lookup_lists_every_failed_condition(app, client, issuer, present):
    conditions = [
        {"name": "given_name", "operator": "EQUAL", "value": "Max"},
        {"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18},
        {"name": "address.country", "operator": "IN", "value": ["FR", "NL"]},
        {"name": "address.locality", "operator": "EXISTS"},
    ]
    staff, verification, individual, request = start(app, client, attributes=conditions)
    assert post_response(client, request, present(request, issuer)).status_code == 200
    first = 'Attribute given_name does not satisfy EQUAL "Max"'
    # validation_error keeps the contract's single sentence, on both reads.
    assert status_of(client, individual)["validation_error"] == first
    lookup = client.get(
        f"/verifications/{verification['id']}/individuals/crm-1",
        headers={"apikey": make_apikey(app, staff.organization_id)},
    ).get_json()
    assert lookup["validation_error"] == first
    assert lookup["failed_conditions"] == [
        first,
        'Attribute address.country does not satisfy IN ["FR", "NL"]',
        "Attribute address.locality is missing, so EXISTS cannot be satisfied",
    ]
    assert "failed_conditions" not in status_of(client, individual)


@pytest.mark.parametrize(
    "condition",
    [
        {"name": "given_name", "operator": "EQUAL", "value": "Erika"},
        {"name": "family_name", "operator": "NOT", "value": "Musterfrau"},
        {"name": "birthdate", "operator": "BIGGER", "value": "1980-01-01"},
        {"name": "birthdate", "operator": "SMALLER", "value": "1990-01-01"},
        {"name": "address.country", "operator": "IN", "value": ["FR", "DE"]},
        {"name": "address.country", "operator": "EXISTS"},
        {"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18},
    ],
    ids=lambda condition: condition["operator"],
)
def test_each_operator_met_verifies(app, client, issuer, present, condition):
    # The unmet cases above would also pass if an operator failed everything; this pins that
    # each one lets a credential that satisfies it through.
    _, _, individual, request = start(app, client, attributes=[condition])
    assert post_response(client, request, present(request, issuer)).status_code == 200
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == ("VERIFIED", None)


def points_schema(client, staff) -> str:
    """An organization's own schema with a NUMBER attribute, published."""
    created = client.post(
        "/schemas",
        json={
            "name": "Loyalty card",
            "description": "Points collected",
            "vct": LOYALTY_VCT,
            "attributes": [{"name": "points", "description": "Points", "type": "NUMBER"}],
        },
        headers=staff.headers(),
    )
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    published = client.post(f"/schemas/{schema_id}/publish", headers=staff.headers())
    assert published.status_code == 200, published.get_json()
    return schema_id


LOYALTY_VCT = "https://verity.test/vct/loyalty"


@pytest.mark.parametrize(
    ("condition", "outcome"),
    [
        ({"name": "points", "operator": "BIGGER", "value": 41.5}, ("VERIFIED", None)),
        (
            {"name": "points", "operator": "BIGGER", "value": 42},
            ("FAILED", "Attribute points does not satisfy BIGGER 42"),
        ),
        ({"name": "points", "operator": "SMALLER", "value": 100}, ("VERIFIED", None)),
        (
            {"name": "points", "operator": "SMALLER", "value": 9},
            ("FAILED", "Attribute points does not satisfy SMALLER 9"),
        ),
    ],
    ids=["BIGGER-met", "BIGGER-unmet", "SMALLER-met", "SMALLER-unmet"],
)
def test_bigger_and_smaller_compare_numbers(app, client, issuer, present, condition, outcome):
    staff = make_staff(app)
    schema_id = points_schema(client, staff)
    verification = make_verification(
        client, staff, schema_id=schema_id, claims=["points"], attributes=[condition]
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    presentation = present(
        request,
        issuer,
        vct=LOYALTY_VCT,
        claims={"points": 42},
        reveal={"points": True},
        **({"frame": {"_sd": ["points"]}} if present is node_presentation else {}),
    )
    assert post_response(client, request, presentation).status_code == 200
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == outcome


def test_a_credential_of_another_type_fails(app, client, issuer):
    _, _, individual, request = start(app, client)
    post_response(
        client, request, node_presentation(request, issuer, vct="urn:example:library-card")
    )
    assert "not the type" in status_of(client, individual)["validation_error"]


def test_a_key_binding_for_another_request_fails(app, client, issuer):
    _, _, individual, request = start(app, client)
    post_response(client, request, node_presentation(request, issuer, nonce="another-nonce"))
    body = status_of(client, individual)
    assert body["status"] == "FAILED"
    assert "nonce" in body["validation_error"]


def test_an_expired_credential_fails(app, client, issuer):
    _, _, individual, request = start(app, client)
    post_response(client, request, node_presentation(request, issuer, exp_in=-3600))
    body = status_of(client, individual)
    assert body["status"] == "FAILED" and "expired" in body["validation_error"]


def test_the_same_response_twice_is_refused_and_changes_nothing(app, client, issuer):
    _, _, _, request = start(app, client)
    presentation = node_presentation(request, issuer)
    assert post_response(client, request, presentation).status_code == 200
    replay = post_response(client, request, presentation)
    assert (replay.status_code, replay.get_json()["code"]) == (400, "ALREADY_ANSWERED")
    with app.app_context():
        assert db.session.query(PresentationAttempt).count() == 1


def test_twenty_concurrent_posts_of_one_response_are_accepted_once(app, client, issuer):
    _, _, _, request = start(app, client)
    presentation = node_presentation(request, issuer)

    def post(_: int) -> int:
        return post_response(app.test_client(), request, presentation).status_code

    statuses = all_at_once(20, post)
    assert sorted(statuses) == [200] + [400] * 19
    with app.app_context():
        assert db.session.query(PresentationAttempt).count() == 1


def test_an_unknown_state_is_400_and_changes_nothing(app, client, issuer):
    _, _, individual, request = start(app, client)
    presentation = node_presentation(request, issuer)
    wrong = post_response(client, request, presentation, state="forged")
    assert (wrong.status_code, wrong.get_json()["code"]) == (400, "INVALID_STATE")
    assert status_of(client, individual)["status"] == "REQUESTED"
    assert post_response(client, request, presentation).status_code == 200


def test_an_unknown_request_is_400_not_found(client):
    response = client.post(
        f"/oid4vp/responses/{uuid.uuid4()}", data={"vp_token": "{}", "state": "x"}
    )
    assert (response.status_code, response.get_json()["error"]) == (
        400,
        "sql: no rows in result set",
    )


@pytest.mark.parametrize(
    "vp_token",
    [None, "not json", "[]", '{"other": ["x"]}', '{"credential": []}', '{"credential": [1]}'],
)
def test_a_malformed_vp_token_is_400_and_leaves_the_request_open(app, client, issuer, vp_token):
    _, _, individual, request = start(app, client)
    data = (
        {"state": request.state}
        if vp_token is None
        else {"state": request.state, "vp_token": vp_token}
    )
    response = client.post(f"/oid4vp/responses/{request.request_id}", data=data)
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_RESPONSE")
    assert status_of(client, individual)["status"] == "REQUESTED"


def test_failed_then_a_fresh_link_and_a_good_presentation_verifies(app, client, issuer):
    _, _, individual, request = start(app, client)
    post_response(client, request, node_presentation(request, issuer, nonce="wrong"))
    assert status_of(client, individual)["status"] == "FAILED"
    # FAILED stays FAILED on every read; a fresh link lets the person try again.
    later = clock.now() + timedelta(minutes=3)
    clock.set_source(lambda: later)
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    fresh = read_request(client, link)
    assert fresh.request_id != request.request_id
    assert status_of(client, individual)["status"] == "FAILED"
    clock.set_source(None)
    assert post_response(client, fresh, node_presentation(fresh, issuer)).status_code == 200
    assert status_of(client, individual)["status"] == "VERIFIED"


def test_every_attempt_is_recorded_with_time_outcome_reason_and_issuer(app, client, issuer):
    _, _, individual, request = start(app, client)
    first_at = clock.now()
    post_response(client, request, node_presentation(request, issuer, nonce="wrong"))
    later = clock.now() + timedelta(minutes=3)
    clock.set_source(lambda: later)
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    fresh = read_request(client, link)
    clock.set_source(None)
    post_response(client, fresh, node_presentation(fresh, issuer))
    with app.app_context():
        rows = db.session.query(PresentationAttempt).order_by(PresentationAttempt.created_at).all()
        recorded = [
            (str(a.request.individual_id), a.outcome.value, a.validation_error, a.issuer)
            for a in rows
        ]
        stamps = [a.created_at for a in rows]
    assert recorded == [
        (individual["id"], "FAILED", "Key binding nonce does not match the request", issuer.did),
        (individual["id"], "VERIFIED", None, issuer.did),
    ]
    assert all(abs((stamp - first_at).total_seconds()) < 60 for stamp in stamps)


def test_verified_is_final(app, client, issuer):
    _, _, individual, request = start(app, client)
    post_response(client, request, node_presentation(request, issuer))
    assert status_of(client, individual)["status"] == "VERIFIED"
    again = client.get(f"/verifications/{individual['id']}/connect").get_json()
    assert again["status"] == "VERIFIED"
    assert (
        again["connection_url"]
        == client.get(f"/verifications/{individual['id']}/verify").get_json()["connection_url"]
    )


def test_a_requested_claim_withheld_by_either_wallet_fails(app, client, issuer, present):
    _, _, individual, request = start(app, client, attributes=[])
    post_response(
        client, request, present(request, issuer, reveal={"given_name": True, "birthdate": True})
    )
    body = status_of(client, individual)
    assert (body["status"], body["validation_error"]) == (
        "FAILED",
        "Requested claim family_name was not disclosed",
    )
