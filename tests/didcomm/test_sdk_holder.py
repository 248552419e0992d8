"""The Socious Wallet's agent (Identus SDK 7.0.0, unmodified) against the loopback mediator and
a Python peer using ``app.didcomm.messaging``: mediation, forwarding and pickup, the SDK's
direct replies, the OOB connection request, and a presentation answered through the
mediator. This is the transport the verifier uses to reach holders. One SDK process serves
the whole module."""

from __future__ import annotations

import base64
import time

from app.didcomm import messaging, peer_did, prism
from didcomm.mediator import COORDINATE, FORWARD, PICKUP

PING = "https://didcomm.org/trust-ping/2.0/ping"
PING_RESPONSE = "https://didcomm.org/trust-ping/2.0/ping-response"
CONNECTION_REQUEST = "https://atalaprism.io/mercury/connections/1.0/request"
REQUEST_PRESENTATION = "https://didcomm.atalaprism.io/present-proof/3.0/request-presentation"
PRESENTATION = "https://didcomm.atalaprism.io/present-proof/3.0/presentation"


def service_uri(did: str) -> str:
    return peer_did.resolve(did)["service"][0]["serviceEndpoint"]["uri"]


def kyc_credential(issuer: prism.NewPrismDid, subject: str) -> str:
    """A JWT VC shaped like the Socious KYC credential (DIDCOMM.md §1.5, §3), to ``subject``."""
    now = int(time.time())
    payload = {
        "iss": issuer.did,
        "sub": subject,
        "nbf": now,
        "vc": {
            "@context": ["https://www.w3.org/2018/credentials/v1"],
            "type": ["VerifiableCredential"],
            "credentialSubject": {
                "id": subject,
                "type": "verification",
                "first_name": "Ada",
                "last_name": "Lovelace",
                "country": "GB",
            },
        },
    }
    return prism.sign_es256k(payload, issuer.keys["issuing-0"], f"{issuer.did}#issuing-0")


def request_presentation(challenge: str, domain: str) -> dict:
    """A request as the Identus cloud agent sends it (DIDCOMM.md §1.5)."""
    return messaging.message(
        REQUEST_PRESENTATION,
        {"goal_code": "Request Proof Presentation", "will_confirm": False, "proof_types": []},
        attachments=[
            {
                "id": "request-0",
                "media_type": "application/json",
                "format": "prism/jwt",
                "data": {
                    "json": {
                        "options": {"challenge": challenge, "domain": domain},
                        "presentation_definition": {"id": "pd-0", "input_descriptors": []},
                    }
                },
            }
        ],
    )


def test_agent_start_is_granted_mediation_and_then_polls(holder, mediator):
    host = holder.ready["host"]
    request = mediator.wait_for(COORDINATE + "mediate-request", where=lambda p: p.sender == host)
    assert request.answer == COORDINATE + "mediate-grant"
    assert holder.ready["routing"] == mediator.did  # the string routing_did, as the SDK read it
    poll = mediator.wait_for(PICKUP + "delivery-request", where=lambda p: p.sender == host)
    assert poll.body == {"limit": 10}


def test_a_new_peer_did_names_the_mediator_and_is_on_its_keylist(holder, mediator):
    did = holder.peer_did()
    assert service_uri(did) == mediator.did
    assert did in mediator.keylist(holder.ready["host"])
    assert mediator.wait_for(
        COORDINATE + "keylist-update",
        where=lambda p: p.body == {"updates": [{"recipient_did": did, "action": "add"}]},
    )


def test_a_ping_forwarded_through_the_mediator_reaches_the_sdk_and_it_answers_directly(
    holder, mediator, peer
):
    holder_did = holder.peer_did()
    ping = messaging.message(PING, {"response_requested": True})

    assert peer.send(ping, holder_did) == 202

    received = holder.wait_for("message", id=ping["id"])
    assert (received["piuri"], received["from"], received["to"]) == (PING, peer.did, holder_did)
    pong = peer.wait_for(PING_RESPONSE, where=lambda m: m.get("thid") == ping["id"])
    assert pong.sender == holder_did  # authcrypted by the holder's own key
    forward = mediator.wait_for(FORWARD, where=lambda p: p.next == holder_did)
    assert forward.sender is None  # messaging.for_holder anoncrypts the forward
    assert mediator.queued(holder_did) == 0  # the SDK acknowledged (messages-received)
    assert mediator.unroutable == [] and mediator.errors == []
    assert holder.errors() == []


def test_accepting_an_oob_invitation_posts_a_connection_request_to_the_inviter(
    holder, mediator, peer
):
    invitation_id, url = peer.invitation_url(goal="Verify with Verity")

    assert holder.accept(url) == {"id": invitation_id, "from": peer.did}

    request = peer.wait_for(CONNECTION_REQUEST)
    message = request.message
    assert message["thid"] == invitation_id
    assert request.sender == message["from"]
    assert message["body"]["goal_code"] == "org.hyperledger.identus.connect"
    holder_did = message["from"]
    assert service_uri(holder_did) == mediator.did
    assert holder_did in mediator.keylist(holder.ready["host"])
    connected = holder.wait_for("connected", receiver=peer.did)
    assert connected["host"] == holder_did


def test_a_request_presentation_through_the_mediator_is_answered_with_the_kyc_credential(
    holder, peer
):
    holder_prism = holder.prism_did()
    issuer = prism.make()
    credential = kyc_credential(issuer, holder_prism)
    stored = holder.store_credential(credential)
    assert (stored["issuer"], stored["subject"]) == (issuer.did, holder_prism)
    assert stored["claims"][0]["type"] == "verification"
    _, url = peer.invitation_url()
    holder.accept(url)
    holder_did = peer.wait_for(CONNECTION_REQUEST).message["from"]
    request = request_presentation(challenge='{"type":"kyc","nonce":"n-1"}', domain="verity.test")

    peer.send(request, holder_did)

    asked = holder.wait_for("request", id=request["id"])
    # The wallet reads the challenge where SDK 6 put it; with SDK 7 that fails and it falls
    # back to the KYC ('verification') credential (DIDCOMM.md §1.5).
    assert (asked["wallet_parsed_challenge"], asked["challenge_type"]) == (False, "verification")
    assert asked["credential"]["subject"] == holder_prism
    presentation = peer.wait_for(PRESENTATION, where=lambda m: m.get("thid") == request["id"])
    assert presentation.sender == holder_did
    [attachment] = presentation.message["attachments"]
    assert attachment["format"] == "prism/jwt"
    vp = base64.urlsafe_b64decode(attachment["data"]["base64"] + "==").decode()
    header, payload = prism.verify_es256k(vp, prism.resolve(holder_prism), "authentication")
    assert header["kid"] == f"{holder_prism}#authentication-0"
    assert payload["iss"] == holder_prism
    assert payload["aud"] == "verity.test"
    assert payload["nonce"] == '{"type":"kyc","nonce":"n-1"}'
    assert payload["vp"]["verifiableCredential"] == [credential]
    assert holder.wait_for("presented", thid=request["id"])["to"] == peer.did
