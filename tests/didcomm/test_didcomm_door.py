"""The DIDComm door and the invitation page under hostile input, with the messaging-layer
holder: JSON nested past any depth (in the body, the JWE's protected header, a sender DID's
service, an invitation) refused with 400 and a code, never a 500; invitations shown only for
this deployment's DIDs and live exchanges; sender-controlled text kept out of log lines;
connection requests only for verifications that offer DIDComm."""

from __future__ import annotations

import base64
import html
import json
import logging
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest
from factories import make_staff, make_verification
from joserfc.jwk import ECKey
from trust.trust_support import LocalServer

from app.didcomm import invitation as oob
from app.didcomm import messaging, peer_did, prism, protocols
from app.didcomm.encoding import b64url, b64url_decode
from app.jobs.queue import queue_of
from didcomm.inbox_holder import Holder
from didcomm.test_didcomm_issuer import offered
from didcomm.test_didcomm_verifier import (
    connect,
    connection_request,
    credential,
    identity_schema,
    lookup,
    open_didcomm,
    post,
    present,
    presentation,
)

V1 = "https://www.w3.org/2018/credentials/v1"
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


# -- the invitation page ---------------------------------------------------------------------


def page_path(url: str) -> str:
    return url.removeprefix("https://verity.test")


def invitation_path(invitation: dict) -> str:
    return f"/didcomm/invitation?_oob={oob.encode(invitation)}"


def assert_not_found_page(answer) -> None:
    assert answer.status_code == 404, answer.get_data(as_text=True)[-2000:]
    assert answer.mimetype == "text/html"
    assert "Diese Seite gibt es nicht" in answer.get_data(as_text=True)


GERMAN = {"Accept-Language": "de"}


def test_an_invitation_from_a_stranger_did_is_a_404_page(served):
    client = served.test_client()
    open_didcomm(served, client)  # the deployment has a DID and a live request
    stranger = peer_did.make("https://phish.example/didcomm").did
    forged = oob.make(stranger, goal="Your bank: confirm your identity at phish.example")

    for path in (invitation_path(forged), invitation_path(forged) + "/fetch"):
        assert_not_found_page(client.get(path, headers=GERMAN))


