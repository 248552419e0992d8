"""The DIDComm door and the invitation page under hostile input, with the messaging-layer
holder: JSON nested past any depth (in the body, the JWE's protected header, a sender DID's
service, an invitation) refused with 400 and a code, never a 500; invitations shown only for
this deployment's DIDs and live exchanges; sender-controlled text kept out of log lines;
connection requests only for verifications that offer DIDComm."""

from __future__ import annotations

import json

import pytest

from app.didcomm import messaging, peer_did, protocols
from app.didcomm.encoding import b64url, b64url_decode
from app.jobs.queue import queue_of
from didcomm.inbox_holder import Holder
from didcomm.test_didcomm_verifier import connection_request, open_didcomm, post

# Far past app.json_input.MAX_DEPTH (64), and past what Python's parser recurses through.
DEEP = 5000


def nested(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def holder():
    made = Holder.start()
    yield made
    made.server.stop()


@pytest.fixture
def served(make_app):
    return make_app(TRUST_ALLOW_PRIVATE=True)


def assert_refused(answer) -> None:
    assert answer.status_code == 400, answer.get_data(as_text=True)[-2000:]
    body = answer.get_json()
    assert body["code"] == "INVALID_DIDCOMM_MESSAGE"
    assert "nested deeper than 64 levels" in body["error"]


# -- deep JSON at the door -------------------------------------------------------------------


def test_a_body_nested_past_the_depth_bound_is_refused_with_a_code(served):
    client = served.test_client()
    assert_refused(post(client, nested().encode()))
    assert_refused(post(client, b'{"protected": ' + nested(100).encode() + b"}"))
    assert queue_of(served).pending_count() == 0


def test_a_protected_header_nested_past_the_depth_bound_is_refused_with_a_code(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    packed = json.loads(
        holder.pack(connection_request(opened.invitation), opened.invitation["from"])
    )
    header = json.loads(b64url_decode(packed["protected"]))
    for depth in (DEEP, 100):
        deep_header = json.dumps(header)[:-1] + f', "x": {nested(depth)}}}'
        packed["protected"] = b64url(deep_header.encode())
        assert_refused(post(client, json.dumps(packed).encode()))


def with_service(made: peer_did.NewPeerDid, service_json: str) -> peer_did.NewPeerDid:
    """The same keys under a DID whose service element is ``service_json``."""
    keys = made.did.split(".S", 1)[0]
    did = f"{keys}.S{b64url(service_json.encode())}"
    return peer_did.NewPeerDid(
        did, {kid.replace(made.did, did): jwk for kid, jwk in made.secrets.items()}
    )


def test_a_sender_did_whose_service_is_nested_past_the_depth_bound_is_refused(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    for depth in (DEEP, 300):
        service = '{"t":"dm","s":{"uri":"https://x.example","a":["didcomm/v2"]},"x":'
        sender = with_service(holder.peer, service + nested(depth) + "}")
        ping = messaging.message(protocols.PING, {"response_requested": True})
        packed = messaging.pack(ping, to_did=opened.invitation["from"], sender=sender)
        assert_refused(post(client, packed))
