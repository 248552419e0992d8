"""Dashboard sign-in: OpenID Connect authorization code flow with PKCE, against any compliant
identity provider. Login state lives in the database so any instance can finish
a login another one started."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import requests
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from sqlalchemy import select, update

from app import clock
from app.errors import InvalidRequest, NotConfigured, UpstreamFailed
from app.extensions import db
from app.identity.models import LoginAttempt, User
from app.identity.operations import user_for_login

LOGIN_WINDOW = timedelta(minutes=10)
HTTP_TIMEOUT = 10
DISCOVERY_TTL = 300
# Seconds of clock skew tolerated between this host and the provider on the ID token's times.
CLOCK_SKEW = 60
# Asymmetric signatures only: never "none", never HMAC with the client secret. joserfc accepts
# only its "recommended" few unless told, which would refuse a provider signing with PS256.
ID_TOKEN_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "Ed25519",
    "EdDSA",
)
_discovery_cache: dict[str, tuple[float, dict[str, Any]]] = {}


@dataclass(frozen=True)
class OidcSettings:
    issuer: str
    client_id: str
    client_secret: str

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> OidcSettings:
        settings = cls(
            config["OIDC_ISSUER"].rstrip("/"),
            config["OIDC_CLIENT_ID"],
            config["OIDC_CLIENT_SECRET"],
        )
        if not (settings.issuer and settings.client_id):
            raise NotConfigured(
                "Sign-in is not configured: set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET"
            )
        return settings


def _get_json(url: str) -> dict[str, Any]:
    try:
        response = requests.get(url, timeout=HTTP_TIMEOUT)
        response.raise_for_status()
        return response.json()
    except (requests.RequestException, ValueError) as exc:
        raise UpstreamFailed(
            f"The identity provider did not answer: {exc.__class__.__name__}"
        ) from exc


def discover(issuer: str) -> dict[str, Any]:
    """The provider's metadata, cached briefly (a cache only; losing it costs one request)."""
    cached = _discovery_cache.get(issuer)
    if cached and cached[0] > time.monotonic():
        return cached[1]
    metadata = _get_json(f"{issuer}/.well-known/openid-configuration")
    if metadata.get("issuer", "").rstrip("/") != issuer:
        raise UpstreamFailed("The identity provider's metadata names another issuer")
    _discovery_cache[issuer] = (time.monotonic() + DISCOVERY_TTL, metadata)
    return metadata


def _client(settings: OidcSettings, redirect_uri: str) -> OAuth2Session:
    return OAuth2Session(
        settings.client_id,
        settings.client_secret,
        scope="openid email profile",
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        timeout=HTTP_TIMEOUT,
    )


def start_login(settings: OidcSettings, redirect_uri: str, return_to: str | None) -> str:
    """Record a login attempt and return the provider's authorization URL for the browser."""
    metadata = discover(settings.issuer)
    attempt = LoginAttempt(
        state=secrets.token_urlsafe(24),
        nonce=secrets.token_urlsafe(24),
        code_verifier=secrets.token_urlsafe(64)[:96],
        redirect_uri=redirect_uri,
        return_to=return_to,
        expires_at=clock.now() + LOGIN_WINDOW,
    )
    db.session.add(attempt)
    db.session.flush()
    with _client(settings, redirect_uri) as client:
        url, _ = client.create_authorization_url(
            metadata["authorization_endpoint"],
            state=attempt.state,
            nonce=attempt.nonce,
            code_verifier=attempt.code_verifier,
        )
    return url


def check_response_issuer(settings: OidcSettings, issuer: str | None) -> None:
    """RFC 9207 mix-up defence: the ``iss`` on the redirect must name our provider, and a
    provider that says it always sends ``iss`` must have sent it."""
    if issuer is None:
        if discover(settings.issuer).get("authorization_response_iss_parameter_supported"):
            raise InvalidRequest("The callback is missing the issuer (iss) parameter")
        return
    if issuer.rstrip("/") != settings.issuer:
        raise InvalidRequest("The callback came from another issuer")


def pending_attempt(state: str) -> LoginAttempt:
    attempt = db.session.scalar(select(LoginAttempt).where(LoginAttempt.state == state))
    if attempt is None or attempt.used_at is not None or attempt.expires_at <= clock.now():
        raise InvalidRequest("Unknown, used or expired login state; start again at POST /auth")
    return attempt


def claim_attempt(attempt: LoginAttempt) -> None:
    """Mark the attempt used, atomically: of two concurrent exchanges only one goes on."""
    claimed = db.session.execute(
        update(LoginAttempt)
        .where(LoginAttempt.id == attempt.id, LoginAttempt.used_at.is_(None))
        .values(used_at=clock.now())
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:
        raise InvalidRequest("Unknown, used or expired login state; start again at POST /auth")


def finish_login(settings: OidcSettings, code: str, state: str) -> User:
    """Exchange the provider's code (once) and return the user, created at first login."""
    attempt = pending_attempt(state)
    claim_attempt(attempt)
    metadata = discover(settings.issuer)
    with _client(settings, attempt.redirect_uri) as client:
        try:
            token = client.fetch_token(
                metadata["token_endpoint"], code=code, code_verifier=attempt.code_verifier
            )
        except AuthlibBaseError as exc:  # an OAuth error answer: invalid_grant and the like
            raise InvalidRequest(f"The identity provider refused the code: {exc.error}") from exc
        except (requests.RequestException, ValueError) as exc:  # unreachable, 5xx, not JSON
            raise UpstreamFailed(
                f"The identity provider's token endpoint failed: {exc.__class__.__name__}"
            ) from exc
    claims = _verified_id_token(settings, metadata, token.get("id_token"), attempt.nonce)
    if not claims.get("email"):
        raise InvalidRequest("The identity provider did not share an email address")
    return user_for_login(
        f"{settings.issuer}|{claims['sub']}",
        claims["email"],
        claims.get("name", ""),
        # OpenID Connect Core §5.1: only a literal true says the provider checked the address.
        email_verified=claims.get("email_verified") is True,
    )


def _verified_id_token(
    settings: OidcSettings, metadata: dict[str, Any], id_token: str | None, nonce: str
) -> dict[str, Any]:
    """OpenID Connect Core §3.1.3.7: signature, iss, aud, exp and the nonce we sent."""
    if not id_token:
        raise UpstreamFailed("The identity provider returned no ID token")
    keys = _provider_keys(metadata)
    try:
        decoded = jwt.decode(id_token, keys, algorithms=ID_TOKEN_ALGORITHMS)
        jwt.JWTClaimsRegistry(
            leeway=CLOCK_SKEW,
            iss={"essential": True, "value": metadata["issuer"]},
            aud={"essential": True, "value": settings.client_id},
            nonce={"essential": True, "value": nonce},
            sub={"essential": True},
            exp={"essential": True},
        ).validate(decoded.claims)
    except (JoseError, ValueError) as exc:
        raise InvalidRequest(f"The ID token did not verify: {exc}") from exc
    return decoded.claims


def _provider_keys(metadata: dict[str, Any]) -> KeySet:
    """The provider's signing keys, fetched per login so a key rotation is seen at once."""
    if not metadata.get("jwks_uri"):
        raise UpstreamFailed("The identity provider's metadata has no jwks_uri")
    try:
        return KeySet.import_key_set(_get_json(metadata["jwks_uri"]))
    except (JoseError, KeyError, TypeError, ValueError) as exc:
        raise UpstreamFailed("The identity provider's key set could not be read") from exc
