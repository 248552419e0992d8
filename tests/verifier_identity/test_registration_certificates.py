"""Registration certificates (ETSI TS 119 475): checked at upload, and no verification asks
for more than the one it is made under.

A registrar of registration certificates is a CA made with ``cryptography``; its certificates
are JWTs signed with joserfc (never with this service's signer). The organization's access
certificate comes from the test registrar of ``identity_support``.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from factories import make_apikey, make_verification, verification_body
from identity_support import PERMITS_PID, PID, Registrar, RegistrationRegistrar
from test_verifier_identity import acme, beta, own_certificate, start, verify_signed  # noqa: F401

from app.oid4vp.registration_certificate import PermittedCredential, outside


def b64url(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


@pytest.fixture
def registrars() -> RegistrationRegistrar:
    return RegistrationRegistrar()


def trust_registrar(client, staff, registrar: RegistrationRegistrar) -> None:
    response = client.post(
        "/trust/sources",
        json={"name": "Registrar", "kind": "REGISTRARS", "certificates": registrar.anchor_pem},
        headers=staff.headers(),
    )
    assert response.status_code == 201, response.get_json()


def upload(client, staff, token: str):
    return client.post(
        "/verifier-identity/registration-certificates",
        json={"registration_certificate": token},
        headers=staff.headers(),
    )


@pytest.fixture
def registered(client, acme, registrars):  # noqa: F811
    """Acme with its access certificate, a trusted registrar and one registration certificate."""
    leaf = own_certificate(client, acme, Registrar())
    trust_registrar(client, acme, registrars)
    token = registrars.certificate(leaf)
    response = upload(client, acme, token)
    assert response.status_code == 201, response.get_json()
    return leaf, token, response.get_json()


def test_an_upload_is_listed_with_what_it_permits_and_its_purpose(client, acme, registered):  # noqa: F811
    _, token, created = registered
    assert created["intended_use_id"] == "age-check-1"
    listed = client.get(
        "/verifier-identity/registration-certificates", headers=acme.headers()
    ).get_json()["results"]
    assert [r["id"] for r in listed] == [created["id"]]
    assert listed[0]["credentials"][0]["meta"] == {"vct_values": [PID]}
    assert ["address"] in listed[0]["credentials"][0]["claims"]
    assert listed[0]["purpose"][0] == {"lang": "en", "value": "Checking that you are of age"}
    assert listed[0]["registrar"] == "CN=Test WRPRC Provider"
    assert listed[0]["token"] == token
    shown = client.get("/verifier-identity", headers=acme.headers()).get_json()
    assert [r["id"] for r in shown["registration_certificates"]] == [created["id"]]
    # The same certificate again is kept once.
    again = upload(client, acme, token)
    assert again.status_code == 201 and again.get_json()["id"] == created["id"]
    # The upload is in the audit trail, without the token itself.
    [event] = client.get(
        "/audit-events",
        query_string={"action": "registration_certificate.created"},
        headers=acme.headers(),
    ).get_json()["results"]
    assert event["record_id"] == created["id"]
    assert token not in str(event)


def test_the_request_carries_the_certificate_in_verifier_info(client, acme, registered):  # noqa: F811
    leaf, token, _ = registered
    _, _, request = start(client, acme)
    claims = verify_signed(request.token, leaf.public_key())
    assert claims["verifier_info"] == [
        {"format": "registration_cert", "data": token, "credential_ids": ["credential"]}
    ]
    assert claims["dcql_query"]["credentials"][0]["id"] == "credential"


def test_the_only_certificate_is_the_verifications_and_is_echoed(client, acme, registered):  # noqa: F811
    created = make_verification(client, acme)
    assert created["registration_certificate_id"] == registered[2]["id"]


def test_a_verification_asking_outside_its_certificate_is_refused(client, acme, registered):  # noqa: F811
    response = client.post(
        "/verifications",
        json=verification_body(claims=["given_name", "nationalities", "issuing_country"]),
        headers=acme.headers(),
    )
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "OUTSIDE_REGISTRATION"
    assert body["outside"] == ["nationalities", "issuing_country"]
    assert "nationalities" in body["error"] and "issuing_country" in body["error"]

    # Changing one to ask outside it is refused too, and nothing changes.
    created = make_verification(client, acme)
    patched = client.patch(
        f"/verifications/{created['id']}",
        json={"claims": ["nationalities"]},
        headers=acme.headers(),
    )
    assert patched.status_code == 400 and patched.get_json()["code"] == "OUTSIDE_REGISTRATION"


def test_another_credential_type_is_outside_the_certificate(client, acme, registrars):  # noqa: F811
    leaf = own_certificate(client, acme, Registrar())
    trust_registrar(client, acme, registrars)
    mdl_only = [{"format": "mso_mdoc", "meta": {"doctype_value": "org.iso.18013.5.1.mDL"}}]
    response = upload(client, acme, registrars.certificate(leaf, credentials=mdl_only))
    assert response.status_code == 201, response.get_json()
    refused = client.post("/verifications", json=verification_body(), headers=acme.headers())
    assert refused.status_code == 400
    assert refused.get_json()["outside"] == [f"vct {PID}"]


def test_with_several_certificates_a_verification_names_one(client, acme, registered, registrars):  # noqa: F811
    leaf = registered[0]
    second = upload(client, acme, registrars.certificate(leaf, intended_use_id="kyc-2"))
    assert second.status_code == 201
    unnamed = client.post("/verifications", json=verification_body(), headers=acme.headers())
    assert unnamed.status_code == 400
    assert unnamed.get_json()["code"] == "NO_REGISTRATION_CERTIFICATE"
    named = make_verification(client, acme, registration_certificate_id=second.get_json()["id"])
    assert named["registration_certificate_id"] == second.get_json()["id"]
    # A certificate a verification is made under cannot be removed.
    removed = client.delete(
        f"/verifier-identity/registration-certificates/{second.get_json()['id']}",
        headers=acme.headers(),
    )
    assert removed.status_code == 409


def test_a_policy_request_names_its_certificate(app, client, acme, registered, registrars):  # noqa: F811
    created = make_verification(client, acme, claims=["given_name"], attributes=[])
    apikey = make_apikey(app, acme.organization_id)
    response = client.post(
        "/policy-requests",
        json={"verification_id": created["id"], "registration_certificate_id": registered[2]["id"]},
        headers={"apikey": apikey},
    )
    assert response.status_code == 201, response.get_json()
    narrow = upload(
        client,
        acme,
        registrars.certificate(
            registered[0],
            intended_use_id="names",
            credentials=[{**PERMITS_PID[0], "claims": [{"path": ["family_name"]}]}],
        ),
    ).get_json()
    refused = client.post(
        "/policy-requests",
        json={"verification_id": created["id"], "registration_certificate_id": narrow["id"]},
        headers={"apikey": apikey},
    )
    assert refused.status_code == 400 and refused.get_json()["outside"] == ["given_name"]


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("untrusted", "registrar this organization does not trust"),
        ("expired", "expired on"),
        ("other_access_certificate", "not for this organization's access certificate"),
        ("typ", "rc-wrp+jwt"),
        ("no_sub", "no sub"),
        ("meta_text", "DCQL meta object"),
        ("unknown_critical", "header extensions"),
        ("unencoded", "b64 false"),
    ],
)
def test_a_certificate_a_wallet_would_refuse_is_refused_at_upload(
    client,
    acme,  # noqa: F811
    registrars,
    case,
    reason,
):
    leaf = own_certificate(client, acme, Registrar())
    trust_registrar(client, acme, registrars)
    token = {
        "untrusted": lambda: RegistrationRegistrar("Stranger").certificate(leaf),
        "expired": lambda: registrars.certificate(leaf, exp=int(time.time()) - 10),
        "other_access_certificate": lambda: registrars.certificate(leaf, sub="CN=Someone Else"),
        "typ": lambda: registrars.sign({"sub": "x", "iat": 1}, typ="rc-rp+jwt"),
        "no_sub": lambda: registrars.certificate(leaf, sub=None),
        "meta_text": lambda: registrars.certificate(
            leaf, credentials=[{"format": "dc+sd-jwt", "meta": PID}]
        ),
        "unknown_critical": lambda: registrars.sign(
            {"sub": leaf.subject.rfc4514_string(), "iat": 1}, crit=["exp"], exp=1
        ),
        # A header saying b64 false over an ordinary encoded payload: refused for the header.
        "unencoded": lambda: ".".join(
            [
                b64url({"alg": "ES256", "typ": "rc-wrp+jwt", "b64": False, "crit": ["b64"]}),
                b64url({"sub": leaf.subject.rfc4514_string(), "iat": 1}),
                "c2ln",
            ]
        ),
    }[case]()
    response = upload(client, acme, token)
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["code"] == "INVALID_REGISTRATION_CERTIFICATE"
    assert reason in response.get_json()["error"]


def test_without_an_access_certificate_an_upload_is_refused(client, beta, registrars):  # noqa: F811
    trust_registrar(client, beta, registrars)
    leaf = Registrar().root
    response = upload(client, beta, registrars.certificate(leaf))
    assert response.status_code == 400
    assert "access certificate first" in response.get_json()["error"]


def test_a_deployment_may_require_a_certificate_for_every_verification(app, client, acme):  # noqa: F811
    app.config["REGISTRATION_CERTIFICATE_REQUIRED"] = True
    try:
        response = client.post("/verifications", json=verification_body(), headers=acme.headers())
    finally:
        app.config["REGISTRATION_CERTIFICATE_REQUIRED"] = False
    assert response.status_code == 400
    assert response.get_json()["code"] == "NO_REGISTRATION_CERTIFICATE"
    # Without the setting, an organization with none is unaffected.
    make_verification(client, acme)


SD_JWT_QUERY = {
    "id": "credential",
    "format": "dc+sd-jwt",
    "meta": {"vct_values": [PID]},
    "claims": [{"path": ["given_name"]}, {"path": ["address", "country"]}],
}


@pytest.mark.parametrize(
    ("permitted", "expected"),
    [
        ([PermittedCredential("dc+sd-jwt", {"vct_values": [PID]}, None)], []),
        (
            [PermittedCredential("dc+sd-jwt", {"vct_values": [PID]}, (("given_name",),))],
            ["address.country"],
        ),
        (
            [
                PermittedCredential(
                    "dc+sd-jwt", {"vct_values": [PID, "x"]}, (("given_name",), ("address",))
                )
            ],
            [],
        ),
        ([PermittedCredential("dc+sd-jwt", {"vct_values": ["other"]}, None)], [f"vct {PID}"]),
        ([PermittedCredential("mso_mdoc", {"doctype_value": PID}, None)], [f"vct {PID}"]),
        (
            [
                PermittedCredential(
                    "dc+sd-jwt", {"vct_values": [PID]}, (("given_name",), ("address", None))
                )
            ],
            [],
        ),
    ],
)
def test_a_query_is_compared_with_what_is_permitted(permitted, expected):
    assert outside(permitted, SD_JWT_QUERY) == expected


def test_the_persons_page_shows_the_registered_purpose(client, acme, registered):  # noqa: F811
    individual, _, _ = start(client, acme)
    german = client.get(f"/i/{individual['id']}", headers={"Accept-Language": "de"})
    page = german.get_data(as_text=True)
    assert "Registrierter Zweck:" in page
    assert "Prüfung Ihrer Volljährigkeit" in page
    english = client.get(f"/i/{individual['id']}").get_data(as_text=True)
    assert "Registered purpose:" in english and "Checking that you are of age" in english


def test_an_unused_certificate_is_removed(client, acme, registered, registrars):  # noqa: F811
    second = upload(client, acme, registrars.certificate(registered[0], intended_use_id="x"))
    path = f"/verifier-identity/registration-certificates/{second.get_json()['id']}"
    assert client.delete(path, headers=acme.headers()).status_code == 204
    listed = client.get(
        "/verifier-identity/registration-certificates", headers=acme.headers()
    ).get_json()["results"]
    assert [r["id"] for r in listed] == [registered[2]["id"]]
    assert client.delete(path, headers=acme.headers()).status_code == 400


def test_a_jades_signing_time_marked_critical_is_read(client, acme, registrars):  # noqa: F811
    leaf = own_certificate(client, acme, Registrar())
    trust_registrar(client, acme, registrars)
    body = {"sub": leaf.subject.rfc4514_string(), "iat": int(time.time()) - 5}
    token = registrars.sign(body, crit=["sigT"], sigT="2026-12-02T00:00:00Z")
    assert upload(client, acme, token).status_code == 201


def test_sub_may_be_the_access_certificates_organization_identifier():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from app.oid4vp.registration_certificate import subject_matches

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "Acme Bank"),
            x509.NameAttribute(x509.ObjectIdentifier("2.5.4.97"), "LEIXG-743700EB2QF2J1WRO915"),
        ]
    )
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    assert subject_matches("LEIXG-743700EB2QF2J1WRO915", cert)
    assert subject_matches(cert.subject.rfc4514_string(), cert)
    assert not subject_matches("LEIXG-OTHER", cert)
    assert not subject_matches("CN=Acme Bank", cert)


def test_required_a_policy_request_of_a_verification_without_one_is_refused(
    app,
    client,
    acme,  # noqa: F811
):
    created = make_verification(client, acme)
    apikey = make_apikey(app, acme.organization_id)
    app.config["REGISTRATION_CERTIFICATE_REQUIRED"] = True
    try:
        response = client.post(
            "/policy-requests", json={"verification_id": created["id"]}, headers={"apikey": apikey}
        )
    finally:
        app.config["REGISTRATION_CERTIFICATE_REQUIRED"] = False
    assert response.status_code == 400
    assert response.get_json()["code"] == "NO_REGISTRATION_CERTIFICATE"


def test_a_registration_certificate_is_the_organizations_own_not_an_intermediated_partys(
    app,
    client,
    acme,  # noqa: F811
    registrars,
):
    registrar = Registrar()
    # The party's certificate first, so that the organization's own is not merely the first.
    made = client.post(
        "/verifier-identity/signing-request",
        json={"country": "NL", "relying_party": "Beta Shop"},
        headers=acme.headers(),
    ).get_json()
    party_leaf = registrar.issue(made["csr_pem"])
    taken = client.put(
        "/verifier-identity/certificate",
        json={"chain_pem": registrar.chain_pem(party_leaf), "relying_party": "Beta Shop"},
        headers=acme.headers(),
    )
    assert taken.status_code == 200, taken.get_json()
    own_leaf = own_certificate(client, acme, registrar)
    trust_registrar(client, acme, registrars)
    # Checked against the organization's own access certificate, never the party's.
    refused = upload(client, acme, registrars.certificate(party_leaf))
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "INVALID_REGISTRATION_CERTIFICATE"
    kept = upload(client, acme, registrars.certificate(own_leaf))
    assert kept.status_code == 201, kept.get_json()
    record_id = kept.get_json()["id"]
    # A verification for the party is made under none, and may not name one.
    named = client.post(
        "/verifications",
        json=verification_body(relying_party="Beta Shop", registration_certificate_id=record_id),
        headers=acme.headers(),
    )
    assert named.status_code == 400
    assert named.get_json()["code"] == "INVALID_REGISTRATION_CERTIFICATE"
    for_party = make_verification(client, acme, relying_party="Beta Shop")
    assert for_party["registration_certificate_id"] is None
    apikey = make_apikey(app, acme.organization_id)
    policy = client.post(
        "/policy-requests",
        json={"verification_id": for_party["id"], "registration_certificate_id": record_id},
        headers={"apikey": apikey},
    )
    assert policy.status_code == 400
    # The organization's own verification takes it, and lets it go once it is for the party.
    own = make_verification(client, acme)
    assert own["registration_certificate_id"] == record_id
    moved = client.patch(
        f"/verifications/{own['id']}", json={"relying_party": "Beta Shop"}, headers=acme.headers()
    )
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["registration_certificate_id"] is None
