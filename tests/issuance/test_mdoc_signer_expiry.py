"""A document signer certificate past its end, on the service's clock.

The organization's own (uploaded) document signer cannot be renewed here: the credential
endpoint refuses mdocs with ``credential_request_denied`` (never signing one no verifier would
accept), the log tells staff why, and both the staff API and the dashboard page show the
certificate expired. The generated one is certified anew by the generated IACA, for the same
key, the next time it is needed, so issuing goes on.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from issuance.issuance_support import Org, Wallet, access_token, issue, make_org
from issuance.test_issuance_formats import CLAIMS, MDOC_DIPLOMA_WITH_VALIDITY, _document_signer
from issuance.test_issuance_formats import publish as publish_schema
from issuance.test_mdoc_signer_upload import MDOC_DS, OwnIaca, _name, pem_of, signing_request
from staff.staff_support import sign_in, text_of

from app import clock
from app.extensions import db
from app.identity.models import User
from app.identity.operations import issue_session_token
from app.issuance.models import MdocSigner
from app.mdoc.certificates import DOCUMENT_SIGNER_DAYS


def at(moment: datetime, app, org: Org) -> Org:
    """The service's clock at ``moment``, and staff signed in again then (a session lasts
    hours, the certificates days)."""
    clock.set_source(lambda: moment)
    with app.app_context():
        user = db.session.get(User, uuid.UUID(org.staff.user_id))
        token, _ = issue_session_token(user, 12)
        db.session.commit()
        db.session.remove()
    return replace(org, staff=replace(org.staff, token=token))


def ask_for_mdoc(client, org, schema_id: str, wallet: Wallet):
    """The pre-authorized code flow up to the credential response, every step at the
    service's clock (the proof's ``iat`` too)."""
    offered = issue(client, org, schema_id=schema_id, claims=CLAIMS)
    token = access_token(client, org, wallet, offered)
    iat = int(clock.now().timestamp())
    proof = wallet.proof(org.issuer, wallet.nonce(client, org), iat=iat)
    return wallet.request(
        client,
        org,
        token,
        {"credential_configuration_id": schema_id, "proofs": {"jwt": [proof]}},
    )


def put_chain(client, org, chain_pem: str):
    return client.put("/issuer/mdoc-signer", json={"chain_pem": chain_pem}, headers=org.headers)


def short_lived_signer(iaca: OwnIaca, public, until: datetime) -> x509.Certificate:
    """A document signer certificate the organization's IACA issued, valid until ``until``."""
    return (
        x509.CertificateBuilder()
        .subject_name(_name("Acme Document Signer"))
        .issuer_name(iaca.certificate.subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(datetime.now(UTC) - timedelta(days=1))
        .not_valid_after(until)
        .add_extension(x509.ExtendedKeyUsage([MDOC_DS]), critical=True)
        .sign(iaca.key, hashes.SHA256())
    )


def test_an_expired_uploaded_document_signer_refuses_mdocs_and_says_so(app, caplog) -> None:
    client = app.test_client()
    org = make_org(app)
    schema_id = publish_schema(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    iaca = OwnIaca.make()
    ends = datetime.now(UTC) + timedelta(days=2)
    signer = short_lived_signer(iaca, signing_request(client, org).public_key(), ends)
    uploaded = client.put(
        "/issuer/mdoc-signer",
        json={"chain_pem": pem_of(signer, iaca.certificate)},
        headers=org.headers,
    )
    assert uploaded.status_code == 200, uploaded.get_json()
    assert uploaded.get_json()["valid_now"] is True
    assert uploaded.get_json()["problem"] is None

    org = at(ends + timedelta(minutes=1), app, org)
    with caplog.at_level(logging.WARNING, logger="app.issuance.wallet"):
        refused = ask_for_mdoc(client, org, schema_id, Wallet())

    assert refused.status_code == 400, refused.get_json()
    assert refused.get_json()["error"] == "credential_request_denied"
    assert "document signer certificate is not valid" in refused.get_json()["error_description"]
    logged = [r.getMessage() for r in caplog.records if "mdoc issuance refused" in r.getMessage()]
    assert len(logged) == 1 and org.id in logged[0]
    assert "Acme Document Signer" in logged[0] and "is expired" in logged[0]
    assert "PUT /issuer/mdoc-signer" in logged[0]

    shown = client.get("/issuer/mdoc-signer", headers=org.headers).get_json()
    assert shown["valid_now"] is False and shown["uploaded"] is True
    assert "expired" in shown["problem"]
    assert datetime.fromisoformat(shown["document_signer_not_after"]) == ends.replace(microsecond=0)

    browser = app.test_client()
    assert sign_in(browser, org.staff.token).status_code == 302
    page = text_of(browser.get("/dashboard/mdoc-signer"))
    assert 'data-testid="signer-expired"' in page
    assert "Expired" in page and f"{ends:%Y-%m-%d}" in page


def test_a_new_chain_after_expiry_lets_mdocs_be_issued_again(app) -> None:
    client = app.test_client()
    org = make_org(app)
    schema_id = publish_schema(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    iaca = OwnIaca.make(days=3650)
    public = signing_request(client, org).public_key()
    ends = datetime.now(UTC) + timedelta(days=2)
    first = pem_of(short_lived_signer(iaca, public, ends), iaca.certificate)
    assert put_chain(client, org, first).status_code == 200
    later = ends + timedelta(days=1)
    org = at(later, app, org)
    assert ask_for_mdoc(client, org, schema_id, Wallet()).status_code == 400

    renewed = short_lived_signer(iaca, public, later + timedelta(days=300))
    second = pem_of(renewed, iaca.certificate)
    assert put_chain(client, org, second).status_code == 200
    issued = ask_for_mdoc(client, org, schema_id, Wallet())
    assert issued.status_code == 200, issued.get_json()
    assert _document_signer(issued.get_json()["credentials"][0]["credential"]) == renewed


def test_the_generated_document_signer_is_renewed_under_the_same_iaca_when_it_expires(
    app,
) -> None:
    client = app.test_client()
    org = make_org(app)
    schema_id = publish_schema(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    first = ask_for_mdoc(client, org, schema_id, Wallet())
    assert first.status_code == 200, first.get_json()
    before = _document_signer(first.get_json()["credentials"][0]["credential"])
    iaca = x509.load_pem_x509_certificate(client.get(f"/issuers/{org.id}/iaca").data)
    assert before.not_valid_after_utc - before.not_valid_before_utc >= timedelta(
        days=DOCUMENT_SIGNER_DAYS
    )

    moment = before.not_valid_after_utc + timedelta(minutes=1)
    org = at(moment, app, org)
    second = ask_for_mdoc(client, org, schema_id, Wallet())

    assert second.status_code == 200, second.get_json()
    after = _document_signer(second.get_json()["credentials"][0]["credential"])
    assert after != before
    assert after.not_valid_before_utc <= moment <= after.not_valid_after_utc
    assert after.public_key() == before.public_key()  # the same key, certified anew
    after.verify_directly_issued_by(iaca)
    assert client.get(f"/issuers/{org.id}/iaca").data == iaca.public_bytes(
        serialization.Encoding.PEM
    )
    shown = client.get("/issuer/mdoc-signer", headers=org.headers).get_json()
    assert shown["valid_now"] is True and shown["uploaded"] is False
    with app.app_context():
        assert db.session.query(MdocSigner).count() == 1
