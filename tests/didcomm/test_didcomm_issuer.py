"""Credentials offered over DIDComm, with a holder written here on the messaging layer: the
offer's invitation on its page, the offer answered once per invitation, the request JWT checked
(signature by the holder's did:prism, the offer's challenge as nonce, the organization's DID as
audience), the VC-JWT issued to that did:prism with its StatusList2021 entry, and the offer's
rules (withdraw, resend) holding. The SDK itself takes offers in ``test_sdk_issuer.py``."""

from __future__ import annotations

import base64
import json
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from factories import make_apikey, make_staff

from app import clock
from app.didcomm import invitation as oob
from app.didcomm import messaging, prism, protocols
from app.jobs.queue import queue_of
from didcomm.inbox_holder import Holder

MEDIA_TYPE = "application/didcomm-encrypted+json"


@pytest.fixture
def holder():
    made = Holder.start()
    yield made
    made.server.stop()


@pytest.fixture
def served(make_app):
    # Offers of ten minutes, so a test moves past one well inside a session's lifetime.
    return make_app(TRUST_ALLOW_PRIVATE=True, CREDENTIAL_OFFER_SECONDS=600)


def offered(app, client, staff=None, **schema_fields: Any) -> tuple[Any, dict[str, Any]]:
    staff = staff or make_staff(app)
    answer = offer(app, client, staff, **schema_fields)
    assert answer.status_code == 201, answer.get_json()
    return staff, answer.get_json()


def offer(app, client, staff, **schema_fields: Any):
    """``POST /credentials`` of a DIDComm offer of a new published jwt_vc_json schema."""
    schema = client.post(
        "/schemas",
        json={
            "name": "Membership (W3C)",
            "format": "jwt_vc_json",
            "types": ["MembershipCredential"],
            "attributes": [{"name": "member_name", "description": "Member", "type": "TEXT"}],
            **schema_fields,
        },
        headers=staff.headers(),
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=staff.headers())
    recipient = client.post(
        "/recipients",
        json={
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "ada@example.test",
            "customer_id": f"m-{uuid.uuid4()}",
        },
        headers={"apikey": make_apikey(app, staff.organization_id)},
    ).get_json()
    return client.post(
        "/credentials",
        json={
            "name": "Membership of Ada",
            "schema_id": schema["id"],
            "recipient_id": recipient["id"],
            "protocol": "didcomm",
            "claims": [{"name": "member_name", "value": "Ada Lovelace"}],
        },
        headers=staff.headers(),
    )


def post(client, body: bytes):
    answer = client.post("/didcomm", data=body, headers={"Content-Type": MEDIA_TYPE})
    assert answer.status_code == 202, answer.get_data(as_text=True)


def take_invitation(app, client, holder: Holder, offer_url: str) -> dict[str, Any]:
    """The holder's connection request on the offer's invitation; the offer it gets."""
    invitation = oob.parse_oob(offer_url)
    request = messaging.message(
        protocols.CONNECTION_REQUEST, invitation["body"], thid=invitation["id"]
    )
    post(client, holder.pack(request, invitation["from"]))
    queue_of(app).run_pending()
    offers = holder.received(protocols.OFFER_CREDENTIAL)
    return offers[-1] if offers else {}


def request_credential(
    offer: dict[str, Any], signer: prism.NewPrismDid, **changes: Any
) -> dict[str, Any]:
    """The SDK's request-credential: a JWT by a new did:prism, base64 without padding."""
    options = offer["attachments"][0]["data"]["json"]["options"]
    claims = {
        "iss": signer.did,
        "aud": [options["domain"]],
        "nonce": options["challenge"],
        "iat": int(time.time()),
        "vp": {
            "@context": ["https://www.w3.org/2018/presentations/v1"],
            "type": ["VerifiablePresentation"],
        },
        **changes,
    }
    token = prism.sign_es256k(
        claims, signer.keys["authentication-0"], f"{signer.did}#authentication-0"
    )
    encoded = base64.b64encode(token.encode()).decode().rstrip("=")
    return messaging.message(
        protocols.REQUEST_CREDENTIAL,
        {"formats": [{"attach_id": "a1", "format": "prism/jwt"}]},
        thid=offer["thid"],
        attachments=[
            {
                "id": "a1",
                "media_type": "prism/jwt",
                "format": "prism/jwt",
                "data": {"base64": encoded},
            }
        ],
    )


def holder_prism() -> prism.NewPrismDid:
    return prism.make({"master-0": prism.MASTER, "authentication-0": prism.AUTHENTICATION})


def issued_vc(holder: Holder) -> dict[str, Any]:
    (issued,) = holder.received(protocols.ISSUE_CREDENTIAL)
    data = issued["attachments"][0]["data"]["base64"]
    token = base64.b64decode(data + "=" * (-len(data) % 4)).decode()
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def status_of(client, staff, credential: dict[str, Any]) -> str:
    return client.get(f"/credentials/{credential['id']}", headers=staff.headers()).get_json()[
        "status"
    ]


