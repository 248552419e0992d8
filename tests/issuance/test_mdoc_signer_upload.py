"""An organization's own IACA: staff take a signing request for the document signer key the
service holds, their IACA (here a test CA made with ``cryptography``) certifies it, and the
chain they upload signs every mdoc from then on. An issued mdoc carries the uploaded document
signer and goes on to VERIFIED at this deployment's verifier with that IACA as its anchor; an
mdoc issued before the upload keeps verifying against the generated IACA. A chain that is not
for the key, out of order, expired, without the mdoc DS extended key usage or whose root is no
CA is refused with 400 INVALID_CERTIFICATE_CHAIN, and only owners and admins may upload.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from factories import make_staff
from issuance.issuance_support import Wallet, make_org
from issuance.test_issuance_formats import (
    MDOC_DIPLOMA_WITH_VALIDITY,
    _document_signer,
    present_mdoc,
    publish,
    take,
)

from app.extensions import db
from app.identity.models import User
from app.organizations.models import Role
from app.organizations.operations import membership, mint_code

MDOC_DS = x509.ObjectIdentifier("1.0.18013.5.1.2")
PEM = serialization.Encoding.PEM


@dataclass
class OwnIaca:
    """An organization's own IACA, as its CA would run it."""

    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @classmethod
    def make(cls, *, ca: bool = True, days: int = 3650) -> OwnIaca:
        key = ec.generate_private_key(ec.SECP256R1())
        name = _name("Acme IACA")
        now = datetime.now(UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), True)
            .sign(key, hashes.SHA256())
        )
        return cls(key, certificate)

    @property
    def pem(self) -> str:
        return self.certificate.public_bytes(PEM).decode()

    def certify(
        self, public: ec.EllipticCurvePublicKey, *, eku: bool = True, expired: bool = False
    ) -> x509.Certificate:
        """A document signer certificate for ``public`` (Annex B.1.4), or a faulty one."""
        now = datetime.now(UTC) - (timedelta(days=400) if expired else timedelta(0))
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name("Acme Document Signer"))
            .issuer_name(self.certificate.subject)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=300))
        )
        if eku:
            builder = builder.add_extension(x509.ExtendedKeyUsage([MDOC_DS]), critical=True)
        return builder.sign(self.key, hashes.SHA256())


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "NL"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def pem_of(*certificates: x509.Certificate) -> str:
    return "".join(c.public_bytes(PEM).decode() for c in certificates)


def signing_request(client, org) -> x509.CertificateSigningRequest:
    response = client.get("/issuer/mdoc-signer/signing-request", headers=org.headers)
    assert response.status_code == 200, response.get_json()
    csr = x509.load_pem_x509_csr(response.get_json()["csr_pem"].encode())
    assert csr.is_signature_valid
    return csr


def upload(client, org, chain_pem: str):
    return client.put("/issuer/mdoc-signer", json={"chain_pem": chain_pem}, headers=org.headers)


def trusting(client, org, schema_id: str, iaca_pem: str) -> str:
    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": schema_id,
            "claims": ["given_name", "degree"],
            "trusted_issuers": [iaca_pem],
        },
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()
    return verification.get_json()["id"]


