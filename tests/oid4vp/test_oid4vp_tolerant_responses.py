"""Responses that take what the standards allow and we do not produce ourselves are accepted.

Each row is a wallet's choice that OpenID4VP 1.0 §8 and RFC 7516 / 7518 leave open: JWE headers
with or without ``apu``/``apv``, with our ``kid``, none or another one, extra header members,
ephemeral keys carrying extra JWK members, ``vp_token`` shapes, and response parameters we do
not know. The wallet side encrypts with joserfc (its own ECDH-ES and Concat KDF), not our code.
Each accepted row must reach VERIFIED; the rows that must still be refused say why.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import uuid
from urllib.parse import urlsplit

import pytest
from factories import make_apikey, make_staff, make_verification
from joserfc import jwe
from joserfc.jwk import ECKey
from joserfc.registry import HeaderParameter
from sqlalchemy import func, select
from wallets import (
    Issuer,
    WalletRequest,
    node_presentation,
    post_encrypted_response,
    published_key,
    read_request,
)

from app.extensions import db
from app.verifications.models import PresentationAttempt, PresentationRequest


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


def start(app, client, *, policy: bool = False):
    """A request for an individual, or for a policy request (whose link is on its page)."""
    staff = make_staff(app)
    verification = make_verification(client, staff)
    if policy:
        created = client.post(
            "/policy-requests",
            json={"verification_id": verification["id"]},
            headers={"apikey": make_apikey(app, staff.organization_id)},
        ).get_json()
        page = client.get(urlsplit(created["url"]).path).get_data(as_text=True)
        match = re.search(r'id="open-wallet"[^>]*href="([^"]+)"', page)
        assert match, "the policy request's page has no wallet link"
        return created, read_request(client, html.unescape(match.group(1)))
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, read_request(client, link)


def status_of(client, individual) -> str:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]


def encrypt(
    request: WalletRequest,
    payload: dict,
    *,
    header: dict | None = None,
    epk: dict | None = None,
    enc: str = "A128GCM",
) -> str:
    """A JWE made by joserfc to the request's key. ``header`` adds (or, with None, removes)
    protected header members; ``epk`` adds members to the ephemeral public key."""
    protected = {"alg": "ECDH-ES", "enc": enc, "kid": published_key(request)["kid"]}
    protected.update(header or {})
    protected = {name: value for name, value in protected.items() if value is not None}
    registry = jwe.JWERegistry(
        algorithms=["ECDH-ES", enc],
        strict_check_header=False,
        header_registry={"exp": HeaderParameter("Expiry", "int")},
    )
    message = jwe.CompactEncryption(protected, json.dumps(payload).encode())
    recipient = jwe.Recipient(message)
    recipient.recipient_key = ECKey.import_key(published_key(request))
    recipient.ephemeral_key = ECKey.generate_key("P-256", parameters=epk or {}, private=True)
    message.recipient = recipient
    jwe.perform_encrypt(message, registry)
    return jwe.represent_compact(message).decode()


def header_of(compact: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(compact.split(".")[0] + "=="))


def answer(request: WalletRequest, issuer: Issuer, **extra) -> dict:
    return {
        "vp_token": {"credential": [node_presentation(request, issuer)]},
        "state": request.state,
        **extra,
    }


@pytest.fixture
def encrypted(make_app):
    return make_app(RESPONSE_ENCRYPTION=True)


# -- JWE headers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        pytest.param({}, id="our-kid"),
        pytest.param({"kid": None}, id="no-kid"),
        pytest.param({"kid": "a-kid-the-wallet-made-up"}, id="another-kid"),
        pytest.param({"apu": b64url(b"wallet"), "apv": b64url(os.urandom(16))}, id="apu-apv"),
        pytest.param({"apu": b64url(b"wallet")}, id="apu-only"),
        pytest.param({"apv": b64url(b"verifier-nonce")}, id="apv-only"),
        pytest.param({"apu": "", "apv": ""}, id="empty-apu-apv"),
        pytest.param({"kid": None, "apu": b64url(b"w"), "apv": b64url(b"v")}, id="no-kid-apu-apv"),
        pytest.param({"typ": "JWT"}, id="typ-jwt"),
        pytest.param({"typ": "oauth-authz-resp+jwt", "cty": "json"}, id="typ-cty"),
        pytest.param({"x-wallet-version": "2.1", "iss": "wallet"}, id="unknown-members"),
    ],
)
@pytest.mark.parametrize("enc", ["A128GCM", "A256GCM"])
def test_jwe_header_variations_are_accepted(encrypted, issuer, header, enc):
    client = encrypted.test_client()
    individual, request = start(encrypted, client)
    compact = encrypt(request, answer(request, issuer), header=header, enc=enc)
    for name, value in header.items():
        assert header_of(compact).get(name) == value
    response = post_encrypted_response(client, request, compact)
    assert response.status_code == 200, response.get_json()
    assert status_of(client, individual) == "VERIFIED"


@pytest.mark.parametrize(
    "epk",
    [
        pytest.param({"kid": "ephemeral-1"}, id="kid"),
        pytest.param({"use": "enc", "alg": "ECDH-ES"}, id="use-alg"),
        pytest.param({"key_ops": ["deriveKey", "deriveBits"]}, id="key-ops"),
        pytest.param({"kid": "e", "use": "enc", "alg": "ECDH-ES", "ext": True}, id="all"),
    ],
)
def test_ephemeral_keys_with_extra_members_are_accepted(encrypted, issuer, epk):
    client = encrypted.test_client()
    individual, request = start(encrypted, client)
    compact = encrypt(request, answer(request, issuer), epk=epk)
    sent = header_of(compact)["epk"]
    assert sent["kty"] == "EC" and sent["crv"] == "P-256" and "d" not in sent
    assert {name: sent[name] for name in epk} == epk
    assert post_encrypted_response(client, request, compact).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        # What a recipient must understand to read the message, and does not.
        ({"crit": ["exp"], "exp": 1}, "crit"),
        # A wrong apu changes the derived key: the tag, not the kid, is what decides.
        ({"apu": "not base64url!"}, "Key agreement"),
    ],
)
def test_what_must_be_understood_or_does_not_decrypt_is_still_refused(
    encrypted, issuer, header, reason
):
    client = encrypted.test_client()
    individual, request = start(encrypted, client)
    compact = encrypt(request, answer(request, issuer), header={"apu": b64url(b"w")})
    _, *rest = compact.split(".")
    forged_header = {**header_of(compact), **header}
    forged = ".".join([b64url(json.dumps(forged_header).encode()), *rest])
    response = post_encrypted_response(client, request, forged)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_RESPONSE"
    assert reason.lower() in response.get_json()["error"].lower()
    assert status_of(client, individual) == "REQUESTED"


def test_a_wallet_naming_another_kid_with_another_key_is_refused(encrypted, issuer):
    """The kid is a hint: a response to a key that is not the request's fails to decrypt."""
    client = encrypted.test_client()
    individual, request = start(encrypted, client)
    stranger = ECKey.generate_key("P-256", private=False).as_dict()
    elsewhere = WalletRequest(
        **{
            **request.__dict__,
            "claims": {"client_metadata": {"jwks": {"keys": [{**stranger, "kid": "x"}]}}},
        }
    )
    compact = encrypt(elsewhere, answer(request, issuer))
    response = post_encrypted_response(client, request, compact)
    assert response.status_code == 400
    assert "could not be decrypted" in response.get_json()["error"]
    assert status_of(client, individual) == "REQUESTED"
    with encrypted.app_context():
        row = db.session.get(PresentationRequest, uuid.UUID(request.request_id))
        assert row.consumed_at is None
        assert db.session.scalar(select(func.count()).select_from(PresentationAttempt)) == 0
        db.session.remove()


