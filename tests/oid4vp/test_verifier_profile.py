"""``VERIFIER_PROFILE=haip``: a deployment that promises HAIP 1.0 starts only when configured
for it, and otherwise says which setting to change."""

from __future__ import annotations

import html

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from factories import make_apikey, make_staff, make_verification, verification_body
from signing_certificates import make_pki, write_files
from staff.staff_support import csrf_of, sign_in

HAIP_SETTINGS = {
    "VERIFIER_PROFILE": "haip",
    "REQUEST_CLIENT_ID_PREFIX": "x509_hash",
    "RESPONSE_ENCRYPTION": True,
    "DC_API_RESPONSE_MODE": "dc_api.jwt",
}


@pytest.fixture
def signing(tmp_path) -> dict[str, str]:
    """The leaf alone: HAIP keeps the trust anchor out of the request's x5c."""
    pki = make_pki()
    return write_files(tmp_path, pki, chain=[pki.leaf])


def test_a_haip_configuration_starts_and_its_requests_are_haip(make_app, signing):
    app = make_app(**HAIP_SETTINGS, **signing)
    verifier = app.extensions["oid4vp_verifier"]
    assert verifier.client.prefix == "x509_hash"
    assert verifier.client.signing_alg == "ES256"
    assert verifier.passes_by_reference
    assert verifier.encryption is not None
    assert verifier.dc_api_response_mode == "dc_api.jwt"


@pytest.mark.parametrize(
    ("change", "setting"),
    [
        ({"RESPONSE_ENCRYPTION": False}, "RESPONSE_ENCRYPTION=1"),
        ({"DC_API_RESPONSE_MODE": "dc_api"}, "DC_API_RESPONSE_MODE=dc_api.jwt"),
        ({"REQUEST_CLIENT_ID_PREFIX": "x509_san_dns"}, "REQUEST_CLIENT_ID_PREFIX=x509_hash"),
        ({"REQUEST_CLIENT_ID_PREFIX": ""}, "REQUEST_CLIENT_ID_PREFIX=x509_hash"),
    ],
    ids=["direct_post", "plain-dc_api", "x509_san_dns", "prefix-unset"],
)
def test_each_setting_haip_does_not_allow_stops_the_start_naming_it(
    make_app, signing, change, setting
):
    with pytest.raises(RuntimeError, match="VERIFIER_PROFILE=haip") as refused:
        make_app(**{**HAIP_SETTINGS, **change}, **signing)
    assert setting in str(refused.value)


def test_unsigned_requests_stop_the_start(make_app):
    with pytest.raises(RuntimeError, match="REQUEST_SIGNING_CERT_FILE"):
        make_app(**{**HAIP_SETTINGS, "REQUEST_CLIENT_ID_PREFIX": ""})


def test_a_chain_holding_its_trust_anchor_stops_the_start(make_app, tmp_path):
    pki = make_pki()
    with pytest.raises(RuntimeError, match="x5c hold neither the trust anchor") as refused:
        make_app(**HAIP_SETTINGS, **write_files(tmp_path, pki, chain=[pki.leaf, pki.ca]))
    assert "REQUEST_SIGNING_CERT_FILE" in str(refused.value)


def test_a_self_signed_signing_certificate_stops_the_start(make_app, tmp_path):
    pki = make_pki()
    with pytest.raises(RuntimeError, match="self-signed"):
        make_app(**HAIP_SETTINGS, **write_files(tmp_path, pki, chain=[pki.ca], key=pki.ca_key))


def test_a_p384_signing_key_stops_the_start(make_app, tmp_path):
    pki = make_pki(curve=ec.SECP384R1())
    files = write_files(tmp_path, pki, chain=[pki.leaf])
    with pytest.raises(RuntimeError, match="ES256") as refused:
        make_app(**HAIP_SETTINGS, **files)
    assert "REQUEST_SIGNING_KEY_FILE" in str(refused.value)


def test_every_problem_is_named_at_once(make_app):
    with pytest.raises(RuntimeError) as refused:
        make_app(VERIFIER_PROFILE="haip", DC_API_RESPONSE_MODE="dc_api")
    message = str(refused.value)
    for setting in ("REQUEST_SIGNING_CERT_FILE", "RESPONSE_ENCRYPTION=1", "DC_API_RESPONSE_MODE"):
        assert setting in message


def test_an_unknown_profile_stops_the_start(make_app):
    with pytest.raises(RuntimeError, match="VERIFIER_PROFILE must be empty or haip"):
        make_app(VERIFIER_PROFILE="fapi")


def test_without_a_profile_any_configuration_starts(make_app):
    app = make_app(DC_API_RESPONSE_MODE="dc_api")
    assert app.extensions["oid4vp_verifier"].dc_api_response_mode == "dc_api"


# -- formats: HAIP 1.0 covers SD-JWT VC and mdoc only -----------------------------------------

W3C_SCHEMA = {
    "name": "Identity (W3C)",
    "description": "A W3C verifiable credential about a person",
    "format": "jwt_vc_json",
    "types": ["IdentityCredential"],
    "attributes": [{"name": "given_name", "description": "First names", "type": "TEXT"}],
}


