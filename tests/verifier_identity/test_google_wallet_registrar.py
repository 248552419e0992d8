"""Google Wallet's verifier registrar: a deployment holding a registrar CA issues each
organization a leaf that binds its relying party metadata, and signs its Digital Credentials
API requests with it, carrying the metadata as ``client_metadata.gw_rp_metadata_bytes``.

The metadata is decoded with cbor2 directly, the extension read as raw DER, the signature
checked with joserfc and the chain with ``openssl verify``: none of them the service's code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import uuid

import cbor2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from factories import Staff, make_staff, make_verification
from identity_support import GoogleRegistrarCA, Registrar, pem_of
from joserfc import jws
from joserfc.jwk import ECKey
from staff.staff_support import sign_in, text_of
from wallets import read_request

from app import clock
from app.extensions import db
from app.issuance import settings
from app.oid4vp.google_registrar import DisplayInfo, RegistrarCA, metadata_bytes
from app.verifier_identity import google_wallet
from app.verifier_identity.models import GoogleWalletCertificate

RP_METADATA_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.10.1")
LOGO = "https://acme.test/logo.png"
PRIVACY = "https://acme.test/privacy"


@pytest.fixture(scope="module")
def ca() -> GoogleRegistrarCA:
    return GoogleRegistrarCA()


@pytest.fixture
def registrar_app(make_app, ca, tmp_path):
    return make_app(**ca.settings(tmp_path))


@pytest.fixture
def acme(registrar_app) -> Staff:
    return make_staff(registrar_app, "alice@acme.test", org_name="Acme Bank")


def set_profile(client, staff: Staff, **fields):
    response = client.put("/verifier-identity/profile", json=fields, headers=staff.headers())
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def dc_request(client, staff: Staff, customer_id: str = "crm-1", **verification) -> dict:
    created = make_verification(client, staff, **verification)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    answer = client.get(f"/oid4vp/dc-requests/{request.request_id}")
    assert answer.status_code == 200, answer.get_json()
    [offered] = [r for r in answer.get_json()["requests"] if r["protocol"].startswith("openid4vp")]
    return offered


def signed_parts(token: str) -> tuple[dict, dict, list[x509.Certificate]]:
    """Header, claims and x5c of the request, its signature checked against the x5c leaf."""
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    chain = [x509.load_der_x509_certificate(base64.b64decode(c)) for c in header["x5c"]]
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 16_384
    verified = jws.deserialize_compact(
        token, ECKey.import_key(chain[0].public_key()), registry=registry
    )
    return header, json.loads(verified.payload), chain


def bound_hash(leaf: x509.Certificate) -> bytes:
    """The extension's value read as raw DER: OCTET STRING (0x04), length 32, the hash."""
    extension = leaf.extensions.get_extension_for_oid(RP_METADATA_OID)
    assert extension.critical is False
    value = extension.value.value
    assert value[:2] == b"\x04\x20" and len(value) == 34
    return value[2:]