def test_an_invitation_from_our_did_naming_no_live_exchange_is_a_404_page(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    ours = opened.invitation["from"]
    unknown = oob.make(ours, goal="Anything", invitation_id=str(uuid.uuid4()))
    assert_not_found_page(client.get(invitation_path(unknown), headers=GERMAN))

    asked = connect(served, client, holder, opened)
    options = asked["attachments"][0]["data"]["json"]["options"]
    vc = credential(ECKey.generate_key("P-256"), holder.did, given_name="Erika", country="DE")
    vp = presentation(holder, vc, nonce=options["challenge"], aud=options["domain"])
    present(served, client, holder, asked, vp)  # the request is answered: no longer live
    path = page_path(opened.individual["connection_url"])
    assert_not_found_page(client.get(path, headers=GERMAN))


def test_the_page_shows_the_invitation_as_made_here_never_a_senders_goal(served):
    client = served.test_client()
    opened = open_didcomm(served, client)
    ours = opened.individual["connection_url"]
    rewritten = {
        **opened.invitation,
        "body": {**opened.invitation["body"], "goal": "Send your PIN to phish.example"},
    }

    page = client.get(invitation_path(rewritten))
    scanned = client.get(invitation_path(rewritten) + "/fetch")

    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "phish.example" not in text
    assert html.escape(ours) in text and html.escape(opened.invitation["body"]["goal"]) in text
    assert scanned.get_json() == {"long_url": ours}


def test_an_offers_invitation_is_shown_while_the_offer_stands(served):
    client = served.test_client()
    staff, credential_ = offered(served, client)
    path = page_path(credential_["offer_url"])
    assert client.get(path).status_code == 200

    resent = client.post(f"/credentials/{credential_['id']}/resend", headers=staff.headers())
    assert resent.status_code == 200, resent.get_json()
    assert client.get(page_path(resent.get_json()["offer_url"])).status_code == 200
    assert_not_found_page(client.get(path, headers=GERMAN))  # the old token names nothing

    revoked = client.post(f"/credentials/{credential_['id']}/revoke", headers=staff.headers())
    assert revoked.status_code == 200, revoked.get_json()
    assert_not_found_page(client.get(page_path(resent.get_json()["offer_url"]), headers=GERMAN))


def openid4vp_request_id(app, client, opened) -> str:
    """A presentation request of the same organization's verification that offers OpenID4VP
    only: its ID is in its link (request_uri or response_uri), so anyone holding it knows it."""
    verification = make_verification(
        client,
        opened.staff,
        schema_id=opened.verification["schema_id"],
        claims=["given_name"],
        attributes=[],
        wallet_protocols=["openid4vp"],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-oid4vp", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    query = parse_qs(urlsplit(link).query)
    named = (query.get("request_uri") or query["response_uri"])[0]  # by reference or by value
    return urlsplit(named).path.rsplit("/", 1)[-1]


def test_a_request_of_a_verification_without_didcomm_has_no_invitation_page(served):
    client = served.test_client()
    opened = open_didcomm(served, client)
    request_id = openid4vp_request_id(served, client, opened)
    asked = oob.make(opened.invitation["from"], goal="g", invitation_id=request_id)
    assert_not_found_page(client.get(invitation_path(asked), headers=GERMAN))


def test_an_invitation_longer_than_a_qr_code_holds_is_not_a_500(served):
    client = served.test_client()
    opened = open_didcomm(served, client)
    long_goal = {**opened.invitation["body"], "goal": "ü" * 3000}
    stranger = oob.make(peer_did.make("https://x.example").did, goal="ü" * 3000)

    assert client.get(invitation_path({**opened.invitation, "body": long_goal})).status_code == 200
    assert_not_found_page(client.get(invitation_path(stranger), headers=GERMAN))


def test_our_own_invitation_with_long_names_fits_a_qr_code(served):
    client = served.test_client()
    staff = make_staff(served, org_name="Ö" * 200)
    schema_id = identity_schema(client, staff)
    verification = make_verification(
        client,
        staff,
        schema_id=schema_id,
        claims=["given_name"],
        attributes=[],
        wallet_protocols=["didcomm"],
        name="Ü" * 200,
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-long", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]

    assert len(link) <= oob.QR_CAPACITY
    assert oob.parse_oob(link)["body"]["goal"].startswith("Ö" * 100)
    assert oob.parse_oob(link)["body"]["goal"].endswith("\u2026")
    for path in (page_path(link), f"/i/{individual['id']}"):
        page = client.get(path)
        assert page.status_code == 200 and "<svg" in page.get_data(as_text=True)


@pytest.mark.parametrize("suffix", ["", "/fetch"])
def test_an_oob_value_nested_past_the_depth_bound_is_a_404_page(served, suffix):
    client = served.test_client()
    value = base64.b64encode(nested().encode()).decode()
    assert_not_found_page(client.get(f"/didcomm/invitation?_oob={value}{suffix}", headers=GERMAN))


# -- connection requests ---------------------------------------------------------------------


def test_a_connection_request_for_a_verification_without_didcomm_is_refused(served, holder):
    client = served.test_client()
    opened = open_didcomm(served, client)
    request_id = openid4vp_request_id(served, client, opened)
    named = {**opened.invitation, "id": request_id}

    sent = post(client, holder.pack(connection_request(named), opened.invitation["from"]))
    queue_of(served).run_pending()

    assert sent.status_code == 202
    assert holder.received(protocols.REQUEST_PRESENTATION) == []
    assert holder.received(protocols.CONNECTION_RESPONSE) == []
    (report,) = holder.received(protocols.PROBLEM_REPORT)
    assert report["body"]["code"] == "e.p.req.unknown"


# -- the worker's log ------------------------------------------------------------------------

FORGED = "ERROR app.staff: forged line"


def test_a_newline_in_a_sender_dids_service_uri_forges_no_log_line(served, caplog):
    caplog.set_level(logging.DEBUG)
    client = served.test_client()
    opened = open_didcomm(served, client)
    for uri in (f"http://127.0.0.1:9/inbox\n{FORGED}", f"did:peer:x\r\n{FORGED}"):
        sender = peer_did.make(uri)
        ping = messaging.message(protocols.PING, {"response_requested": True})
        packed = messaging.pack(ping, to_did=opened.invitation["from"], sender=sender)
        assert post(client, packed).status_code == 202
    queue_of(served).run_pending()
    queue_of(served).run_pending()

    lines = [record.getMessage() for record in caplog.records]
    assert any("didcomm" in line for line in lines)  # the agent did log about them
    assert [line for line in lines if "\n" in line or "\r" in line] == []


# -- a long-form did:prism issuer and the published state -------------------------------------


@pytest.fixture
def resolver():
    """The DID resolver stand-in on loopback (Universal Resolver paths)."""
    running = LocalServer()
    yield running
    running.stop()


def prism_credential(issuer: prism.NewPrismDid, subject: str) -> str:
    now = int(time.time())
    claims = {
        "iss": issuer.did,
        "sub": subject,
        "nbf": now - 60,
        "vc": {
            "@context": [V1],
            "type": ["VerifiableCredential", "IdentityCredential"],
            "credentialSubject": {"id": subject, "given_name": "Erika", "country": "DE"},
        },
    }
    return prism.sign_es256k(claims, issuer.keys["issue-1"], f"{issuer.did}#issue-1")


def test_a_long_form_did_prism_issuer_deactivated_at_the_resolver_fails(make_app, holder, resolver):
    app = make_app(TRUST_ALLOW_PRIVATE=True, DID_RESOLVER_URL=resolver.url(""))
    client = app.test_client()
    issuer = prism.make({"master-0": prism.MASTER, "issue-1": prism.ISSUING})
    canonical = prism.parse(issuer.did).canonical
    resolver.add(
        f"/1.0/identifiers/{canonical}",
        {"didDocument": prism.resolve(issuer.did), "didDocumentMetadata": {"deactivated": True}},
    )
    opened = open_didcomm(app, client)

    asked = connect(app, client, holder, opened)
    options = asked["attachments"][0]["data"]["json"]["options"]
    vc = prism_credential(issuer, holder.did)
    present(app, client, holder, asked, presentation(holder, vc, **options_vp(options)))

    body = lookup(app, client, opened)
    assert body["status"] == "FAILED"
    assert body["validation_error"] == f"DID {canonical} is deactivated"
    assert resolver.hits[f"/1.0/identifiers/{canonical}"] >= 1


def options_vp(options: dict[str, str]) -> dict[str, str]:
    return {"nonce": options["challenge"], "aud": options["domain"]}
