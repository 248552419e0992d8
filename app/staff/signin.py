"""Signing in to the dashboard: the foundation's OIDC login, ending in a session cookie.

``POST /dashboard/login`` starts the provider login with ``return_to`` pointing back here; the
provider's redirect reaches ``/auth/callback``, which forwards code and state to
``/dashboard/login/callback``. That state must be the one this browser started (kept in a
short-lived cookie), so nobody can finish a login of theirs in someone else's browser.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

from flask import current_app, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from app.errors import (
    ApiError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotConfigured,
    Unauthorized,
)
from app.identity import oidc
from app.identity.operations import authenticate_session, issue_session_token, revoke_session_token
from app.staff import csrf
from app.staff.blueprint import allow_form_redirects_to, bp
from app.staff.session import (
    SESSION_COOKIE,
    clear_cookie,
    require_staff,
    set_cookie,
    start_session,
)
from app.web.requests import base_url

LOGIN_STATE_COOKIE = "verity_login"
NEXT_COOKIE = "verity_next"
CALLBACK_PATH = "/dashboard/login/callback"


def provider_settings() -> oidc.OidcSettings | None:
    try:
        return oidc.OidcSettings.from_config(current_app.config)
    except NotConfigured:
        return None


def safe_next(value: str | None) -> str:
    """Only a dashboard path: never another site, never a protocol-relative ``//host``."""
    if value and value.startswith("/dashboard") and "\\" not in value and "//" not in value:
        return value
    return url_for("staff.overview")


@bp.get("/login")
def login() -> ResponseReturnValue:
    """The sign-in page; it explains the alternatives when no provider is configured."""
    settings = provider_settings()
    if settings is not None:
        allow_form_redirects_to(settings.issuer)
        with contextlib.suppress(ApiError):  # an unreachable provider fails at the button
            allow_form_redirects_to(oidc.discover(settings.issuer)["authorization_endpoint"])
    return render_template(
        "staff/login.html",
        configured=settings is not None,
        next=safe_next(request.args.get("next")),
    )


@bp.post("/login")
def start_login() -> ResponseReturnValue:
    """Hand the browser to the identity provider."""
    settings = provider_settings()
    if settings is None:
        return redirect(url_for("staff.login"))
    auth_url = oidc.start_login(settings, f"{base_url()}/auth/callback", CALLBACK_PATH)
    state = parse_qs(urlsplit(auth_url).query)["state"][0]
    response = redirect(auth_url)
    set_cookie(response, LOGIN_STATE_COOKIE, state, None)
    set_cookie(response, NEXT_COOKIE, safe_next(request.form.get("next")), None)
    return response


@bp.get("/login/callback")
def finish_login() -> ResponseReturnValue:
    """Exchange the code (once) and start a session: a new token on every sign-in."""
    settings = provider_settings()
    if settings is None:
        return redirect(url_for("staff.login"))
    state = request.args.get("state", "")
    if not state or state != request.cookies.get(LOGIN_STATE_COOKIE):
        raise InvalidRequest("This sign-in was started in another browser; please start again")
    try:
        user = oidc.finish_login(settings, request.args.get("code", ""), state)
    except (Forbidden, Conflict) as exc:
        # The provider signed the person in, but no account here is theirs to enter
        # (an unverified email, an account bound to another provider account): say why.
        page = render_template(
            "staff/login.html",
            configured=True,
            next=safe_next(request.cookies.get(NEXT_COOKIE)),
            error=exc.message,
        )
        return page, exc.status
    return signed_in(user, safe_next(request.cookies.get(NEXT_COOKIE)))


@bp.post("/login/token")
def token_login() -> ResponseReturnValue:
    """Sign in with a token from ``flask tokens create``, for deployments without a provider."""
    value = request.form.get("token", "").strip()
    next_page = safe_next(request.form.get("next"))
    try:
        token = authenticate_session(value)
    except Unauthorized as exc:
        page = render_template(
            "staff/login.html",
            configured=provider_settings() is not None,
            next=next_page,
            error=f"{exc.message}. Make a new one with `.venv/bin/flask tokens create`.",
        )
        return page, 401
    # The pasted token stays the operator's: the cookie gets a session of its own, so signing
    # out (which revokes the cookie's token) never cuts off a CLI or a script using it.
    return signed_in(token.user, next_page, not_after=token.expires_at)


def signed_in(user, target: str, not_after: datetime | None = None) -> ResponseReturnValue:
    """A new session token for this browser; never longer-lived than ``not_after``."""
    hours = current_app.config["SESSION_TOKEN_HOURS"]
    value, token = issue_session_token(user, hours)
    if not_after is not None and not_after < token.expires_at:
        token.expires_at = not_after
    response = redirect(target)
    csrf.rotate()
    start_session(response, value, token.expires_at)
    clear_cookie(response, LOGIN_STATE_COOKIE)
    clear_cookie(response, NEXT_COOKIE)
    return response


@bp.post("/logout")
@require_staff
def logout() -> ResponseReturnValue:
    """Revoke the token, not just forget it: a copied cookie stops working too."""
    revoke_session_token(g.session_token)
    response = redirect(url_for("staff.login"))
    clear_cookie(response, SESSION_COOKIE)
    return response