def test_the_offer_page_shows_the_invitation(served):
    client = served.test_client()
    _, credential = offered(served, client)

    page = client.get(credential["offer_page"].removeprefix("https://verity.test"))

    assert credential["offer_url"] in page.get_data(as_text=True)
    assert credential["offer_url"].startswith("https://verity.test/didcomm/invitation?_oob=")


def test_the_offer_is_issued_to_the_did_prism_that_signed_the_request(served, holder):
    client = served.test_client()
    staff, credential = offered(served, client)
    offer = take_invitation(served, client, holder, credential["offer_url"])
    preview = offer["body"]["credential_preview"]["body"]["attributes"]
    assert preview == [{"name": "member_name", "value": "Ada Lovelace"}]
    signer = holder_prism()

    post(client, holder.pack(request_credential(offer, signer), offer["from"]))
    queue_of(served).run_pending()

    vc = issued_vc(holder)
    assert vc["sub"] == signer.did and vc["iss"].startswith("did:prism:")
    assert vc["vc"]["credentialSubject"] == {"member_name": "Ada Lovelace", "id": signer.did}
    assert vc["vc"]["credentialStatus"]["type"] == "StatusList2021Entry"
    assert status_of(client, staff, credential) == "ISSUED"


@pytest.mark.parametrize(
    "changes",
    [{"nonce": "another-offers-challenge"}, {"aud": ["did:example:someone-else"]}],
    ids=["nonce", "audience"],
)
def test_a_request_for_another_offer_or_issuer_is_refused(served, holder, changes):
    client = served.test_client()
    staff, credential = offered(served, client)
    offer = take_invitation(served, client, holder, credential["offer_url"])

    post(client, holder.pack(request_credential(offer, holder_prism(), **changes), offer["from"]))
    queue_of(served).run_pending()

    assert holder.received(protocols.ISSUE_CREDENTIAL) == []
    assert holder.received(protocols.PROBLEM_REPORT)
    assert status_of(client, staff, credential) == "OFFERED"


def test_a_request_not_signed_by_its_did_is_refused(served, holder):
    client = served.test_client()
    staff, credential = offered(served, client)
    offer = take_invitation(served, client, holder, credential["offer_url"])
    named, signing = holder_prism(), holder_prism()
    forged = prism.NewPrismDid(named.did, signing.keys)

    post(client, holder.pack(request_credential(offer, forged), offer["from"]))
    queue_of(served).run_pending()

    assert holder.received(protocols.ISSUE_CREDENTIAL) == []
    assert status_of(client, staff, credential) == "OFFERED"


def test_an_invitation_is_answered_once(served, holder):
    client = served.test_client()
    _, credential = offered(served, client)
    take_invitation(served, client, holder, credential["offer_url"])

    again = take_invitation(served, client, holder, credential["offer_url"])

    assert len(holder.received(protocols.OFFER_CREDENTIAL)) == 1
    assert again == holder.received(protocols.OFFER_CREDENTIAL)[0]


def test_a_withdrawn_or_resent_offers_old_invitation_names_nothing(served, holder):
    client = served.test_client()
    staff, credential = offered(served, client)
    _, other = offered(served, client, staff)
    resent = client.post(f"/credentials/{other['id']}/resend", headers=staff.headers())
    assert client.post(f"/credentials/{credential['id']}/revoke", headers=staff.headers())

    take_invitation(served, client, holder, credential["offer_url"])
    take_invitation(served, client, holder, other["offer_url"])

    assert holder.received(protocols.OFFER_CREDENTIAL) == []
    # The revoked offer's invitation is still its own: the wallet is told why. The resent
    # offer's old invitation names no offer any more, and a stranger is sent nothing.
    assert len(holder.received(protocols.PROBLEM_REPORT)) == 1
    assert resent.get_json()["offer_url"] != other["offer_url"]


# -- the offer's rules close the exchanges made on it -------------------------------------------


def resend(client, staff, credential: dict[str, Any]) -> dict[str, Any]:
    answer = client.post(f"/credentials/{credential['id']}/resend", headers=staff.headers())
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def withdraw(client, staff, credential: dict[str, Any]) -> None:
    answer = client.post(f"/credentials/{credential['id']}/revoke", headers=staff.headers())
    assert answer.status_code == 200, answer.get_json()


def expire(app) -> None:
    """Past the offer's end (``CREDENTIAL_OFFER_SECONDS``), by the service's clock."""
    later = clock.now() + timedelta(seconds=app.config["CREDENTIAL_OFFER_SECONDS"] + 60)
    clock.set_source(lambda: later)


