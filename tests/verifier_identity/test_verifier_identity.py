"""Each organization's own verifier identity, through the staff API and the wallet's endpoints.

An organization generates a key and a PKCS#10 request, a test registrar (a CA made with
``cryptography``) signs it, and the returned chain is uploaded; from then on the
organization's requests are signed with that key, under ``x509_hash`` (or ``x509_san_dns``
when the certificate names the deployment's host), with the chain in ``x5c``. Signatures are
checked with joserfc, the CSR with ``cryptography`` and ``openssl req -verify``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import shutil
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from factories import Staff, make_apikey, make_staff, make_verification
from identity_support import Registrar, RegistrationRegistrar, pem_of
from joserfc import jws
from joserfc.jwk import ECKey
from wallets import Issuer, node_presentation, post_response, read_request

from app import clock
from app.extensions import db
from app.identity.models import User
from app.issuance import settings
from app.oid4vci.keys import open_private_key
from app.organizations.models import Role
from app.organizations.operations import membership, mint_code
from app.policies.operations import connect_policy
from app.verifier_identity.models import VerifierKey
from app.web.links import links

HOST = "verity.test"


@pytest.fixture
def registrar() -> Registrar:
    return Registrar()


@pytest.fixture
def acme(app) -> Staff:
    return make_staff(app, "alice@acme.test", org_name="Acme Bank")


@pytest.fixture
def beta(app) -> Staff:
    return make_staff(app, "bob@beta.test", org_name="Beta Shop")


def signing_request(client, staff: Staff, **body) -> dict:
    response = client.post(
        "/verifier-identity/signing-request",
        json={"country": "DE", **body},
        headers=staff.headers(),
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def upload(client, staff: Staff, chain_pem: str):
    return client.put(
        "/verifier-identity/certificate", json={"chain_pem": chain_pem}, headers=staff.headers()
    )


def own_certificate(client, staff: Staff, registrar: Registrar, **body) -> x509.Certificate:
    """CSR, the registrar's certificate for it, and the chain uploaded: the leaf."""
    leaf = registrar.issue(signing_request(client, staff, **body)["csr_pem"])
    response = upload(client, staff, registrar.chain_pem(leaf))
    assert response.status_code == 200, response.get_json()
    return leaf


def identity(client, staff: Staff) -> dict:
    response = client.get("/verifier-identity", headers=staff.headers())
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def start(client, staff: Staff, customer_id: str = "crm-1"):
    """A verification of the organization's, an individual, its link and the request."""
    created = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, link, read_request(client, link)


def verify_signed(token: str, public_key) -> dict:
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 16_384
    verified = jws.deserialize_compact(token, ECKey.import_key(public_key), registry=registry)
    return json.loads(verified.payload)


def der_b64(cert: x509.Certificate) -> str:
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def hash_id(cert: x509.Certificate) -> str:
    digest = hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).digest()
    return "x509_hash:" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def status_of(client, individual) -> str:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]


def stored_private_key(app, organization_id: str) -> ec.EllipticCurvePrivateKey:
    """The newest key of the organization, opened the way the service opens it."""
    with app.app_context():
        key = db.session.scalars(
            db.select(VerifierKey)
            .where(VerifierKey.organization_id == uuid.UUID(organization_id))
            .order_by(VerifierKey.created_at.desc())
        ).first()
        return open_private_key(key.sealed_private_key, settings.current().kek)


# -- the deployment's identity, until the organization has its own -----------------------


def test_without_a_certificate_of_its_own_the_deployments_identity_is_used(client, acme):
    shown = identity(client, acme)
    assert shown["uses"] == "deployment"
    assert shown["certificate"] is None and shown["pending_request"] is None
    _, link, request = start(client, acme)
    assert request.client_id == f"redirect_uri:{request.response_uri}"
    assert "request_uri" not in parse_qs(urlsplit(link).query)


# -- the certificate signing request -----------------------------------------------------