# -- response parameters and vp_token shapes ---------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({"iss": "https://wallet.example", "aud": "x", "exp": 4102444800}, id="jwt"),
        pytest.param({"presentation_submission": {"id": "p", "descriptor_map": []}}, id="pe"),
        pytest.param({"id_token": "eyJ.x.y", "wallet_extension": {"a": [1, 2]}}, id="unknown"),
    ],
)
def test_unknown_members_of_an_encrypted_response_are_ignored(encrypted, issuer, extra):
    client = encrypted.test_client()
    individual, request = start(encrypted, client)
    compact = encrypt(request, answer(request, issuer, **extra))
    response = client.post(
        "/oid4vp/responses/" + request.request_id, data={"response": compact, "state": "ignored"}
    )
    assert response.status_code == 200, response.get_json()
    assert status_of(client, individual) == "VERIFIED"


def _vp_token(presentation: str, shape: str) -> dict:
    return {
        "array": {"credential": [presentation]},
        # Drafts before 1.0 sent the presentation itself rather than an array of one.
        "string": {"credential": presentation},
        # An entry for a query the request did not make (no optional query exists to omit).
        "extra-query": {"credential": [presentation], "another_query": []},
    }[shape]


@pytest.mark.parametrize("shape", ["array", "string", "extra-query"])
@pytest.mark.parametrize(
    "extra_form",
    [
        pytest.param({}, id="no-extra"),
        pytest.param({"presentation_submission": "{}", "iss": "wallet"}, id="extra-params"),
    ],
)
def test_plain_responses_in_every_allowed_shape_verify(app, client, issuer, shape, extra_form):
    individual, request = start(app, client)
    presentation = node_presentation(request, issuer)
    response = client.post(
        "/oid4vp/responses/" + request.request_id,
        data={
            "vp_token": json.dumps(_vp_token(presentation, shape)),
            "state": request.state,
            **extra_form,
        },
    )
    assert response.status_code == 200, response.get_json()
    assert status_of(client, individual) == "VERIFIED"


@pytest.mark.parametrize("shape", ["array", "extra-query"])
def test_encrypted_vp_token_shapes_verify_for_a_policy_request(make_app, issuer, shape):
    app = make_app(RESPONSE_ENCRYPTION=True)
    client = app.test_client()
    _, request = start(app, client, policy=True)
    presentation = node_presentation(request, issuer)
    payload = {"vp_token": _vp_token(presentation, shape), "state": request.state, "x": 1}
    response = post_encrypted_response(
        client, request, encrypt(request, payload, header={"kid": None})
    )
    assert response.status_code == 200, response.get_json()
    assert "redirect_uri" in response.get_json()


def test_every_credential_query_is_required_so_none_can_be_left_out(app, client):
    """Our requests ask for one credential and no ``credential_sets`` (§6.2), so a wallet has
    no optional credential to omit; leaving out the one asked for is refused, plainly."""
    individual, request = start(app, client)
    query = request.claims["dcql_query"]
    assert "credential_sets" not in query
    assert [credential["id"] for credential in query["credentials"]] == ["credential"]
    response = client.post(
        "/oid4vp/responses/" + request.request_id,
        data={"vp_token": json.dumps({"another_query": []}), "state": request.state},
    )
    assert response.status_code == 400
    assert "'credential'" in response.get_json()["error"]
    assert status_of(client, individual) == "REQUESTED"