@pytest.mark.parametrize(
    ("what", "comment"),
    [
        ("resent", "sent again"),
        ("resent after it expired", "sent again"),
        ("withdrawn", "withdrawn"),
        ("expired", "expired"),
    ],
)
def test_a_request_on_an_exchange_the_offer_closed_is_refused(served, holder, what, comment):
    client = served.test_client()
    staff, credential = offered(served, client)
    offer = take_invitation(served, client, holder, credential["offer_url"])
    if what.startswith("resent"):
        if what.endswith("expired"):
            expire(served)
            assert status_of(client, staff, credential) == "EXPIRED"
        resend(client, staff, credential)
    elif what == "withdrawn":
        withdraw(client, staff, credential)
    else:
        expire(served)

    post(client, holder.pack(request_credential(offer, holder_prism()), offer["from"]))
    queue_of(served).run_pending()

    assert holder.received(protocols.ISSUE_CREDENTIAL) == []
    [report] = holder.received(protocols.PROBLEM_REPORT)
    assert report["pthid"] == offer["thid"]
    assert comment in report["body"]["comment"]
    expected = {"withdrawn": "REVOKED", "expired": "EXPIRED"}.get(what, "OFFERED")
    assert status_of(client, staff, credential) == expected


def test_a_resent_offer_is_issued_on_its_new_invitation_only(served, holder):
    client = served.test_client()
    staff, credential = offered(served, client)
    old = take_invitation(served, client, holder, credential["offer_url"])
    resent = resend(client, staff, credential)
    new = take_invitation(served, client, holder, resent["offer_url"])
    assert new["thid"] != old["thid"]

    post(client, holder.pack(request_credential(old, holder_prism()), old["from"]))
    queue_of(served).run_pending()
    assert holder.received(protocols.ISSUE_CREDENTIAL) == []
    signer = holder_prism()
    post(client, holder.pack(request_credential(new, signer), new["from"]))
    queue_of(served).run_pending()

    assert issued_vc(holder)["sub"] == signer.did
    assert status_of(client, staff, credential) == "ISSUED"


def test_a_second_resend_closes_the_first_resends_exchange_too(served, holder):
    client = served.test_client()
    staff, credential = offered(served, client)
    first = resend(client, staff, credential)
    offer = take_invitation(served, client, holder, first["offer_url"])
    resend(client, staff, credential)

    post(client, holder.pack(request_credential(offer, holder_prism()), offer["from"]))
    queue_of(served).run_pending()

    assert holder.received(protocols.ISSUE_CREDENTIAL) == []
    assert "sent again" in holder.received(protocols.PROBLEM_REPORT)[0]["body"]["comment"]


# -- issuing rules DIDComm cannot honour --------------------------------------------------------


def require_wallet_attestation(client, staff) -> None:
    answer = client.put(
        f"/organizations/{staff.organization_id}/issuer",
        json={"wallet_attestation": "required"},
        headers=staff.headers(),
    )
    assert answer.status_code == 200, answer.get_json()


RULES = [
    pytest.param({"authorization_code_by_mail": True}, "authorization_code_by_mail", id="by-mail"),
    pytest.param({"key_attestations_required": True}, "key_attestations_required", id="key-att"),
    pytest.param({}, "wallet_attestation", id="wallet-attestation"),
]


@pytest.mark.parametrize(("schema_fields", "rule"), RULES)
def test_an_offer_under_a_rule_didcomm_cannot_honour_is_refused_naming_it(
    served, schema_fields, rule
):
    client = served.test_client()
    staff = make_staff(served)
    if rule == "wallet_attestation":
        require_wallet_attestation(client, staff)

    answer = offer(served, client, staff, **schema_fields)

    assert answer.status_code == 400, answer.get_json()
    assert answer.get_json()["code"] == "PROTOCOL_NOT_AVAILABLE"
    assert answer.get_json()["error"].startswith(f"{rule}: ")
    assert client.get("/credentials", headers=staff.headers()).get_json()["total"] == 0


@pytest.mark.parametrize(("schema_fields", "rule"), RULES)
def test_a_rule_set_after_the_offer_was_made_is_kept_when_the_wallet_comes(
    served, holder, schema_fields, rule
):
    client = served.test_client()
    staff, credential = offered(served, client)
    offer = take_invitation(served, client, holder, credential["offer_url"])
    _, later = offered(served, client, staff)
    schema_id = later["schema_id"]
    if rule == "wallet_attestation":
        require_wallet_attestation(client, staff)
    else:
        for changed in (credential["schema_id"], schema_id):
            put = client.put(f"/schemas/{changed}", json=schema_fields, headers=staff.headers())
            assert put.status_code == 200, put.get_json()

    post(client, holder.pack(request_credential(offer, holder_prism()), offer["from"]))
    take_invitation(served, client, holder, later["offer_url"])
    resent = client.post(f"/credentials/{later['id']}/resend", headers=staff.headers())

    assert holder.received(protocols.ISSUE_CREDENTIAL) == []
    assert len(holder.received(protocols.OFFER_CREDENTIAL)) == 1, "the later offer: none"
    reports = holder.received(protocols.PROBLEM_REPORT)
    assert [r["body"]["code"] for r in reports] == ["e.p.req.not-available"] * 2
    assert all(r["body"]["comment"].startswith(f"{rule}: ") for r in reports)
    assert status_of(client, staff, credential) == "OFFERED"
    assert resent.status_code == 400
    assert resent.get_json()["code"] == "PROTOCOL_NOT_AVAILABLE"