def test_the_csr_is_pkcs10_signed_by_the_generated_key_with_the_organizations_names(
    app, client, acme, tmp_path
):
    made = signing_request(client, acme, country="nl")
    csr = x509.load_pem_x509_csr(made["csr_pem"].encode())
    assert csr.is_signature_valid
    assert csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "Acme Bank"
    assert csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "Acme Bank"
    assert csr.subject.get_attributes_for_oid(NameOID.COUNTRY_NAME)[0].value == "NL"
    assert isinstance(csr.public_key(), ec.EllipticCurvePublicKey)
    assert csr.public_key().curve.name == "secp256r1"
    # The key it carries is the one the service keeps (sealed) to sign with.
    assert csr.public_key() == stored_private_key(app, acme.organization_id).public_key()
    with pytest.raises(x509.ExtensionNotFound):
        csr.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert made["dns_name"] is None
    # OpenSSL agrees that the request's signature is its own key's.
    openssl = shutil.which("openssl")
    assert openssl, "openssl is needed to check the CSR independently"
    path = tmp_path / "request.csr"
    path.write_text(made["csr_pem"])
    checked = subprocess.run(
        [openssl, "req", "-in", str(path), "-noout", "-verify"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert "verify OK" in checked.stdout + checked.stderr


def test_the_csr_names_the_deployments_host_when_asked(client, acme):
    made = signing_request(client, acme, name_host=True)
    csr = x509.load_pem_x509_csr(made["csr_pem"].encode())
    san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [HOST]
    assert made["dns_name"] == HOST


@pytest.mark.parametrize("country", ["D", "DEU", "1A", ""])
def test_a_country_that_is_not_two_letters_is_refused(client, acme, country):
    response = client.post(
        "/verifier-identity/signing-request", json={"country": country}, headers=acme.headers()
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


# -- signed requests under the organization's own identity --------------------------------


def test_an_uploaded_chain_signs_the_organizations_requests_under_x509_hash(
    client, acme, registrar
):
    leaf = own_certificate(client, acme, registrar)
    shown = identity(client, acme)
    assert shown["uses"] == "organization"
    assert shown["certificate"]["client_id"] == hash_id(leaf)
    assert shown["pending_request"] is None

    _, link, request = start(client, acme)
    assert parse_qs(urlsplit(link).query)["client_id"] == [hash_id(leaf)]
    assert request.header["typ"] == "oauth-authz-req+jwt"
    assert request.header["x5c"] == [
        der_b64(leaf),
        der_b64(registrar.intermediate),
        der_b64(registrar.root),
    ]
    assert verify_signed(request.token, leaf.public_key()) == request.claims
    assert request.claims["client_id"] == hash_id(leaf)
    assert request.claims["client_metadata"]["client_name"] == "Acme Bank"
    assert "logo_uri" not in request.claims["client_metadata"]
    assert "verifier_info" not in request.claims


def test_a_certificate_naming_the_host_gives_x509_san_dns(client, acme, registrar):
    leaf = own_certificate(client, acme, registrar, name_host=True)
    _, _, request = start(client, acme)
    assert request.client_id == f"x509_san_dns:{HOST}"
    assert verify_signed(request.token, leaf.public_key())["client_id"] == f"x509_san_dns:{HOST}"


def test_a_presentation_bound_to_the_organizations_client_id_verifies(client, acme, registrar):
    leaf = own_certificate(client, acme, registrar)
    individual, _, request = start(client, acme)
    presentation = node_presentation(request, Issuer(), aud=hash_id(leaf))
    assert post_response(client, request, presentation).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


def test_a_presentation_bound_to_the_deployments_client_id_fails(client, acme, registrar):
    own_certificate(client, acme, registrar)
    individual, _, request = start(client, acme)
    presentation = node_presentation(request, Issuer(), aud=f"redirect_uri:{request.response_uri}")
    assert post_response(client, request, presentation).status_code == 200
    assert status_of(client, individual) == "FAILED"


def test_two_organizations_requests_carry_their_own_identities(client, acme, beta, registrar):
    acme_leaf = own_certificate(client, acme, registrar)
    beta_leaf = own_certificate(client, beta, Registrar("Other Registrar"))
    _, _, acme_request = start(client, acme)
    _, _, beta_request = start(client, beta)
    assert acme_request.client_id == hash_id(acme_leaf)
    assert beta_request.client_id == hash_id(beta_leaf)
    assert acme_request.client_id != beta_request.client_id
    assert acme_request.header["x5c"][0] == der_b64(acme_leaf)
    assert beta_request.header["x5c"][0] == der_b64(beta_leaf)
    assert acme_request.claims["client_metadata"]["client_name"] == "Acme Bank"
    assert beta_request.claims["client_metadata"]["client_name"] == "Beta Shop"
    verify_signed(beta_request.token, beta_leaf.public_key())


def test_the_logo_travels_with_the_request(client, acme, registrar):
    leaf = own_certificate(client, acme, registrar)
    response = client.put(
        "/verifier-identity/profile",
        json={"logo_uri": "https://acme.test/logo.png"},
        headers=acme.headers(),
    )
    assert response.status_code == 200, response.get_json()
    _, _, request = start(client, acme)
    claims = verify_signed(request.token, leaf.public_key())
    assert claims["client_metadata"]["logo_uri"] == "https://acme.test/logo.png"
    # Without a registration certificate, nothing is sent in verifier_info.
    assert "verifier_info" not in claims

    # A field left out keeps its value; null clears one.
    client.put(
        "/verifier-identity/profile", json={"logo_uri": None}, headers=acme.headers()
    ).get_json()
    assert identity(client, acme)["logo_uri"] is None


@pytest.mark.parametrize(
    ("body", "code"),
    [
        # Registration certificates are uploaded on their own, and checked there.
        (
            {"registration_certificate": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"},
            "INVALID_REQUEST",
        ),
        ({"logo_uri": "http://acme.test/logo.png"}, "INVALID_REQUEST"),
    ],
)
def test_a_profile_that_wallets_could_not_use_is_refused(client, acme, body, code):
    response = client.put("/verifier-identity/profile", json=body, headers=acme.headers())
    assert response.status_code == 400
    assert response.get_json()["code"] == code


def test_removing_the_certificate_goes_back_to_the_deployments_identity(client, acme, registrar):
    own_certificate(client, acme, registrar)
    assert (
        client.delete("/verifier-identity/certificate", headers=acme.headers()).status_code == 204
    )
    assert identity(client, acme)["uses"] == "deployment"
    _, _, request = start(client, acme)
    assert request.client_id.startswith("redirect_uri:")
    again = client.delete("/verifier-identity/certificate", headers=acme.headers())
    assert again.status_code == 409
    assert again.get_json()["code"] == "NO_ACTIVE_CERTIFICATE"


# -- uploads that are refused ---------------------------------------------------------------


def wrong_chains(registrar: Registrar, csr_pem: str) -> dict[str, str]:
    leaf = registrar.issue(csr_pem)
    other_key = ec.generate_private_key(ec.SECP256R1())
    someone_elses = registrar.issue(
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Someone")]))
        .sign(other_key, registrar.root.signature_hash_algorithm)
        .public_bytes(serialization.Encoding.PEM)
        .decode()
    )
    now = datetime.now(UTC)
    expired = registrar.issue(
        csr_pem, not_before=now - timedelta(days=30), not_after=now - timedelta(days=1)
    )
    forged = registrar.issue(csr_pem, signer=ec.generate_private_key(ec.SECP256R1()))
    return {
        "another key's certificate": registrar.chain_pem(someone_elses),
        "issuers before the leaf": pem_of(registrar.root, registrar.intermediate, leaf),
        "a missing intermediate": pem_of(leaf, registrar.root),
        "a signature that does not link": pem_of(forged, registrar.intermediate, registrar.root),
        "an expired leaf": registrar.chain_pem(expired),
        "no certificate at all": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        "plain text": "here is my certificate",
    }


WRONG = [
    "another key's certificate",
    "issuers before the leaf",
    "a missing intermediate",
    "a signature that does not link",
    "an expired leaf",
    "no certificate at all",
    "plain text",
]


@pytest.mark.parametrize("case", WRONG)
def test_a_wrong_chain_is_refused_and_changes_nothing(client, acme, registrar, case):
    made = signing_request(client, acme)
    response = upload(client, acme, wrong_chains(registrar, made["csr_pem"])[case])
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "INVALID_CERTIFICATE_CHAIN"
    assert "Traceback" not in body["error"]
    shown = identity(client, acme)
    assert shown["uses"] == "deployment"
    assert shown["pending_request"]["csr_pem"] == made["csr_pem"]


def test_each_refusal_says_what_is_wrong(client, acme, registrar):
    made = signing_request(client, acme)
    chains = wrong_chains(registrar, made["csr_pem"])
    said = {case: upload(client, acme, chains[case]).get_json()["error"] for case in chains}
    assert "not for the key" in said["another key's certificate"]
    assert "out of order" in said["issuers before the leaf"]
    assert "not issued by certificate 2" in said["a missing intermediate"]
    assert "not issued by certificate 2" in said["a signature that does not link"]
    assert "not now" in said["an expired leaf"]
    assert "no PEM certificates" in said["plain text"]


def test_a_chain_before_any_signing_request_is_a_conflict(client, acme, registrar):
    leaf = registrar.issue(
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Acme Bank")]))
        .sign(ec.generate_private_key(ec.SECP256R1()), registrar.root.signature_hash_algorithm)
        .public_bytes(serialization.Encoding.PEM)
        .decode()
    )
    response = upload(client, acme, registrar.chain_pem(leaf))
    assert response.status_code == 409
    assert response.get_json()["code"] == "NO_SIGNING_REQUEST"


# -- rotation --------------------------------------------------------------------------------


def test_a_new_signing_request_does_not_disturb_the_certificate_in_use(client, acme, registrar):
    first = own_certificate(client, acme, registrar)
    pending = signing_request(client, acme, country="FR")
    shown = identity(client, acme)
    assert shown["certificate"]["client_id"] == hash_id(first)
    assert shown["pending_request"]["csr_pem"] == pending["csr_pem"]
    _, _, request = start(client, acme)
    assert request.client_id == hash_id(first)
    verify_signed(request.token, first.public_key())


def test_uploading_the_new_chain_switches_while_requests_in_flight_finish(client, acme, registrar):
    first = own_certificate(client, acme, registrar)
    in_flight, old_link, old_request = start(client, acme, "crm-in-flight")
    second = registrar.issue(signing_request(client, acme)["csr_pem"])
    assert upload(client, acme, registrar.chain_pem(second)).status_code == 200
    assert identity(client, acme)["certificate"]["client_id"] == hash_id(second)

    # A request made before the switch keeps its identity to the end: the wallet fetches it
    # signed by the first key, and its key binding names the first client ID.
    assert (
        client.get(f"/verifications/{in_flight['id']}/connect").get_json()["connection_url"]
        == old_link
    )
    fetched_again = read_request(client, old_link)
    assert fetched_again.client_id == hash_id(first)
    verify_signed(fetched_again.token, first.public_key())
    presentation = node_presentation(old_request, Issuer(), aud=hash_id(first))
    assert post_response(client, old_request, presentation).status_code == 200
    assert status_of(client, in_flight) == "VERIFIED"

    # New requests carry the second certificate.
    _, _, new_request = start(client, acme, "crm-after")
    assert new_request.client_id == hash_id(second)
    verify_signed(new_request.token, second.public_key())


def test_an_earlier_signing_request_is_given_up_when_a_new_one_is_made(client, acme, registrar):
    earlier = signing_request(client, acme)
    signing_request(client, acme)
    response = upload(client, acme, registrar.chain_pem(registrar.issue(earlier["csr_pem"])))
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_CERTIFICATE_CHAIN"


# -- tenant isolation ---------------------------------------------------------------------------


def test_one_organization_cannot_read_or_use_anothers_identity(app, client, acme, beta, registrar):
    acme_leaf = own_certificate(client, acme, registrar)
    shown = identity(client, beta)
    assert shown["organization_id"] == beta.organization_id
    assert shown["uses"] == "deployment" and shown["certificate"] is None

    # Naming the other organization as the acting one is refused.
    response = client.get("/verifier-identity", headers=beta.headers(acme.organization_id))
    assert response.status_code == 403

    # Acme's chain cannot become Beta's: it is not for Beta's key.
    signing_request(client, beta)
    refused = upload(client, beta, registrar.chain_pem(acme_leaf))
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "INVALID_CERTIFICATE_CHAIN"

    # Beta's requests stay the deployment's; Acme's are Acme's.
    _, _, beta_request = start(client, beta)
    assert beta_request.client_id.startswith("redirect_uri:")
    _, _, acme_request = start(client, acme, "crm-2")
    assert acme_request.client_id == hash_id(acme_leaf)


def test_only_owners_and_admins_change_the_identity(app, client, acme):
    with app.app_context():
        user = db.session.get(User, uuid.UUID(acme.user_id))
        owner = membership(user, uuid.UUID(acme.organization_id))
        code, _ = mint_code(owner, 7, Role.MEMBER)
        db.session.commit()
    member = make_staff(app, "carol@acme.test", org_name="Carol's own")
    joined = client.post("/organizations/join", json={"code": code}, headers=member.headers())
    assert joined.status_code == 200, joined.get_json()
    as_member = member.headers(acme.organization_id)
    response = client.post(
        "/verifier-identity/signing-request", json={"country": "DE"}, headers=as_member
    )
    assert response.status_code == 403
    assert client.get("/verifier-identity", headers=as_member).status_code == 200
    # Registration certificates likewise: members read them, only managers upload.
    uploaded = client.post(
        "/verifier-identity/registration-certificates",
        json={"registration_certificate": "a.b.c"},
        headers=as_member,
    )
    assert uploaded.status_code == 403
    listed = client.get("/verifier-identity/registration-certificates", headers=as_member)
    assert listed.status_code == 200 and listed.get_json() == {"results": []}


# -- the private key stays inside ----------------------------------------------------------------


def key_forms(key: ec.EllipticCurvePrivateKey) -> list[str]:
    """Every way the private key could be written out."""
    der = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    scalar = key.private_numbers().private_value.to_bytes(32, "big")
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return [
        base64.b64encode(der).decode()[:40],
        scalar.hex(),
        base64.urlsafe_b64encode(scalar).rstrip(b"=").decode(),
        base64.b64encode(scalar).decode().rstrip("="),
        *[line for line in pem.splitlines()[1:-1]],
    ]


def test_the_private_key_never_appears_in_a_response_or_a_log(app, client, acme, registrar, caplog):
    caplog.set_level(logging.DEBUG)
    texts = []
    made = client.post(
        "/verifier-identity/signing-request", json={"country": "DE"}, headers=acme.headers()
    )
    texts.append(made.get_data(as_text=True))
    leaf = registrar.issue(made.get_json()["csr_pem"])
    texts.append(upload(client, acme, registrar.chain_pem(leaf)).get_data(as_text=True))
    texts.append(upload(client, acme, "garbage").get_data(as_text=True))
    texts.append(client.get("/verifier-identity", headers=acme.headers()).get_data(as_text=True))
    _, link, request = start(client, acme)
    texts += [link, request.token]
    texts.append(client.get(urlsplit(link).path).get_data(as_text=True))
    texts.append(client.get("/openapi.json").get_data(as_text=True))
    key = stored_private_key(app, acme.organization_id)
    assert key.public_key() == leaf.public_key()
    logged = caplog.text
    for form in key_forms(key):
        assert all(form not in text for text in texts), form
        assert form not in logged, form


# -- every way a request leaves: policy requests and the Digital Credentials API -------------


def test_a_policy_request_of_the_organization_carries_its_identity(app, client, acme, registrar):
    leaf = own_certificate(client, acme, registrar)
    verification = make_verification(client, acme)
    headers = {"apikey": make_apikey(app, acme.organization_id)}
    created = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    with app.test_request_context():
        _, minted = connect_policy(created["token"], 120, 600)
        db.session.commit()
        link = links().connection_url(minted.id)
    request = read_request(client, link)
    assert request.client_id == hash_id(leaf)
    verify_signed(request.token, leaf.public_key())
    presentation = node_presentation(request, Issuer(), aud=hash_id(leaf))
    assert post_response(client, request, presentation).status_code == 200
    status = client.get(f"/policy-requests/{created['id']}/status", headers=headers).get_json()
    assert status["status"] == "VERIFIED"


def test_the_digital_credentials_api_request_is_signed_with_the_organizations_key(
    client, acme, registrar
):
    leaf = own_certificate(client, acme, registrar)
    registrars = RegistrationRegistrar()
    client.post(
        "/trust/sources",
        json={"name": "Registrar", "kind": "REGISTRARS", "certificates": registrars.anchor_pem},
        headers=acme.headers(),
    )
    registration = registrars.certificate(leaf)
    uploaded = client.post(
        "/verifier-identity/registration-certificates",
        json={"registration_certificate": registration},
        headers=acme.headers(),
    )
    assert uploaded.status_code == 201, uploaded.get_json()
    _, _, request = start(client, acme)
    answer = client.get(f"/oid4vp/dc-requests/{request.request_id}").get_json()
    [offered] = answer["requests"]
    assert offered["protocol"] == "openid4vp-v1-signed"
    claims = verify_signed(offered["data"]["request"], leaf.public_key())
    assert claims["client_id"] == hash_id(leaf)
    assert claims["expected_origins"] == [f"https://{HOST}"]
    assert claims["verifier_info"] == [
        {"format": "registration_cert", "data": registration, "credential_ids": ["credential"]}
    ]


def test_once_the_certificate_has_expired_new_requests_carry_the_deployments_identity(
    client, acme, registrar
):
    csr = signing_request(client, acme)["csr_pem"]
    leaf = registrar.issue(csr, not_after=datetime.now(UTC) + timedelta(hours=2))
    assert upload(client, acme, registrar.chain_pem(leaf)).status_code == 200
    _, _, before = start(client, acme, "crm-before")
    assert before.client_id == hash_id(leaf)
    clock.set_source(lambda: leaf.not_valid_after_utc + timedelta(minutes=1))
    _, _, after = start(client, acme, "crm-after")
    assert after.client_id.startswith("redirect_uri:")
    shown = identity(client, acme)
    assert shown["certificate"]["client_id"] == hash_id(leaf)
    assert shown["certificate"]["not_after"] == leaf.not_valid_after_utc.isoformat()


def test_under_haip_a_chain_holding_a_self_signed_certificate_is_refused(
    app, client, acme, monkeypatch
):
    monkeypatch.setitem(app.config, "VERIFIER_PROFILE", "haip")
    registrar = Registrar()
    leaf = registrar.issue(signing_request(client, acme, name_host=True)["csr_pem"])
    refused = upload(client, acme, registrar.chain_pem(leaf))  # leaf, intermediate and root
    assert (refused.status_code, refused.get_json()["code"]) == (400, "INVALID_CERTIFICATE_CHAIN")
    assert "self-signed" in refused.get_json()["error"]
    taken = upload(client, acme, pem_of(leaf, registrar.intermediate))
    assert taken.status_code == 200, taken.get_json()


def test_under_haip_a_certificate_naming_the_host_still_gives_x509_hash(
    app, client, acme, monkeypatch
):
    monkeypatch.setitem(app.config, "VERIFIER_PROFILE", "haip")
    registrar = Registrar()
    leaf = registrar.issue(signing_request(client, acme, name_host=True)["csr_pem"])
    assert upload(client, acme, pem_of(leaf, registrar.intermediate)).status_code == 200
    digest = hashlib.sha256(leaf.public_bytes(serialization.Encoding.DER)).digest()
    expected = "x509_hash:" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    _, _, request = start(client, acme)
    assert request.client_id == expected
    assert verify_signed(request.token, leaf.public_key())["client_id"] == expected
