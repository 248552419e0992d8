"""Who is calling: one decorator per authentication policy, visible at each route.

INTERFACE.md 5: the integration key (``apikey`` header, query parameter tolerated) and the
session token (``Authorization: Bearer``) reach disjoint sets of endpoints.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, request

from app.errors import Forbidden, Unauthorized
from app.identity.models import SessionToken, User
from app.identity.operations import authenticate_session
from app.integrations.operations import authenticate_key
from app.organizations.models import Membership, Organization
from app.organizations.operations import require_paid_plan, resolve_acting_membership

F = TypeVar("F", bound=Callable[..., Any])
SESSION_COOKIE = "verity_session"


def require_apikey(view: F) -> F:
    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = request.headers.get("apikey") or request.args.get("apikey")
        if not key:
            raise Unauthorized("Missing integration key: send the 'apikey' header")
        g.organization = authenticate_key(key)
        return view(*args, **kwargs)

    wrapper.auth = "apikey"  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def bearer_token() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def require_session(view: F) -> F:
    """A signed-in user; also resolves the acting organization (INTERFACE.md 5.4)."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value = bearer_token()
        if value is None:
            raise Unauthorized("Missing session token: send 'Authorization: Bearer <token>'")
        token = authenticate_session(value)
        g.session_token = token
        g.user = token.user
        g.membership = resolve_acting_membership(
            token.user, request.headers.get("current-identity")
        )
        g.organization = g.membership.organization if g.membership else None
        return view(*args, **kwargs)

    wrapper.auth = "session"  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def current_user() -> User:
    return g.user


def current_session_token() -> SessionToken:
    return g.session_token


def acting_membership() -> Membership:
    if g.get("membership") is None:
        raise Forbidden(
            "You belong to no organization yet; create one with POST /organizations",
            code="NO_ORGANIZATION",
        )
    return g.membership


def acting_organization() -> Organization:
    """The organization this request acts for (apikey: the key's; session: INTERFACE.md 5.4)."""
    if g.get("organization") is None:
        return acting_membership().organization
    return g.organization


def tier_gated(action: str) -> Callable[[F], F]:
    """402 UPGRADE_REQUIRED for a FREE acting organization; apply inside ``require_session``."""

    def decorate(view: F) -> F:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            require_paid_plan(acting_organization(), action)
            return view(*args, **kwargs)

        wrapper.tier_gated = True  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
