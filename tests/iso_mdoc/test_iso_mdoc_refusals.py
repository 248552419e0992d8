"""What ``POST /oid4vp/dc-responses/<id>`` refuses of an ``org-iso-mdoc`` answer. A response
that does not open is 400 ``INVALID_RESPONSE`` and consumes nothing (the honest answer still
verifies after it), as an undecryptable ``direct_post.jwt`` is; one that opens but whose mdoc
fails its checks is decided FAILED, as any presentation is."""

from __future__ import annotations

import base64
import uuid
from datetime import timedelta

import cbor2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from iso_mdoc_support import (
    MDL_NS,
    as_credential,
    dc_post,
    iso_mdoc_request,
    start,
    status_of,
    wallet_answer,
)
from mdoc.mdoc_support import make_iaca

from app import clock
from app.extensions import db
from app.verifications.models import PresentationRequest


@pytest.fixture
def started(app, client):
    iaca = make_iaca()
    _, _, individual_id, request_id = start(app, client, iaca)
    return iaca, individual_id, request_id, iso_mdoc_request(client, request_id)


def refused_without_consuming(client, started, body) -> None:
    iaca, individual_id, request_id, request = started
    response = dc_post(client, request_id, body)
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_RESPONSE")
    assert status_of(client, individual_id) == "REQUESTED"
    honest = dc_post(client, request_id, as_credential(wallet_answer(request, iaca)))
    assert honest.get_json()["status"] == "VERIFIED"


def changed(response: str, edit) -> str:
    envelope = cbor2.loads(base64.urlsafe_b64decode(response + "=" * (-len(response) % 4)))
    edit(envelope[1])
    return base64.urlsafe_b64encode(cbor2.dumps(envelope)).rstrip(b"=").decode()


def test_a_transcript_with_another_origin_is_refused(client, started):
    iaca, _, _, request = started
    answer = wallet_answer(request, iaca, origin="https://evil.test")
    refused_without_consuming(client, started, as_credential(answer))


def test_a_response_sealed_to_another_key_is_refused(client, started):
    iaca, _, _, request = started
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    answer = wallet_answer(request, iaca, recipient=other)
    refused_without_consuming(client, started, as_credential(answer))


def test_a_changed_ciphertext_is_refused(client, started):
    iaca, _, _, request = started
    answer = wallet_answer(request, iaca)

    def flip(sealed):
        text = bytearray(sealed["cipherText"])
        text[len(text) // 2] ^= 0x01
        sealed["cipherText"] = bytes(text)

    tampered = {"protocol": "org-iso-mdoc", "data": {"response": changed(answer["response"], flip)}}
    refused_without_consuming(client, started, tampered)


@pytest.mark.parametrize(
    "data",
    [{}, {"response": ""}, {"response": "not base64!"}, {"response": "oA"}, {"response": 7}],
)
def test_malformed_answers_are_refused(client, started, data):
    refused_without_consuming(client, started, {"protocol": "org-iso-mdoc", "data": data})


def test_a_replayed_response_is_refused(client, started):
    iaca, individual_id, request_id, request = started
    body = as_credential(wallet_answer(request, iaca))
    assert dc_post(client, request_id, body).get_json()["status"] == "VERIFIED"
    replay = dc_post(client, request_id, body)
    assert (replay.status_code, replay.get_json()["code"]) == (400, "ALREADY_ANSWERED")
    assert status_of(client, individual_id) == "VERIFIED"


def test_an_element_not_asked_for_fails(client, started):
    iaca, individual_id, request_id, request = started
    answer = wallet_answer(request, iaca, extra=((MDL_NS, "document_number"),))
    body = dc_post(client, request_id, as_credential(answer)).get_json()
    assert body["status"] == "FAILED"
    assert status_of(client, individual_id) == "FAILED"
    verify = client.get(f"/verifications/{individual_id}/verify").get_json()
    assert verify["validation_error"] == "Credential discloses an element that was not asked for"


def test_a_device_response_for_another_doctype_fails(client, started):
    iaca, individual_id, request_id, request = started
    answer = wallet_answer(request, iaca, doctype="org.iso.23220.photoid.1")
    body = dc_post(client, request_id, as_credential(answer)).get_json()
    assert body["status"] == "FAILED"
    assert status_of(client, individual_id) == "FAILED"
    verify = client.get(f"/verifications/{individual_id}/verify").get_json()
    assert verify["validation_error"] == (
        "Credential type presented is not the type this verification asks for"
    )


def test_another_origin_header_is_refused_before_anything_is_opened(client, started):
    iaca, _, request_id, request = started
    body = as_credential(wallet_answer(request, iaca))
    response = dc_post(client, request_id, body, origin="https://evil.test")
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_ORIGIN")
    assert dc_post(client, request_id, body).get_json()["status"] == "VERIFIED"


def past_expiry(app, request_id: str):
    """Move the clock one second past the request's expiry; the stored request, for checks."""
    with app.app_context():
        stored = db.session.get(PresentationRequest, uuid.UUID(request_id))
        later = stored.expires_at + timedelta(seconds=1)
    clock.set_source(lambda: later)


def consumed_at(app, request_id: str):
    with app.app_context():
        return db.session.get(PresentationRequest, uuid.UUID(request_id)).consumed_at


def test_the_request_and_its_recipient_key_are_gone_once_answered(client, started):
    iaca, _, request_id, request = started
    body = as_credential(wallet_answer(request, iaca))
    assert dc_post(client, request_id, body).get_json()["status"] == "VERIFIED"
    again = client.get(f"/oid4vp/dc-requests/{request_id}")
    assert (again.status_code, again.get_json()["code"]) == (400, "ALREADY_ANSWERED")


def test_the_request_and_its_recipient_key_are_gone_once_expired(app, client, started):
    _, _, request_id, _ = started
    past_expiry(app, request_id)
    again = client.get(f"/oid4vp/dc-requests/{request_id}")
    assert (again.status_code, again.get_json()["code"]) == (400, "REQUEST_EXPIRED")


def test_an_answer_after_expiry_is_refused_and_consumes_nothing(app, client, started):
    iaca, _, request_id, request = started
    body = as_credential(wallet_answer(request, iaca))
    past_expiry(app, request_id)
    response = dc_post(client, request_id, body)
    assert (response.status_code, response.get_json()["code"]) == (400, "REQUEST_EXPIRED")
    assert consumed_at(app, request_id) is None
