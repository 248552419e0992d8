"""The loopback test mediator on its own, driven from Python as the SDK drives it (same
messages, same return_route use): so a failure in the SDK tests points at the SDK side."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from app.didcomm import messaging, peer_did
from didcomm.mediator import COORDINATE, PICKUP, Mediator
from didcomm.peer import Peer


@pytest.fixture(scope="module")
def mediator() -> Iterator[Mediator]:
    """A mediator of this module's own, so its refusals stay out of the shared one's errors."""
    with Mediator() as running:
        yield running


def post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": messaging.CONTENT_TYPE}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def ask(mediator: Mediator, host: peer_did.NewPeerDid, type_: str, body: dict, **headers):
    """Send as the SDK does (authcrypted from the host DID); the unpacked answer, or None."""
    msg = messaging.message(type_, body, **headers)
    status, answer = post(mediator.url, messaging.pack(msg, to_did=mediator.did, sender=host))
    assert status in (200, 202), answer
    if not answer:
        return None
    return messaging.unpack(answer, private_keys=messaging.private_keys(host)).message


def test_grant_keylist_forward_delivery_and_acknowledgement(mediator):
    host = peer_did.make(mediator.did)
    recipient = peer_did.make(mediator.did)
    request = messaging.message(COORDINATE + "mediate-request", {}, return_route="all")

    status, answer = post(mediator.url, messaging.pack(request, to_did=mediator.did, sender=host))
    grant = messaging.unpack(answer, private_keys=messaging.private_keys(host))

    assert status == 200
    assert grant.sender == mediator.did
    assert grant.message["type"] == COORDINATE + "mediate-grant"
    assert grant.message["thid"] == request["id"]
    assert grant.message["body"] == {"routing_did": mediator.did}
    # keylist-update without return_route (as the SDK sends it): answered 202, no body.
    update = {"updates": [{"recipient_did": recipient.did, "action": "add"}]}
    assert ask(mediator, host, COORDINATE + "keylist-update", update) is None
    assert mediator.keylist(host.did) == {recipient.did}
    assert ask(mediator, host, PICKUP + "delivery-request", {"limit": 10}, return_route="all")[
        "body"
    ] == {"message_count": 0, "live_delivery": False}

    with Peer() as sender:
        sent = messaging.message("https://didcomm.org/basicmessage/2.0/message", {"content": "hi"})
        assert sender.send(sent, recipient.did) == 202
        assert mediator.queued(recipient.did) == 1
        delivery = ask(
            mediator, host, PICKUP + "delivery-request", {"limit": 10}, return_route="all"
        )
        assert delivery["type"] == PICKUP + "delivery"
        [attachment] = delivery["attachments"]
        inner = messaging.unpack(
            json.dumps(attachment["data"]["json"]),
            private_keys=messaging.private_keys(recipient),
        )
        assert inner.message["body"] == {"content": "hi"}
        assert inner.sender == sender.did

    status_after = ask(
        mediator,
        host,
        PICKUP + "messages-received",
        {"message_id_list": [attachment["id"]]},
        return_route="all",
    )
    assert status_after["body"]["message_count"] == 0
    assert mediator.queued(recipient.did) == 0


def test_a_forward_for_a_did_nobody_registered_is_dropped(mediator):
    stranger = peer_did.make(mediator.did)
    with Peer() as sender:
        sent = messaging.message("https://didcomm.org/basicmessage/2.0/message", {"content": "?"})
        assert sender.send(sent, stranger.did) == 202
    assert stranger.did in mediator.unroutable
    assert mediator.queued(stranger.did) == 0


def test_a_message_not_encrypted_to_the_mediator_is_refused_with_its_reason(mediator):
    other = peer_did.make("http://127.0.0.1:9/didcomm")
    host = peer_did.make(mediator.did)
    msg = messaging.message(COORDINATE + "mediate-request", {}, return_route="all")

    status, answer = post(mediator.url, messaging.pack(msg, to_did=other.did, sender=host))

    assert status == 400
    assert b"not encrypted to any key of ours" in answer
    assert mediator.errors[-1].startswith("refused:")