def test_an_uploaded_chain_signs_mdocs_that_our_verifier_verifies_by_that_iaca(serve) -> None:
    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    schema_id = publish(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    earlier_wallet = Wallet()
    _, earlier = take(client, org, schema_id, earlier_wallet)
    generated_iaca = client.get(f"/issuers/{org.id}/iaca").get_data(as_text=True)
    before = client.get("/issuer/mdoc-signer", headers=org.headers).get_json()
    assert before["uploaded"] is False and before["iaca_pem"] == generated_iaca

    csr = signing_request(client, org)
    iaca = OwnIaca.make()
    document_signer = iaca.certify(csr.public_key())  # type: ignore[arg-type]
    uploaded = upload(client, org, pem_of(document_signer, iaca.certificate))

    assert uploaded.status_code == 200, uploaded.get_json()
    assert uploaded.get_json()["uploaded"] is True
    assert uploaded.get_json()["iaca_pem"] == iaca.pem
    assert client.get(f"/issuers/{org.id}/iaca").get_data(as_text=True) == iaca.pem
    wallet = Wallet()
    _, issued = take(client, org, schema_id, wallet)
    assert _document_signer(issued) == document_signer

    verified = present_mdoc(
        client, trusting(client, org, schema_id, iaca.pem), "graduate-1", issued, wallet, iaca.pem
    )
    assert verified["status"] == "VERIFIED", verified
    # The mdoc issued under the generated IACA still verifies against it, status included.
    still = present_mdoc(
        client,
        trusting(client, org, schema_id, generated_iaca),
        "graduate-0",
        earlier,
        earlier_wallet,
        generated_iaca,
    )
    assert still["status"] == "VERIFIED", still

    events = client.get(
        "/audit-events", query_string={"record_type": "mdoc_signer"}, headers=org.headers
    ).get_json()["results"]
    assert "mdoc_signer.updated" in [event["action"] for event in events]


def _wrong_key(iaca: OwnIaca, public) -> str:
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    return pem_of(iaca.certify(other), iaca.certificate)


def _out_of_order(iaca: OwnIaca, public) -> str:
    return pem_of(iaca.certificate, iaca.certify(public))


def _expired(iaca: OwnIaca, public) -> str:
    return pem_of(iaca.certify(public, expired=True), iaca.certificate)


def _without_ds_eku(iaca: OwnIaca, public) -> str:
    return pem_of(iaca.certify(public, eku=False), iaca.certificate)


def _root_not_a_ca(iaca: OwnIaca, public) -> str:
    not_ca = OwnIaca.make(ca=False)
    return pem_of(not_ca.certify(public), not_ca.certificate)


def _another_iaca(iaca: OwnIaca, public) -> str:
    return pem_of(iaca.certify(public), OwnIaca.make().certificate)


def _signer_alone(iaca: OwnIaca, public) -> str:
    return pem_of(iaca.certify(public))


@pytest.mark.parametrize(
    ("chain", "says"),
    [
        (_wrong_key, "not for this organization's document signer key"),
        (_out_of_order, "out of order"),
        (_expired, "not now"),
        (_without_ds_eku, "1.0.18013.5.1.2"),
        (_root_not_a_ca, "not a CA"),
        (_another_iaca, "not issued by the IACA"),
        (_signer_alone, "two certificates"),
    ],
)
def test_a_chain_that_cannot_sign_mdocs_is_refused(app, client, chain, says) -> None:
    org = make_org(app)
    public = signing_request(client, org).public_key()
    before = client.get(f"/issuers/{org.id}/iaca").get_data(as_text=True)

    refused = upload(client, org, chain(OwnIaca.make(), public))

    assert refused.status_code == 400
    assert refused.get_json()["code"] == "INVALID_CERTIFICATE_CHAIN"
    assert says in refused.get_json()["error"]
    assert client.get(f"/issuers/{org.id}/iaca").get_data(as_text=True) == before
    assert client.get("/issuer/mdoc-signer", headers=org.headers).get_json()["uploaded"] is False


def test_only_owners_and_admins_take_a_signing_request_or_upload(app, client) -> None:
    org = make_org(app)
    with app.app_context():
        user = db.session.get(User, uuid.UUID(org.staff.user_id))
        owner = membership(user, uuid.UUID(org.id))
        code, _ = mint_code(owner, 7, Role.MEMBER)
        db.session.commit()
    member = make_staff(app, "carol@acme.test", org_name="Carol's own")
    joined = client.post("/organizations/join", json={"code": code}, headers=member.headers())
    assert joined.status_code == 200, joined.get_json()
    as_member = member.headers(org.id)

    assert client.get("/issuer/mdoc-signer", headers=as_member).status_code == 200
    assert client.get("/issuer/mdoc-signer/signing-request", headers=as_member).status_code == 403
    public = signing_request(client, org).public_key()
    iaca = OwnIaca.make()
    refused = client.put(
        "/issuer/mdoc-signer",
        json={"chain_pem": pem_of(iaca.certify(public), iaca.certificate)},  # type: ignore[arg-type]
        headers=as_member,
    )
    assert refused.status_code == 403
