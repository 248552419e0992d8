"""Who is looking at a dashboard page: the session token in an HttpOnly cookie, and the acting
organization the switcher chose, resolved exactly as ``current-identity`` is (INTERFACE.md 5.4).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any, TypeVar

from flask import Response, current_app, g, request

from app.errors import Forbidden, Unauthorized
from app.identity.models import User
from app.identity.operations import authenticate_session
from app.organizations.models import Membership, Organization
from app.organizations.operations import resolve_acting_membership

F = TypeVar("F", bound=Callable[..., Any])

SESSION_COOKIE = "verity_session"
ORGANIZATION_COOKIE = "verity_org"
COOKIE_PATH = "/dashboard"


def secure_cookies() -> bool:
    """Secure everywhere but plain-HTTP local development, where a browser would drop them."""
    return current_app.config.get("ENV") != "development" or request.is_secure


def set_cookie(response: Response, name: str, value: str, expires: datetime | None) -> None:
    response.set_cookie(
        name,
        value,
        expires=expires,
        path=COOKIE_PATH,
        secure=secure_cookies(),
        httponly=True,
        samesite="Lax",
    )


def clear_cookie(response: Response, name: str) -> None:
    response.delete_cookie(
        name, path=COOKIE_PATH, secure=secure_cookies(), httponly=True, samesite="Lax"
    )


def start_session(response: Response, token_value: str, expires_at: datetime) -> None:
    set_cookie(response, SESSION_COOKIE, token_value, expires_at)


def require_staff(view: F) -> F:
    """A signed-in user (else the sign-in page) and their acting organization, if any."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value = request.cookies.get(SESSION_COOKIE)
        if not value:
            raise Unauthorized("Sign in to continue")
        token = authenticate_session(value)
        g.session_token = token
        g.user = token.user
        g.membership = acting_membership_for(token.user)
        g.organization = g.membership.organization if g.membership else None
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def acting_membership_for(user: User) -> Membership | None:
    """The organization the switcher chose; one the user has since left falls back to the
    default (the oldest membership), as a request without ``current-identity`` would."""
    chosen = request.cookies.get(ORGANIZATION_COOKIE)
    try:
        return resolve_acting_membership(user, chosen)
    except Forbidden:
        return resolve_acting_membership(user, None)


def staff_user() -> User:
    return g.user


def acting_membership() -> Membership:
    """The acting membership; a user with no organization yet is sent to create one."""
    if g.get("membership") is None:
        raise Forbidden("Create or join an organization first", code="NO_ORGANIZATION")
    return g.membership


def acting_organization() -> Organization:
    return acting_membership().organization
