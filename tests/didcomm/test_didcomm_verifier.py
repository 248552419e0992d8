"""A verification over DIDComm, with a holder written here on the messaging layer: the
invitation in the connect answer, the connection request answered once, the present-proof
request's fresh challenge, the presentation decided like any jwt_vc_json answer, and every
message that is not ours refused with 400 before anything is kept.

The holder's DID names a loopback endpoint, so Verity's messages reach it directly; the
credential and presentation are signed with joserfc (did:jwk), not with Verity's code. The SDK
itself, through a mediator, is ``test_sdk_verifier.py``'s.
"""

from __future__ import annotations

import base64
import html
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import pytest
from factories import make_apikey, make_staff, make_verification
from joserfc import jwt
from joserfc.jwk import ECKey

from app.didcomm import invitation as oob
from app.didcomm import messaging, peer_did, protocols
from app.jobs.queue import queue_of
from didcomm.inbox_holder import Holder, b64u, did_jwk

V1 = "https://www.w3.org/2018/credentials/v1"
TYPE = "IdentityCredential"
MEDIA_TYPE = "application/didcomm-encrypted+json"


@pytest.fixture
def holder():
    made = Holder.start()
    yield made
    made.server.stop()


@pytest.fixture
def served(make_app):
    """The service as a test client, its loopback holders reachable (development setting)."""
    return make_app(TRUST_ALLOW_PRIVATE=True)


def credential(issuer: ECKey, subject: str, **claims: Any) -> str:
    now = int(time.time())
    payload = {
        "iss": did_jwk(issuer),
        "sub": subject,
        "nbf": now - 60,
        "vc": {
            "@context": [V1],
            "type": ["VerifiableCredential", TYPE],
            "credentialSubject": {"id": subject, **claims},
        },
    }
    return jwt.encode({"alg": "ES256", "typ": "JWT"}, payload, issuer)


def presentation(holder: Holder, vc: str, *, nonce: str, aud: str) -> str:
    payload = {
        "iss": holder.did,
        "aud": aud,
        "nonce": nonce,
        "iat": int(time.time()),
        "vp": {
            "@context": [V1],
            "type": ["VerifiablePresentation"],
            "verifiableCredential": [vc],
        },
    }
    header = {"alg": "ES256", "typ": "JWT", "kid": f"{holder.did}#0"}
    return jwt.encode(header, payload, holder.key)


def identity_schema(client, staff) -> str:
    created = client.post(
        "/schemas",
        json={
            "name": "Identity (W3C)",
            "description": "A W3C verifiable credential about a person",
            "format": "jwt_vc_json",
            "types": [TYPE],
            "attributes": [
                {"name": "given_name", "description": "First names", "type": "TEXT"},
                {"name": "country", "description": "Country", "type": "TEXT"},
            ],
        },
        headers=staff.headers(),
    )
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    assert client.post(f"/schemas/{schema_id}/publish", headers=staff.headers()).status_code == 200
    return schema_id


@dataclass
class Opened:
    staff: Any
    verification: dict[str, Any]
    individual: dict[str, Any]
    invitation: dict[str, Any]


def open_didcomm(app, client, protocols_: list[str] | None = None) -> Opened:
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        schema_id=identity_schema(client, staff),
        claims=["given_name"],
        attributes=[{"name": "country", "operator": "EQUAL", "value": "DE"}],
        wallet_protocols=protocols_ or ["didcomm"],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    connected = client.get(f"/verifications/{individual['id']}/connect").get_json()
    return Opened(staff, verification, connected, oob.parse_oob(connected["connection_url"]))


def post(client, body: bytes, content_type: str = MEDIA_TYPE):
    return client.post("/didcomm", data=body, headers={"Content-Type": content_type})


def run_jobs(app) -> None:
    queue_of(app).run_pending()


def connection_request(invitation: dict[str, Any]) -> dict[str, Any]:
    return messaging.message(
        protocols.CONNECTION_REQUEST,
        invitation["body"],
        thid=invitation["id"],
    )


def connect(app, client, holder: Holder, opened: Opened) -> dict[str, Any]:
    """The holder takes the invitation; Verity's present-proof request."""
    sent = post(
        client, holder.pack(connection_request(opened.invitation), opened.invitation["from"])
    )
    assert sent.status_code == 202, sent.get_data(as_text=True)
    run_jobs(app)
    (asked,) = holder.received(protocols.REQUEST_PRESENTATION)
    return asked


def options_of(asked: dict[str, Any]) -> dict[str, str]:
    return asked["attachments"][0]["data"]["json"]["options"]