def test_the_leaf_binds_the_organizations_metadata_and_signs_its_dc_api_requests(
    registrar_app, acme, ca, tmp_path
):
    client = registrar_app.test_client()
    set_profile(client, acme, logo_uri=LOGO, privacy_policy_uri=PRIVACY)
    offered = dc_request(client, acme)
    assert offered["protocol"] == "openid4vp-v1-signed"
    header, claims, chain = signed_parts(offered["data"]["request"])
    assert (header["alg"], header["typ"]) == ("ES256", "oauth-authz-req+jwt")
    leaf = chain[0]
    assert [c.subject for c in chain[1:]] == [ca.ca.subject]  # the root stays with Google
    digest = hashlib.sha256(leaf.public_bytes(serialization.Encoding.DER)).digest()
    assert (
        claims["client_id"] == "x509_hash:" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    )

    encoded = claims["client_metadata"]["gw_rp_metadata_bytes"]
    metadata_bytes = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    assert hashlib.sha256(metadata_bytes).digest() == bound_hash(leaf)
    tagged = cbor2.loads(metadata_bytes)
    assert isinstance(tagged, cbor2.CBORTag) and tagged.tag == 24
    assert cbor2.loads(tagged.value) == {
        "schema_version": "v1",
        "display": {
            "display_name": "Acme Bank",
            "logo_uri": LOGO,
            "privacy_policy_uri": PRIVACY,
        },
    }

    key_usage = leaf.extensions.get_extension_for_class(x509.KeyUsage)
    assert key_usage.critical and key_usage.value.digital_signature
    assert leaf.public_key().curve.name == "secp256r1"
    if shutil.which("openssl"):
        (tmp_path / "root.pem").write_text(pem_of(ca.root))
        (tmp_path / "ca.pem").write_text(pem_of(ca.ca))
        (tmp_path / "leaf.pem").write_text(pem_of(leaf))
        verified = subprocess.run(
            ["openssl", "verify", "-CAfile", "root.pem", "-untrusted", "ca.pem", "leaf.pem"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert verified.returncode == 0, verified.stderr

    shown = client.get("/verifier-identity", headers=acme.headers()).get_json()["google_wallet"]
    assert shown["client_id"] == claims["client_id"]
    assert shown["metadata_sha256"] == bound_hash(leaf).hex()
    assert shown["missing"] == []


def test_a_changed_privacy_policy_gets_a_new_leaf_and_the_same_leaf_serves_until_then(
    registrar_app, acme
):
    client = registrar_app.test_client()
    set_profile(client, acme, logo_uri=LOGO, privacy_policy_uri=PRIVACY)
    first = signed_parts(dc_request(client, acme, "crm-1")["data"]["request"])[2][0]
    again = signed_parts(dc_request(client, acme, "crm-2")["data"]["request"])[2][0]
    assert again == first
    set_profile(client, acme, privacy_policy_uri="https://acme.test/privacy-2027")
    _, claims, chain = signed_parts(dc_request(client, acme, "crm-3")["data"]["request"])
    assert chain[0] != first
    encoded = claims["client_metadata"]["gw_rp_metadata_bytes"]
    metadata_bytes = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    assert hashlib.sha256(metadata_bytes).digest() == bound_hash(chain[0])
    display = cbor2.loads(cbor2.loads(metadata_bytes).value)["display"]
    assert display["privacy_policy_uri"] == "https://acme.test/privacy-2027"


def test_without_a_privacy_policy_no_leaf_is_issued_and_the_page_says_what_is_missing(
    registrar_app, acme
):
    client = registrar_app.test_client()
    set_profile(client, acme, logo_uri=LOGO)
    offered = dc_request(client, acme)
    assert "gw_rp_metadata_bytes" not in json.dumps(offered)
    shown = client.get("/verifier-identity", headers=acme.headers()).get_json()["google_wallet"]
    assert shown["client_id"] is None
    assert shown["missing"] == ["privacy_policy_uri (PUT /verifier-identity/profile)"]


def test_a_privacy_policy_that_is_not_https_is_refused(registrar_app, acme):
    client = registrar_app.test_client()
    response = client.put(
        "/verifier-identity/profile",
        json={"privacy_policy_uri": "http://acme.test/privacy"},
        headers=acme.headers(),
    )
    assert response.status_code == 400


def test_without_a_registrar_the_identity_shows_no_google_wallet_leaf(client, app):
    staff = make_staff(app, "bob@beta.test", org_name="Beta")
    assert (
        client.get("/verifier-identity", headers=staff.headers()).get_json()["google_wallet"]
        is None
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("other_key", "is not the key of GOOGLE_REGISTRAR_CHAIN_FILE's first certificate"),
        ("not_a_ca", "is not a CA"),
        ("key_only", "must be set together"),
    ],
)
def test_a_registrar_that_cannot_issue_stops_the_start(make_app, tmp_path, change, words):
    ca = GoogleRegistrarCA(ca_is_ca=change != "not_a_ca")
    settings = ca.settings(tmp_path)
    if change == "other_key":
        other = tmp_path / "other"
        other.mkdir()
        settings["GOOGLE_REGISTRAR_KEY_FILE"] = GoogleRegistrarCA().settings(other)[
            "GOOGLE_REGISTRAR_KEY_FILE"
        ]
    if change == "key_only":
        del settings["GOOGLE_REGISTRAR_CHAIN_FILE"]
    with pytest.raises(RuntimeError, match=words):
        make_app(**settings)


def test_a_new_registrar_ca_issues_new_leaves(registrar_app, make_app, acme, ca, tmp_path):
    client = registrar_app.test_client()
    set_profile(client, acme, logo_uri=LOGO, privacy_policy_uri=PRIVACY)
    signed_parts(dc_request(client, acme, "crm-1")["data"]["request"])[2][
        0
    ].verify_directly_issued_by(ca.ca)
    successor = GoogleRegistrarCA()
    (tmp_path / "next").mkdir()
    moved = make_app(**successor.settings(tmp_path / "next")).test_client()
    _, claims, chain = signed_parts(dc_request(moved, acme, "crm-2")["data"]["request"])
    chain[0].verify_directly_issued_by(successor.ca)
    assert [c.subject for c in chain[1:]] == [successor.ca.subject]
    encoded = claims["client_metadata"]["gw_rp_metadata_bytes"]
    metadata_bytes = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    assert hashlib.sha256(metadata_bytes).digest() == bound_hash(chain[0])


def test_the_dashboard_page_shows_the_leaf_or_what_is_missing(registrar_app, acme):
    client = registrar_app.test_client()
    assert sign_in(client, acme.token).status_code == 302
    page = text_of(client.get("/dashboard/verifier-identity"))
    assert 'data-testid="google-wallet-missing"' in page
    set_profile(client, acme, logo_uri=LOGO, privacy_policy_uri=PRIVACY)
    _, claims, _ = signed_parts(dc_request(client, acme)["data"]["request"])
    page = text_of(client.get("/dashboard/verifier-identity"))
    assert claims["client_id"] in page


def test_a_second_first_leaf_meets_the_first_and_takes_its_place(registrar_app, acme, ca):
    """Two first requests at once: each issued a leaf; the second to store it finds the
    first's row at the primary key and replaces it, so one row is left, the newest."""
    registrar = RegistrarCA(ca.ca_key, (ca.ca, ca.root))
    organization_id = uuid.UUID(acme.organization_id)
    data = metadata_bytes(DisplayInfo("Acme Bank", LOGO, PRIVACY))
    with registrar_app.app_context():
        kek = settings.current().kek
        leaves = []
        for _ in range(2):
            key = ec.generate_private_key(ec.SECP256R1())
            leaf = registrar.issue(
                organization_id, "Acme Bank", key.public_key(), data, clock.now()
            )
            google_wallet._keep(organization_id, None, key, leaf, data, kek)  # neither saw a row
            db.session.commit()
            leaves.append(leaf)
        rows = db.session.scalars(db.select(GoogleWalletCertificate)).all()
        assert len(rows) == 1
        assert x509.load_pem_x509_certificate(rows[0].leaf_pem.encode()) == leaves[1]


def test_an_intermediated_relying_partys_request_is_not_signed_with_the_organizations_leaf(
    registrar_app, acme
):
    client = registrar_app.test_client()
    set_profile(client, acme, logo_uri=LOGO, privacy_policy_uri=PRIVACY)
    registrar = Registrar()
    csr = client.post(
        "/verifier-identity/signing-request",
        json={"country": "NL", "relying_party": "Beta Shop"},
        headers=acme.headers(),
    ).get_json()["csr_pem"]
    leaf = registrar.issue(csr)
    assert (
        client.put(
            "/verifier-identity/certificate",
            json={"chain_pem": registrar.chain_pem(leaf), "relying_party": "Beta Shop"},
            headers=acme.headers(),
        ).status_code
        == 200
    )
    offered = dc_request(client, acme, relying_party="Beta Shop")
    _, claims, chain = signed_parts(offered["data"]["request"])
    assert chain[0] == leaf
    assert "gw_rp_metadata_bytes" not in claims["client_metadata"]


def test_a_request_signed_with_the_leaf_carries_no_registration_certificate(registrar_app, acme):
    from identity_support import RegistrationRegistrar

    client = registrar_app.test_client()
    set_profile(client, acme, logo_uri=LOGO, privacy_policy_uri=PRIVACY)
    registrar = Registrar()
    csr = client.post(
        "/verifier-identity/signing-request", json={"country": "NL"}, headers=acme.headers()
    ).get_json()["csr_pem"]
    own = registrar.issue(csr)
    put = {"chain_pem": registrar.chain_pem(own)}
    taken = client.put("/verifier-identity/certificate", json=put, headers=acme.headers())
    assert taken.status_code == 200, taken.get_json()
    registrars = RegistrationRegistrar()
    source = {"name": "Registrar", "kind": "REGISTRARS", "certificates": registrars.anchor_pem}
    assert client.post("/trust/sources", json=source, headers=acme.headers()).status_code == 201
    uploaded = client.post(
        "/verifier-identity/registration-certificates",
        json={"registration_certificate": registrars.certificate(own)},
        headers=acme.headers(),
    )
    assert uploaded.status_code == 201, uploaded.get_json()
    offered = dc_request(client, acme)
    _, claims, chain = signed_parts(offered["data"]["request"])
    assert chain[0] != own and "gw_rp_metadata_bytes" in claims["client_metadata"]
    # The registration certificate names the access certificate's subject, not the leaf's.
    assert "verifier_info" not in claims