def w3c_schema(client, staff) -> str:
    created = client.post("/schemas", json=W3C_SCHEMA, headers=staff.headers())
    assert created.status_code == 201, created.get_json()
    return created.get_json()["id"]


def assert_refused_for_the_profile(response) -> None:
    assert response.status_code == 400, response.get_json()
    body = response.get_json()
    assert body["code"] == "FORMAT_NOT_IN_PROFILE"
    assert "VERIFIER_PROFILE=haip" in body["error"] and "jwt_vc_json" in body["error"]


@pytest.fixture
def before_haip(app, client):
    """What an organization made before its deployment turned HAIP on: a W3C VC-JWT
    verification with an individual, and an SD-JWT VC one."""
    staff = make_staff(app)
    schema_id = w3c_schema(client, staff)
    w3c = make_verification(
        client, staff, schema_id=schema_id, claims=["given_name"], attributes=[]
    )
    sd_jwt = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals", json={"customer_id": "crm-1", "verification_id": w3c["id"]}
    )
    assert individual.status_code == 201
    return staff, schema_id, w3c, sd_jwt, individual.get_json()


@pytest.fixture
def haip(make_app, signing):
    return make_app(**HAIP_SETTINGS, **signing).test_client()


def counts(app) -> dict[str, int]:
    from sqlalchemy import func, select

    from app.extensions import db
    from app.policies.models import PolicyRequest
    from app.verifications.models import Individual, PresentationRequest, Verification

    with app.app_context():
        found = {
            model.__name__: db.session.scalar(select(func.count()).select_from(model)) or 0
            for model in (Verification, Individual, PolicyRequest, PresentationRequest)
        }
        db.session.remove()
    return found


def test_haip_refuses_to_create_or_switch_a_verification_to_w3c_vc_jwt(app, haip, before_haip):
    staff, schema_id, _, sd_jwt, _ = before_haip
    before = counts(app)
    body = verification_body(schema_id=schema_id, claims=["given_name"], attributes=[])
    assert_refused_for_the_profile(haip.post("/verifications", json=body, headers=staff.headers()))
    switched = haip.put(
        f"/verifications/{sd_jwt['id']}",
        json={"schema_id": schema_id, "claims": ["given_name"], "attributes": [], "name": "X"},
        headers=staff.headers(),
    )
    assert_refused_for_the_profile(switched)
    assert counts(app) == before
    kept = haip.get(f"/verifications/{sd_jwt['id']}", headers=staff.headers()).get_json()
    assert kept["schema_id"] == sd_jwt["schema_id"] and kept["name"] == sd_jwt["name"]
    # SD-JWT VC (and mdoc) verifications are made as ever.
    made = haip.post("/verifications", json=verification_body(), headers=staff.headers())
    assert made.status_code == 201, made.get_json()


def test_haip_makes_no_request_for_a_w3c_verification_made_before_it(app, haip, before_haip):
    staff, _, w3c, sd_jwt, individual = before_haip
    key = make_apikey(app, staff.organization_id)
    before = counts(app)
    assert_refused_for_the_profile(
        haip.post("/policy-requests", json={"verification_id": w3c["id"]}, headers={"apikey": key})
    )
    for customer_id in ("crm-2", "crm-1"):  # a new person, and the one opened before
        opened = haip.post(
            "/verifications/individuals",
            json={"customer_id": customer_id, "verification_id": w3c["id"]},
        )
        assert_refused_for_the_profile(opened)
    assert_refused_for_the_profile(haip.get(f"/verifications/{individual['id']}/connect"))
    # The person's page says the request cannot be handled (the reason is for staff).
    page = haip.get(f"/i/{individual['id']}")
    assert page.status_code == 400
    assert "could not be handled" in page.get_data(as_text=True)
    assert counts(app) == before
    # The SD-JWT VC verification goes on.
    policy = haip.post(
        "/policy-requests", json={"verification_id": sd_jwt["id"]}, headers={"apikey": key}
    )
    assert policy.status_code == 201, policy.get_json()
    opened = haip.post(
        "/verifications/individuals", json={"customer_id": "crm-3", "verification_id": sd_jwt["id"]}
    )
    assert opened.status_code == 201, opened.get_json()


def test_the_dashboard_form_says_why_haip_refuses_a_w3c_schema(app, haip, before_haip):
    staff, schema_id, _, _, _ = before_haip
    assert sign_in(haip, staff.token).status_code == 302
    before = counts(app)
    response = haip.post(
        "/dashboard/verifications/new",
        data={
            "csrf_token": csrf_of(haip, "/dashboard/"),
            "name": "W3C identity",
            "description": "",
            "schema_id": schema_id,
            "claims": ["given_name"],
            "trusted_issuers": "",
        },
    )
    assert response.status_code == 400
    page = html.unescape(response.get_data(as_text=True))
    assert "VERIFIER_PROFILE=haip (HAIP 1.0) allows SD-JWT VC" in page
    assert counts(app) == before


def test_without_a_profile_w3c_verifications_are_made(client, before_haip):
    staff, schema_id, _, _, _ = before_haip
    body = verification_body(schema_id=schema_id, claims=["given_name"], attributes=[])
    assert client.post("/verifications", json=body, headers=staff.headers()).status_code == 201
