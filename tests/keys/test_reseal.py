"""``flask keys reseal``: a new ISSUER_KEY_SECRET without losing the issuer's key, the
webhook secrets or the offers already sent."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

from cryptography import x509
from issuance.issuance_support import Wallet, issue, make_org, receive
from issuance.test_issuance_formats import MDOC_DIPLOMA_WITH_VALIDITY, _document_signer, publish
from issuance.test_mdoc_signer_expiry import ask_for_mdoc, at

from app import clock
from app.extensions import db
from app.issuance import settings as issuing_settings
from app.issuance.models import IssuerKey, MdocSigner
from app.oid4vci.keys import open_private_key
from app.sdjwt.jws import read_unverified
from app.verifier_identity.models import VerifierKey
from app.webhooks import operations as webhook_operations
from app.webhooks.models import WebhookEndpoint

OLD = "the-secret-sealed-under-until-today"
NEW = "the-secret-configured-from-today-on"


def reseal(app, previous: str | None = OLD):
    env = {} if previous is None else {"PREVIOUS_ISSUER_KEY_SECRET": previous}
    return app.test_cli_runner().invoke(args=["keys", "reseal"], env=env)


def sealed_state(app) -> dict:
    with app.app_context():
        return {
            "keys": [k.sealed_private_key for k in db.session.query(IssuerKey)],
            "secrets": [e.sealed_secret for e in db.session.query(WebhookEndpoint)],
        }


def test_after_resealing_the_same_key_signs_webhooks_sign_and_sent_links_work(make_app):
    before = make_app(ISSUER_KEY_SECRET=OLD)
    org = make_org(before)
    client = before.test_client()
    first = issue(client, org)
    signed_before = receive(client, org, Wallet(), first)
    still_open = issue(client, org)
    with_tx_code = issue(client, org, tx_code=True)
    hook = client.post(
        "/webhooks/endpoints", json={"url": "https://hooks.example.test/v"}, headers=org.headers
    )
    assert hook.status_code == 201, hook.get_json()
    csr = client.post(
        "/verifier-identity/signing-request", json={"country": "DE"}, headers=org.headers
    )
    assert csr.status_code == 201, csr.get_json()

    after = make_app(ISSUER_KEY_SECRET=NEW)
    result = reseal(after)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "issuer_keys": 2,  # the signing key and the root key that certified it
        "issuer_keys_already_sealed": 0,
        "issuer_keys_in_token": 0,
        "mdoc_keys": 0,
        "prism_keys": 0,
        "verifier_keys": 1,
        "didcomm_keys": 0,
        "webhook_secrets": 1,
        "link_secrets": 0,
        "offer_codes": 1,
        "offers_with_tx_code": 1,
    }

    client = after.test_client()
    signed_after = receive(client, org, Wallet(), still_open)
    kid = read_unverified(signed_before.split("~")[0])[0]["kid"]
    assert read_unverified(signed_after.split("~")[0])[0]["kid"] == kid
    with after.app_context():
        endpoint = db.session.query(WebhookEndpoint).one()
        assert webhook_operations.signing_secrets(endpoint) == [hook.get_json()["secret"]]
        verifier_key = db.session.query(VerifierKey).one()
        open_private_key(verifier_key.sealed_private_key, issuing_settings.current().kek)
    assert with_tx_code["tx_code"]  # shown once; its offer is counted to be sent again


def test_resealing_twice_moves_nothing_the_second_time(make_app):
    before = make_app(ISSUER_KEY_SECRET=OLD)
    org = make_org(before)
    client = before.test_client()
    receive(client, org, Wallet(), issue(client, org))
    after = make_app(ISSUER_KEY_SECRET=NEW)
    assert reseal(after).exit_code == 0
    again = reseal(after)
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["issuer_keys"] == 0 and report["issuer_keys_already_sealed"] == 2


def test_after_resealing_the_root_still_certifies_a_rotated_key(make_app):
    before = make_app(ISSUER_KEY_SECRET=OLD)
    org = make_org(before)
    client = before.test_client()
    first = receive(client, org, Wallet(), issue(client, org))
    after = make_app(ISSUER_KEY_SECRET=NEW)
    assert reseal(after).exit_code == 0
    rotated = after.test_cli_runner().invoke(args=["issuers", "rotate-key", org.id])
    assert rotated.exit_code == 0, rotated.output
    client = after.test_client()
    second = receive(client, org, Wallet(), issue(client, org))
    headers = [read_unverified(c.split("~")[0])[0] for c in (first, second)]
    assert headers[0]["kid"] != headers[1]["kid"]
    leaves = [x509.load_der_x509_certificate(base64.b64decode(h["x5c"][0])) for h in headers]
    root_pem = client.get("/issuer/certificate", headers=org.headers).get_json()["root_pem"]
    root = x509.load_pem_x509_certificate(root_pem.encode())
    for leaf in leaves:  # the root made before the reseal signed the new certificate too
        leaf.verify_directly_issued_by(root)


def test_a_wrong_previous_secret_changes_nothing_and_says_so(make_app):
    before = make_app(ISSUER_KEY_SECRET=OLD)
    org = make_org(before)
    client = before.test_client()
    receive(client, org, Wallet(), issue(client, org))
    after = make_app(ISSUER_KEY_SECRET=NEW)
    unchanged = sealed_state(after)

    wrong = reseal(after, previous="not-the-old-secret")
    assert wrong.exit_code == 1
    assert "opens under neither" in wrong.stderr
    assert "PREVIOUS_ISSUER_KEY_SECRET" in wrong.stderr
    assert sealed_state(after) == unchanged

    missing = reseal(after, previous=None)
    assert missing.exit_code == 1 and "empty" in missing.stderr
    assert NEW not in wrong.output + missing.output and OLD not in wrong.output


def test_after_resealing_the_mdoc_keys_sign_mdocs_and_certify_a_new_document_signer(make_app):
    before = make_app(ISSUER_KEY_SECRET=OLD)
    org = make_org(before)
    client = before.test_client()
    schema_id = publish(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    first = ask_for_mdoc(client, org, schema_id, Wallet())
    assert first.status_code == 200, first.get_json()

    after = make_app(ISSUER_KEY_SECRET=NEW)
    result = reseal(after)
    assert result.exit_code == 0, result.output

    client = after.test_client()
    second = ask_for_mdoc(client, org, schema_id, Wallet())
    assert second.status_code == 200, second.get_json()
    report = json.loads(result.stdout)
    assert report["mdoc_keys"] == 2  # the IACA's key and the document signer's
    signer = _document_signer(second.get_json()["credentials"][0]["credential"])
    assert signer == _document_signer(first.get_json()["credentials"][0]["credential"])
    with after.app_context():
        stored = db.session.query(MdocSigner).one()
        kek = issuing_settings.current().kek
        for sealed in (stored.iaca_sealed_private_key, stored.sealed_private_key):
            assert sealed is not None
            open_private_key(sealed, kek)

    # The IACA key, opened under the new secret, certifies the next document signer.
    org = at(signer.not_valid_after_utc + timedelta(minutes=1), after, org)
    third = ask_for_mdoc(client, org, schema_id, Wallet())
    assert third.status_code == 200, third.get_json()
    renewed = _document_signer(third.get_json()["credentials"][0]["credential"])
    assert renewed != signer and renewed.not_valid_after_utc > clock.now()
    again = json.loads(reseal(after).stdout)
    # Only mdocs were issued: the two mdoc keys are all there is, now under the new secret.
    assert again["mdoc_keys"] == 0 and again["issuer_keys_already_sealed"] == 2


def test_after_resealing_the_did_prism_issuer_signs_under_the_same_did(make_app):
    import uuid

    from issuance.test_prism_issuer import verify_es256k

    from app.issuance import prism_issuer

    before = make_app(ISSUER_KEY_SECRET=OLD)
    org = make_org(before)
    with before.app_context():
        did = prism_issuer.prism_issuer_of(uuid.UUID(org.id)).did
        db.session.commit()

    after = make_app(ISSUER_KEY_SECRET=NEW)
    result = reseal(after)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["prism_keys"] == 1
    with after.app_context():
        token = prism_issuer.sign_credential(uuid.UUID(org.id), {"n": 1})
        assert prism_issuer.existing_prism_issuer(uuid.UUID(org.id)).did == did
    assert verify_es256k(token, did)[1] == {"n": 1}
    again = json.loads(reseal(after).stdout)
    assert again["prism_keys"] == 0 and again["issuer_keys_already_sealed"] == 1


def test_after_resealing_a_signed_verification_s_link_secret_still_opens(make_app):
    from factories import make_staff, make_verification

    from app.verifications.link_secret import customer_sig as sig

    before = make_app(ISSUER_KEY_SECRET=OLD)
    client = before.test_client()
    staff = make_staff(before)
    created = make_verification(client, staff, anonymous_open="signed")
    secret = created["link_secret"]

    after = make_app(ISSUER_KEY_SECRET=NEW)
    client = after.test_client()
    opened = {"customer_id": "crm-1", "verification_id": created["id"]}
    # Before the re-seal the secret no longer opens: no signature holds.
    stale = client.post(
        "/verifications/individuals", json={**opened, "customer_sig": sig(secret, "crm-1")}
    )
    assert stale.status_code == 401
    result = reseal(after)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["link_secrets"] == 1
    moved = client.post(
        "/verifications/individuals", json={**opened, "customer_sig": sig(secret, "crm-1")}
    )
    assert moved.status_code == 201, moved.get_json()
    assert json.loads(reseal(after).stdout)["link_secrets"] == 0