def presentation_message(asked: dict[str, Any], vp: str) -> dict[str, Any]:
    return messaging.message(
        protocols.PRESENTATION,
        {},
        thid=asked["id"],
        attachments=[
            {
                "id": "vp-1",
                "media_type": "application/json",
                "format": "prism/jwt",
                "data": {"base64": b64u(vp.encode())},
            }
        ],
    )


def present(app, client, holder: Holder, asked: dict[str, Any], vp: str) -> None:
    message = presentation_message(asked, vp)
    assert post(client, holder.pack(message, asked["from"])).status_code == 202
    run_jobs(app)


def lookup(app, client, opened: Opened) -> dict[str, Any]:
    key = make_apikey(app, opened.staff.organization_id)
    response = client.get(
        f"/verifications/{opened.verification['id']}/individuals/crm-1", headers={"apikey": key}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


# -- the connection link ---------------------------------------------------------------------


def test_didcomm_first_makes_the_connection_url_an_invitation_from_the_organizations_did(
    served,
):
    client = served.test_client()
    opened = open_didcomm(served, client)

    url = opened.individual["connection_url"]
    assert url.startswith("https://verity.test/didcomm/invitation?_oob=")
    assert oob.is_safe(url.split("_oob=", 1)[1])
    assert opened.invitation["type"] == "https://didcomm.org/out-of-band/2.0/invitation"
    service = peer_did.resolve(opened.invitation["from"])["service"][0]
    assert service["serviceEndpoint"]["uri"] == "https://verity.test/didcomm"
    assert opened.verification["wallet_protocols"] == ["didcomm"]
    again = client.get(f"/verifications/{opened.individual['id']}/connect").get_json()
    assert again["connection_url"] == url  # the contract's two-minute reuse


def test_with_both_protocols_the_connect_answer_names_each_link(served):
    client = served.test_client()
    opened = open_didcomm(served, client, ["didcomm", "openid4vp"])

    links = opened.individual["connection_urls"]
    assert list(links) == ["didcomm", "openid4vp"]
    assert links["didcomm"] == opened.individual["connection_url"]
    assert links["openid4vp"].startswith("openid4vp://")


def test_the_invitation_address_answers_a_browser_with_its_qr_code(served):
    client = served.test_client()
    opened = open_didcomm(served, client)
    path = opened.individual["connection_url"].removeprefix("https://verity.test")

    page = client.get(path, headers={"Host": "evil.example"})

    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "<svg" in text and "evil.example" not in text


def test_didcomm_needs_a_jwt_vc_json_schema(served):
    client = served.test_client()
    staff = make_staff(served)
    created = client.post(
        "/verifications",
        json={
            "name": "Age",
            "schema_id": "5c4a3f3e-0b1d-4c7e-9a51-000000000001",
            "wallet_protocols": ["didcomm"],
        },
        headers=staff.headers(),
    )
    assert created.status_code == 400
    assert created.get_json()["code"] == "PROTOCOL_NOT_AVAILABLE"


# -- the exchange ----------------------------------------------------------------------------


def test_a_presentation_over_didcomm_is_verified_and_read_in_the_lookup(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    issuer = ECKey.generate_key("P-256")

    asked = connect(served, client, holder, opened)
    options = options_of(asked)
    vc = credential(issuer, holder.did, given_name="Erika", country="DE")
    present(
        served,
        client,
        holder,
        asked,
        presentation(holder, vc, **{"nonce": options["challenge"], "aud": options["domain"]}),
    )

    body = lookup(served, client, opened)
    assert (body["status"], body["validation_error"]) == ("VERIFIED", None)
    assert body["claims"] == {"given_name": "Erika", "country": "DE"}
    assert len(holder.received(protocols.CONNECTION_RESPONSE)) == 1
    assert options["domain"] == opened.invitation["from"]


def test_repeated_connection_requests_on_one_invitation_are_answered_once(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    others = [Holder(holder.server, peer_did.make(holder.server.url("/inbox"))) for _ in range(3)]

    connect(served, client, holder, opened)
    for other in others:  # the Socious Wallet retries from new DIDs; a flood does the same
        request = connection_request(opened.invitation)
        assert post(client, other.pack(request, opened.invitation["from"])).status_code == 202
    run_jobs(served)

    assert len(holder.received(protocols.REQUEST_PRESENTATION)) == 1


def test_each_request_has_its_own_random_challenge(served, holder):
    client = served.test_client()
    first = connect(served, client, holder, open_didcomm(served, client))
    staff_two = make_staff(served, "bob@example.test", org_name="Other")
    verification = make_verification(
        client,
        staff_two,
        schema_id=identity_schema(client, staff_two),
        claims=["given_name"],
        attributes=[],
        wallet_protocols=["didcomm"],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-2", "verification_id": verification["id"]},
    ).get_json()
    url = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    second_opened = Opened(staff_two, verification, individual, oob.parse_oob(url))
    holder.inbox.clear()
    second = connect(served, client, holder, second_opened)

    challenges = {options_of(first)["challenge"], options_of(second)["challenge"]}
    assert len(challenges) == 2 and all(len(c) >= 32 for c in challenges)


def test_a_presentation_made_for_another_challenge_fails(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    asked = connect(served, client, holder, opened)
    vc = credential(ECKey.generate_key("P-256"), holder.did, given_name="Erika", country="DE")

    vp = presentation(
        holder, vc, nonce="another-requests-challenge", aud=options_of(asked)["domain"]
    )
    present(served, client, holder, asked, vp)

    body = lookup(served, client, opened)
    assert body["status"] == "FAILED"
    assert body["validation_error"] == "Presentation nonce does not match the request"


def test_a_replayed_presentation_is_refused_and_changes_nothing(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    asked = connect(served, client, holder, opened)
    options = options_of(asked)
    vc = credential(ECKey.generate_key("P-256"), holder.did, given_name="Erika", country="DE")
    vp = presentation(holder, vc, nonce=options["challenge"], aud=options["domain"])
    present(served, client, holder, asked, vp)
    verified_at = lookup(served, client, opened)["verified_at"]

    present(served, client, holder, asked, vp)

    body = lookup(served, client, opened)
    assert (body["status"], body["verified_at"]) == ("VERIFIED", verified_at)
    (report,) = holder.received(protocols.PROBLEM_REPORT)
    assert report["pthid"] == asked["id"]


def test_a_presentation_from_another_did_than_the_connection_is_refused(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    asked = connect(served, client, holder, opened)
    options = options_of(asked)
    stranger = Holder(holder.server, peer_did.make(holder.server.url("/inbox")))
    vc = credential(ECKey.generate_key("P-256"), holder.did, given_name="Erika", country="DE")
    vp = presentation(holder, vc, nonce=options["challenge"], aud=options["domain"])

    sent = post(client, stranger.pack(presentation_message(asked, vp), asked["from"]))
    run_jobs(served)

    assert sent.status_code == 202
    assert lookup(served, client, opened)["status"] == "REQUESTED"


# -- refusals at the door --------------------------------------------------------------------


def test_messages_that_are_not_ours_are_refused_with_400_and_nothing_queued(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    # Opening logs the individual's event and queues its relay; the refusals add nothing.
    queued = queue_of(served).pending_count()
    ours = opened.invitation["from"]
    plaintext = json.dumps(connection_request(opened.invitation)).encode()
    anonymous = messaging.pack(connection_request(opened.invitation), to_did=ours, sender=None)
    elsewhere = holder.pack(connection_request(opened.invitation), peer_did.make("https://x").did)

    answers = {
        "plaintext": post(client, plaintext),
        "garbage": post(client, b"{not json"),
        "anonymous": post(client, anonymous),
        "not for us": post(client, elsewhere),
    }
    wrong_type = post(client, holder.pack({"id": "1", "type": "t", "body": {}}, ours), "text/plain")

    assert {name: a.status_code for name, a in answers.items()} == dict.fromkeys(answers, 400)
    assert answers["anonymous"].get_json()["code"] == "UNKNOWN_SENDER"
    assert all(isinstance(a.get_json()["code"], str) for a in answers.values())
    assert wrong_type.status_code == 415
    assert queue_of(served).pending_count() == queued


def test_an_oversized_message_is_refused(served):
    client = served.test_client()
    answer = post(client, b"{" + b" " * (300 * 1024) + b"}")
    assert answer.status_code == 400
    assert answer.get_json()["code"] == "MESSAGE_TOO_LARGE"


def test_a_trust_ping_from_a_connected_holder_is_answered(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    connect(served, client, holder, opened)
    ping = messaging.message(protocols.PING, {"response_requested": True})

    assert post(client, holder.pack(ping, opened.invitation["from"])).status_code == 202
    run_jobs(served)

    (pong,) = holder.received(protocols.PING_RESPONSE)
    assert pong["thid"] == ping["id"]


def test_a_did_with_no_exchange_of_ours_is_sent_nothing(served, holder):
    """A stranger's DID may name any endpoint: its ping, an unknown message and a connection
    request naming no invitation of ours are taken (202) and answered with nothing."""
    client = served.test_client()
    ours = open_didcomm(served, client).invitation["from"]
    messages = [
        messaging.message(protocols.PING, {"response_requested": True}),
        messaging.message("https://example.test/unknown/1.0/thing", {}),
        messaging.message(protocols.CONNECTION_REQUEST, {}, thid="no-invitation-of-ours"),
    ]

    answers = [post(client, holder.pack(message, ours)).status_code for message in messages]
    run_jobs(served)

    assert answers == [202, 202, 202]
    assert holder.inbox == []
    assert queue_of(served).pending_count() == 0


def test_with_both_protocols_the_persons_page_offers_the_invitation_first(served):
    client = served.test_client()
    opened = open_didcomm(served, client, ["didcomm", "openid4vp"])

    page = client.get(f"/i/{opened.individual['id']}").get_data(as_text=True)

    links = opened.individual["connection_urls"]
    assert 0 <= page.index(links["didcomm"]) < page.index(links["openid4vp"].replace("&", "&amp;"))
    assert 'id="dc-api"' not in page.split("other-kind-openid4vp")[0]
    assert "other-kind-openid4vp" in page


def _tampered(vc: str) -> str:
    head, body, signature = vc.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["vc"]["credentialSubject"]["country"] = "FR"
    return f"{head}.{b64u(json.dumps(claims).encode())}.{signature}"


@pytest.mark.parametrize(
    ("make_vc", "reason"),
    [
        (
            lambda issuer, holder: credential(issuer, did_jwk(ECKey.generate_key("P-256"))),
            "Credential subject is not the holder who signed the presentation",
        ),
        (
            lambda issuer, holder: _tampered(credential(issuer, holder.did, country="DE")),
            "Credential signature does not verify",
        ),
        (
            lambda issuer, holder: jwt.encode(
                {"alg": "ES256", "typ": "JWT"},
                {
                    "iss": did_jwk(issuer),
                    "sub": holder.did,
                    "exp": int(time.time()) - 60,
                    "vc": {
                        "@context": [V1],
                        "type": ["VerifiableCredential", TYPE],
                        "credentialSubject": {"id": holder.did, "country": "DE"},
                    },
                },
                issuer,
            ),
            "Credential has expired",
        ),
    ],
    ids=["someone else's", "tampered", "expired"],
)
def test_a_refused_credential_over_didcomm_fails_with_its_reason(served, holder, make_vc, reason):
    client = served.test_client()
    opened = open_didcomm(served, client)
    asked = connect(served, client, holder, opened)
    options = options_of(asked)
    vc = make_vc(ECKey.generate_key("P-256"), holder)

    present(served, client, holder, asked, presentation(holder, vc, **options_of_vp(options)))

    body = lookup(served, client, opened)
    assert (body["status"], body["validation_error"]) == ("FAILED", reason)


def options_of_vp(options: dict[str, str]) -> dict[str, str]:
    return {"nonce": options["challenge"], "aud": options["domain"]}


def test_a_policy_request_completes_over_didcomm_from_its_page(served, holder):
    client = served.test_client()
    staff = make_staff(served)
    verification = make_verification(
        client,
        staff,
        schema_id=identity_schema(client, staff),
        claims=["given_name"],
        attributes=[],
        wallet_protocols=["didcomm"],
    )
    headers = {"apikey": make_apikey(served, staff.organization_id)}
    created = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    page = client.get(f"/p/{created['token']}").get_data(as_text=True)
    url = re.search(r'id="open-wallet"[^>]*href="([^"]+)"', page).group(1)
    opened = Opened(staff, verification, {}, oob.parse_oob(html.unescape(url)))

    asked = connect(served, client, holder, opened)
    vc = credential(ECKey.generate_key("P-256"), holder.did, given_name="Erika")
    present(
        served, client, holder, asked, presentation(holder, vc, **options_of_vp(options_of(asked)))
    )

    status = client.get(f"/policy-requests/{created['id']}/status", headers=headers).get_json()
    assert (status["status"], status["claims"]) == ("VERIFIED", {"given_name": "Erika"})


def test_the_socious_wallets_scanner_reads_the_invitation_as_a_short_link(served):
    """The wallet asks ``<scanned>/fetch`` for ``long_url`` and needs ``_oob`` in it."""
    client = served.test_client()
    opened = open_didcomm(served, client)
    url = opened.individual["connection_url"]

    answer = client.get(url.removeprefix("https://verity.test") + "/fetch")

    assert answer.status_code == 200
    assert answer.get_json() == {"long_url": url}


def test_outside_development_a_wallet_behind_a_private_address_is_never_sent_to(make_app, holder):
    served = make_app()  # no TRUST_ALLOW_PRIVATE: the outbound guard refuses loopback
    client = served.test_client()
    opened = open_didcomm(served, client)
    request = connection_request(opened.invitation)

    assert post(client, holder.pack(request, opened.invitation["from"])).status_code == 202
    run_jobs(served)

    assert holder.inbox == []
    assert queue_of(served).pending_count() == 0  # refused, not retried
