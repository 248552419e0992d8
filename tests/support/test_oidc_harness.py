"""Prove the OIDC harness end to end: a real code + PKCE flow yields a signed ID token with email.

If this fails, the app's login tests cannot be trusted either, so it runs on its own first.
"""

from __future__ import annotations

import secrets
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from .oidc import OidcProvider, complete_login

REDIRECT_URI = "http://127.0.0.1:9/auth/callback"

pytestmark = pytest.mark.oidc


def _get_json(url: str) -> dict:
    with requests.get(url, timeout=10) as response:
        response.raise_for_status()
        return response.json()


def test_code_flow_with_pkce_returns_signed_id_token_with_email() -> None:
    with OidcProvider([REDIRECT_URI]) as idp:
        metadata = _get_json(idp.discovery_url)
        assert metadata["issuer"] == idp.issuer
        verifier = secrets.token_urlsafe(48)
        nonce = secrets.token_urlsafe(16)
        with OAuth2Session(
            idp.client_id,
            idp.client_secret,
            scope="openid email profile",
            redirect_uri=REDIRECT_URI,
            code_challenge_method="S256",
        ) as client:
            auth_url, state = client.create_authorization_url(
                metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce
            )
            callback = complete_login(auth_url, "alice.smith")

            assert callback.startswith(REDIRECT_URI + "?")
            params = parse_qs(urlsplit(callback).query)
            assert params["state"] == [state]
            assert params["iss"] == [idp.issuer]
            token = client.fetch_token(
                metadata["token_endpoint"],
                authorization_response=callback,
                code_verifier=verifier,
            )
            userinfo = client.get(metadata["userinfo_endpoint"], timeout=10)
            assert userinfo.json()["email"] == "alice.smith@example.test"
            userinfo.close()

        keys = KeySet.import_key_set(_get_json(metadata["jwks_uri"]))
        id_token = jwt.decode(token["id_token"], keys)
        jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": idp.issuer},
            aud={"essential": True, "value": idp.client_id},
            nonce={"essential": True, "value": nonce},
        ).validate(id_token.claims)
        assert id_token.claims["email"] == "alice.smith@example.test"
        assert id_token.claims["email_verified"] is True
        assert id_token.claims["name"] == "Alice Smith"
        assert id_token.claims["sub"] == "alice.smith"


def test_pkce_is_required_by_default() -> None:
    """The app must send PKCE; a plain code request is refused before any login page."""
    with OidcProvider([REDIRECT_URI]) as idp:
        metadata = _get_json(idp.discovery_url)
        with OAuth2Session(idp.client_id, scope="openid", redirect_uri=REDIRECT_URI) as client:
            auth_url, _ = client.create_authorization_url(metadata["authorization_endpoint"])
        callback = complete_login(auth_url, "bob@example.org")
        assert parse_qs(urlsplit(callback).query)["error"] == ["invalid_request"]
