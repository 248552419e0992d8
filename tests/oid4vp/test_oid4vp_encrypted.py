"""Encrypted responses (OpenID4VP 1.0 §8.3, ``direct_post.jwt``) end to end.

The wallet side encrypts with joserfc, a JOSE implementation independent of the decryption the
service does on ``cryptography``, to the key the request object publishes.
"""

from __future__ import annotations

import json
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from factories import make_staff, make_verification
from joserfc.jwk import ECKey
from sqlalchemy import func, select
from wallets import (
    Issuer,
    encrypt_response,
    node_presentation,
    post_encrypted_response,
    post_response,
    published_key,
    read_request,
)

from app.extensions import db
from app.oid4vp.encryption import decrypt_compact
from app.sdjwt.encoding import b64url_decode
from app.verifications.models import PresentationAttempt, PresentationRequest


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture
def encrypted_app(make_app):
    return make_app(RESPONSE_ENCRYPTION=True)


def start(app, client, customer_id: str = "crm-1"):
    """A verification, an individual, and the request its connect link points at."""
    staff = make_staff(app, email=f"{customer_id}@example.test")
    created = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, read_request(client, link)


def answer(request, presentation: str) -> dict:
    return {"vp_token": {"credential": [presentation]}, "state": request.state}


def status_of(client, individual) -> str:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]


def assert_unchanged(app, client, individual, request) -> None:
    """A refused post leaves the request answerable and records nothing."""
    assert status_of(client, individual) == "REQUESTED"
    with app.app_context():
        row = db.session.get(PresentationRequest, uuid.UUID(request.request_id))
        assert row.consumed_at is None
        assert db.session.scalar(select(func.count()).select_from(PresentationAttempt)) == 0
        db.session.remove()


def test_the_request_asks_for_an_encrypted_response_to_its_own_key(encrypted_app):
    client = encrypted_app.test_client()
    _, request = start(encrypted_app, client)
    assert request.claims["response_mode"] == "direct_post.jwt"
    metadata = request.claims["client_metadata"]
    assert metadata["encrypted_response_enc_values_supported"] == ["A128GCM", "A256GCM"]
    key = published_key(request)
    assert {name: key[name] for name in ("kty", "crv", "use", "alg")} == {
        "kty": "EC",
        "crv": "P-256",
        "use": "enc",
        "alg": "ECDH-ES",
    }
    assert "d" not in key
    assert key["kid"] == ECKey.import_key(key).thumbprint()
    # The same request always publishes the same key; another request has its own.
    again = f"openid4vp://?request_uri=https://verity.test/oid4vp/requests/{request.request_id}"
    assert published_key(read_request(client, again)) == key
    _, other = start(encrypted_app, client, "crm-2")
    assert published_key(other)["kid"] != key["kid"]


def test_without_the_setting_responses_stay_plain_direct_post(client, app):
    _, request = start(app, client)
    assert request.claims["response_mode"] == "direct_post"
    assert "jwks" not in request.claims["client_metadata"]
    assert "encrypted_response_enc_values_supported" not in request.claims["client_metadata"]


@pytest.mark.parametrize("enc", ["A128GCM", "A256GCM"])
def test_an_encrypted_presentation_verifies(encrypted_app, issuer, enc):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    compact = encrypt_response(
        request, answer(request, node_presentation(request, issuer)), enc=enc
    )
    response = post_encrypted_response(client, request, compact)
    assert response.status_code == 200, response.get_json()
    assert "response_code=" in response.get_json()["redirect_uri"]
    assert status_of(client, individual) == "VERIFIED"


def test_another_instance_with_the_same_secret_decrypts(make_app, encrypted_app, issuer):
    """Nothing about the key is kept in memory or in the database: any instance can decrypt."""
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    other = make_app(RESPONSE_ENCRYPTION=True).test_client()
    compact = encrypt_response(request, answer(request, node_presentation(request, issuer)))
    assert post_encrypted_response(other, request, compact).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


def test_a_plain_post_to_an_encrypting_request_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    response = post_response(client, request, node_presentation(request, issuer))
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_RESPONSE"
    assert "encrypted" in response.get_json()["error"]
    assert_unchanged(encrypted_app, client, individual, request)


def test_a_response_encrypted_to_another_key_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    stranger = ECKey.generate_key("P-256", private=False).as_dict()
    compact = encrypt_response(
        request, answer(request, node_presentation(request, issuer)), to=stranger
    )
    response = post_encrypted_response(client, request, compact)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_RESPONSE"
    assert_unchanged(encrypted_app, client, individual, request)


