"""Verity issues to the Socious Wallet's agent (Identus SDK 7.0.0, unmodified, in Node) over
DIDComm, and the loop closes: the staff offers a credential with ``"protocol": "didcomm"``, the
SDK takes the offer's invitation, requests the credential with a new did:prism and keeps what
Verity issues (a VC-JWT of the organization's did:prism with a StatusList2021 entry); then it
presents it to a DIDComm verification: VERIFIED; the staff revokes it, it presents again:
FAILED, revoked by its issuer.

The wallet keeps a credential Verity issues only while it holds its KYC credential (of type
``verification``), as the Socious Wallet does: the test gives it one first, from an
Identus-shaped issuer of its own.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from factories import make_apikey, make_staff, make_verification

from app.didcomm import prism
from app.extensions import db
from app.issuance.prism_issuer import prism_issuer_of
from didcomm.holder import Holder
from didcomm.mediator import Mediator

TIMEOUT = 30
MEMBERSHIP = "MembershipCredential"


@pytest.fixture
def wallet(mediator: Mediator) -> Iterator[Holder]:
    with Holder(mediator.did) as running:
        running.store_credential(kyc_credential(running.prism_did()))
        yield running


def kyc_credential(subject: str) -> str:
    issuer = prism.make()
    payload = {
        "iss": issuer.did,
        "sub": subject,
        "nbf": int(time.time()) - 60,
        "vc": {
            "@context": ["https://www.w3.org/2018/credentials/v1"],
            "type": ["VerifiableCredential"],
            "credentialSubject": {"id": subject, "type": "verification", "first_name": "Ada"},
        },
    }
    return prism.sign_es256k(payload, issuer.keys["issuing-0"], f"{issuer.did}#issuing-0")


def membership_schema(client, staff) -> str:
    created = client.post(
        "/schemas",
        json={
            "name": "Membership (W3C)",
            "description": "A membership card",
            "format": "jwt_vc_json",
            "types": [MEMBERSHIP],
            "attributes": [
                {"name": "type", "description": "Kind of card", "type": "TEXT"},
                {"name": "member_name", "description": "Member", "type": "TEXT"},
                {"name": "level", "description": "Level", "type": "NUMBER"},
            ],
        },
        headers=staff.headers(),
    )
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    assert client.post(f"/schemas/{schema_id}/publish", headers=staff.headers()).status_code == 200
    return schema_id


def offer(client, staff, schema_id: str, **changes: Any):
    recipient = client.post(
        "/recipients",
        json={
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "ada@example.test",
            "customer_id": f"member-{uuid.uuid4()}",
        },
        headers={"apikey": make_apikey(client.application, staff.organization_id)},
    )
    assert recipient.status_code == 201, recipient.get_json()
    recipient = recipient.get_json()
    return client.post(
        "/credentials",
        json={
            "name": "Membership of Ada",
            "schema_id": schema_id,
            "recipient_id": recipient["id"],
            "protocol": "didcomm",
            "claims": [
                {"name": "type", "value": "membership"},
                {"name": "member_name", "value": "Ada Lovelace"},
                {"name": "level", "value": 3},
            ],
            **changes,
        },
        headers=staff.headers(),
    )


def issuer_did(app, organization_id: str) -> str:
    with app.app_context():
        did = prism_issuer_of(uuid.UUID(organization_id)).did
        db.session.commit()
    return did


def present(served, wallet: Holder, staff, verification: dict, customer_id: str) -> dict:
    client = served.app.test_client()
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification["id"]},
    ).get_json()
    url = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    wallet.accept(url)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        status = client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]
        if status in ("VERIFIED", "FAILED"):
            break
        time.sleep(0.1)
    key = make_apikey(served.app, staff.organization_id)
    return client.get(
        f"/verifications/{verification['id']}/individuals/{customer_id}", headers={"apikey": key}
    ).get_json()


def test_issued_over_didcomm_presented_verified_revoked_presented_failed(served, wallet):
    client = served.app.test_client()
    staff = make_staff(served.app)
    schema_id = membership_schema(client, staff)

    offered = offer(client, staff, schema_id)
    assert offered.status_code == 201, offered.get_json()
    credential = offered.get_json()
    assert credential["protocol"] == "didcomm"
    assert credential["offer_url"].startswith(f"{served.base}/didcomm/invitation?_oob=")
    wallet.accept(credential["offer_url"])
    try:
        received = wallet.wait_for("received", timeout=TIMEOUT)["credential"]
    except Exception:
        print(json.dumps(wallet.events("message"), indent=1)[-3000:])
        raise

    did = issuer_did(served.app, staff.organization_id)
    assert received["issuer"] == did
    assert received["claims"][0]["member_name"] == "Ada Lovelace"
    issued = client.get(f"/credentials/{credential['id']}", headers=staff.headers()).get_json()
    assert issued["status"] == "ISSUED"

    verification = make_verification(
        client,
        staff,
        schema_id=schema_id,
        claims=["member_name"],
        attributes=[],
        trusted_issuers=[prism.parse(did).canonical],
        wallet_protocols=["didcomm"],
    )
    wallet.pick("membership")  # the person picks the membership card, not the KYC one
    first = present(served, wallet, staff, verification, "crm-1")
    assert (first["status"], first["validation_error"]) == ("VERIFIED", None)
    assert first["claims"] == {"member_name": "Ada Lovelace"}

    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=staff.headers())
    assert revoked.get_json()["status"] == "REVOKED"
    again = present(served, wallet, staff, verification, "crm-2")
    assert (again["status"], again["validation_error"]) == (
        "FAILED",
        "Credential has been revoked by its issuer",
    )


def test_the_sdks_own_revocation_check_reads_verity_lists(served, wallet):
    # Agent.isCredentialRevoked, which every verifier built on the SDK runs on a presented
    # credential: it fetches the list Verity serves, checks its proof (the key in a data: URI,
    # the JWS over the URDNA2015 form) and reads the bit.
    client = served.app.test_client()
    staff = make_staff(served.app)
    credential = offer(client, staff, membership_schema(client, staff)).get_json()
    wallet.accept(credential["offer_url"])
    wallet.wait_for("received", timeout=TIMEOUT)

    assert wallet.is_revoked("membership") is False
    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=staff.headers())
    assert revoked.get_json()["status"] == "REVOKED"
    assert wallet.is_revoked("membership") is True


def test_an_offer_is_taken_once(served, wallet, mediator):
    client = served.app.test_client()
    staff = make_staff(served.app)
    credential = offer(client, staff, membership_schema(client, staff)).get_json()
    wallet.accept(credential["offer_url"])
    wallet.wait_for("received", timeout=TIMEOUT)

    with Holder(mediator.did) as second:
        second.accept(credential["offer_url"])
        second.wait_for("connected", timeout=TIMEOUT)
        time.sleep(1.5)
        assert second.events("requested_credential") == []


def test_a_credential_the_socious_wallet_would_drop_is_refused_when_offered(served):
    client = served.app.test_client()
    staff = make_staff(served.app)
    schema_id = membership_schema(client, staff)

    refused = offer(
        client,
        staff,
        schema_id,
        claims=[{"name": "type", "value": "verification"}, {"name": "member_name", "value": "A"}],
    )

    assert refused.status_code == 400
    assert refused.get_json()["code"] == "WALLET_WOULD_DROP"


def test_didcomm_offers_need_a_jwt_vc_json_schema_and_no_tx_code(served):
    client = served.app.test_client()
    staff = make_staff(served.app)
    schema_id = membership_schema(client, staff)

    with_code = offer(client, staff, schema_id, tx_code=True)

    assert with_code.status_code == 400
    assert with_code.get_json()["code"] == "PROTOCOL_NOT_AVAILABLE"
