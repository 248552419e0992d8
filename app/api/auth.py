"""Sign-in for staff: POST /auth -> provider -> /auth/callback -> POST /auth/session."""

from __future__ import annotations

from urllib.parse import urlencode, urljoin, urlsplit

from flask import Blueprint, current_app, redirect, request

from app.api.common import base_url, documented, json_response, parse_body
from app.errors import InvalidRequest
from app.identity import oidc
from app.identity.operations import issue_session_token, revoke_session_token
from app.web.access import current_session_token, require_session
from app.web.payloads.login import AuthIn, AuthOut, SessionIn, SessionOut

bp = Blueprint("auth", __name__)


def _settings() -> oidc.OidcSettings:
    return oidc.OidcSettings.from_config(current_app.config)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _safe_return_to(value: str | None) -> str | None:
    """A path or URL on this service only. The callback hands code and state to return_to, and
    with the PKCE verifier kept server-side that pair is enough to get a session token: sending
    it to another site would let whoever started the login take over the account of whoever
    finished it. Backslashes and control characters are refused because browsers read
    ``/\\host`` or ``/<tab>/host`` as another host."""
    if not value:
        return None
    refused = InvalidRequest("return_to must be a path or a URL on this service")
    if "\\" in value or any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in value):
        raise refused
    parts = urlsplit(value)
    if not (parts.scheme or parts.netloc) and not value.startswith("/"):
        raise refused
    own = base_url()
    if _origin(urljoin(f"{own}/", value)) != _origin(own):
        raise refused
    return value


@bp.post("/auth")
@documented(
    "Start sign-in: returns the identity provider's auth_url for the browser",
    body=AuthIn,
    responses={200: AuthOut},
    tags=("sign-in",),
)
def start():
    """503 NOT_CONFIGURED when no identity provider is configured."""
    settings = _settings()
    body = parse_body(AuthIn)
    url = oidc.start_login(settings, f"{base_url()}/auth/callback", _safe_return_to(body.return_to))
    return json_response({"auth_url": url})


@bp.get("/auth/callback")
@documented(
    "The identity provider's redirect target",
    responses={200: SessionIn, 302: None},
    query={"code": "From the provider", "state": "From POST /auth", "iss": "RFC 9207"},
    tags=("sign-in",),
)
def callback():
    """Hands code and state to the client that started the login (or shows them)."""
    if "error" in request.args:
        raise InvalidRequest(f"Sign-in was not completed: {request.args.get('error')}")
    code, state = request.args.get("code", ""), request.args.get("state", "")
    if not code or not state:
        raise InvalidRequest("The callback needs code and state")
    oidc.check_response_issuer(_settings(), request.args.get("iss"))
    attempt = oidc.pending_attempt(state)
    if attempt.return_to:
        separator = "&" if "?" in attempt.return_to else "?"
        return redirect(
            f"{attempt.return_to}{separator}{urlencode({'code': code, 'state': state})}"
        )
    return json_response({"code": code, "state": state})


@bp.post("/auth/session")
@documented(
    "Exchange the returned code for a session token",
    body=SessionIn,
    responses={201: SessionOut},
    tags=("sign-in",),
)
def create_session():
    """A new token on every login; the first login creates the user."""
    body = parse_body(SessionIn)
    user = oidc.finish_login(_settings(), body.code, body.state)
    value, token = issue_session_token(user, current_app.config["SESSION_TOKEN_HOURS"])
    return json_response(
        {"token": value, "token_type": "Bearer", "expires_at": token.expires_at.isoformat()}, 201
    )


@bp.delete("/auth/session")
@require_session
@documented("Sign out: the session token stops working", responses={204: None}, tags=("sign-in",))
def delete_session():
    """Revokes the token that made the call."""
    revoke_session_token(current_session_token())
    return "", 204