def test_a_response_encrypted_to_another_requests_key_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    _, elsewhere = start(encrypted_app, client, "crm-2")
    compact = encrypt_response(elsewhere, answer(request, node_presentation(request, issuer)))
    assert post_encrypted_response(client, request, compact).status_code == 400
    assert_unchanged(encrypted_app, client, individual, request)


def test_a_tampered_response_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    compact = encrypt_response(request, answer(request, node_presentation(request, issuer)))
    header, key, iv, ciphertext, tag = compact.split(".")
    flipped = ciphertext[:10] + ("A" if ciphertext[10] != "A" else "B") + ciphertext[11:]
    for tampered in (
        f"{header}.{key}.{iv}.{flipped}.{tag}",
        f"{header}.{key}.{iv}.{ciphertext}.{tag[::-1]}",
        f"{header}.{key}.{iv[::-1]}.{ciphertext}.{tag}",
        "not-a-jwe",
    ):
        response = post_encrypted_response(client, request, tampered)
        assert response.status_code == 400, tampered
        assert response.get_json()["code"] == "INVALID_RESPONSE"
    assert_unchanged(encrypted_app, client, individual, request)
    # The request was not used up: the genuine response still goes through.
    assert post_encrypted_response(client, request, compact).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


@pytest.mark.parametrize(
    ("header", "enc"),
    [
        ({"alg": "ECDH-ES+A128KW"}, "A128GCM"),
        ({}, "A192GCM"),
        ({}, "A128CBC-HS256"),
        ({"zip": "DEF"}, "A128GCM"),
    ],
)
def test_other_algorithms_and_headers_are_refused(encrypted_app, issuer, header, enc):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    compact = encrypt_response(
        request, answer(request, node_presentation(request, issuer)), enc=enc, **header
    )
    response = post_encrypted_response(client, request, compact)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_RESPONSE"
    assert_unchanged(encrypted_app, client, individual, request)


def test_a_replayed_encrypted_response_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    _, request = start(encrypted_app, client)
    compact = encrypt_response(request, answer(request, node_presentation(request, issuer)))
    assert post_encrypted_response(client, request, compact).status_code == 200
    replay = post_encrypted_response(client, request, compact)
    assert replay.status_code == 400
    assert replay.get_json()["code"] == "ALREADY_ANSWERED"


def test_the_state_inside_the_encrypted_response_is_checked(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    payload = {**answer(request, node_presentation(request, issuer)), "state": "forged"}
    response = post_encrypted_response(client, request, encrypt_response(request, payload))
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_STATE"
    assert_unchanged(encrypted_app, client, individual, request)


def test_an_encrypted_response_without_state_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    payload = answer(request, node_presentation(request, issuer))
    del payload["state"]
    response = post_encrypted_response(client, request, encrypt_response(request, payload))
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_RESPONSE")
    assert_unchanged(encrypted_app, client, individual, request)


def test_a_vp_token_that_is_not_an_object_is_refused(encrypted_app, issuer):
    client = encrypted_app.test_client()
    individual, request = start(encrypted_app, client)
    payload = {"vp_token": node_presentation(request, issuer), "state": request.state}
    response = post_encrypted_response(client, request, encrypt_response(request, payload))
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_RESPONSE"
    assert_unchanged(encrypted_app, client, individual, request)


def test_the_specifications_example_response_decrypts():
    """The encrypted response and private key given as an example in OpenID4VP 1.0 §8.3."""
    compact = (
        "eyJhbGciOiJFQ0RILUVTIiwiZW5jIjoiQTEyOEdDTSIsImtpZCI6ImFjIiwiZXBrIjp7Imt"
        "0eSI6IkVDIiwieCI6Im5ubVZwbTNWM2piaGNhZlFhUkJrU1ZOSGx3Wkh3dC05ck9wSnVmeVlJdWsiLCJ5I"
        "joicjRmakRxd0p5czlxVU9QLV9iM21SNVNaRy0tQ3dPMm1pYzVWU05UWU45ZyIsImNydiI6IlAtMjU2In1"
        "9..uAYcHRUSSn2X0WPX.yVzlGSYG4qbg0bq18JcUiDRw56yVnbKR8E7S7YlEtzT00RqE3Pw5oTpUG3hdLN"
        "4taHZ9gC1kwak8JOnJgQ.1wR024_3-qtAlx1oFIUpQQ"
    )
    d = int.from_bytes(b64url_decode("Et-3ce0omz8_TuZ96Df9lp0GAaaDoUnDe6X-CRO7Aww", "d"), "big")
    key = ec.derive_private_key(d, ec.SECP256R1())
    assert json.loads(decrypt_compact(compact, key)) == {
        "vp_token": {"example_credential_id": ["eyJhb...YMetA"]}
    }
