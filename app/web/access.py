"""Who is calling: one decorator per authentication policy, visible at each route.

The integration key (``apikey`` header, query parameter tolerated) and the session token
(``Authorization: Bearer``) reach disjoint sets of JSON endpoints; the dashboard's pages take
the same session token from an HttpOnly cookie. Every policy leaves the caller in
``g``: the organization (``g.organization``) and, for people, the user, the session token and
the acting membership (see the README on ``current-identity``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, request

from app.errors import Forbidden, Unauthorized, UpgradeRequired
from app.identity.models import SessionToken, User
from app.identity.operations import authenticate_session
from app.integrations.operations import authenticate_key, organization_of_key
from app.organizations.models import Membership, Organization
from app.organizations.operations import require_paid_plan, resolve_acting_membership

F = TypeVar("F", bound=Callable[..., Any])

SESSION_COOKIE = "verity_session"
ORGANIZATION_COOKIE = "verity_org"
API_NO_ORGANIZATION = "You belong to no organization yet; create one with POST /organizations"
PAGE_NO_ORGANIZATION = "Create or join an organization first"


def require_apikey(view: F) -> F:
    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = request.headers.get("apikey") or request.args.get("apikey")
        if not key:
            raise Unauthorized("Missing integration key: send the 'apikey' header")
        # The ID now, the organization itself only if the view asks (acting_organization).
        g.integration_id, g.organization_id = authenticate_key(key)
        g.organization = None
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
    """A signed-in user of the JSON API; ``current-identity`` picks the acting organization,
    and naming one the user does not belong to is refused."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value = bearer_token()
        if value is None:
            raise Unauthorized("Missing session token: send 'Authorization: Bearer <token>'")
        chosen = request.headers.get("current-identity")
        sign_in(value, chosen, resolve_acting_membership, API_NO_ORGANIZATION)
        return view(*args, **kwargs)

    wrapper.auth = "session"  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def require_staff(view: F) -> F:
    """A signed-in user of the dashboard (else the sign-in page) and their acting organization,
    if any: the one the switcher chose, or the default once they left it."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value = request.cookies.get(SESSION_COOKIE)
        if not value:
            raise Unauthorized("Sign in to continue")
        chosen = request.cookies.get(ORGANIZATION_COOKIE)
        sign_in(value, chosen, chosen_or_default, PAGE_NO_ORGANIZATION)
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def sign_in(
    token_value: str,
    chosen: str | None,
    acting: Callable[[User, str | None], Membership | None],
    no_organization: str,
) -> None:
    """Authenticate the session token and settle the acting organization for this request:
    ``acting(user, chosen)`` applies the surface's rule to the organization the caller chose."""
    token = authenticate_session(token_value)
    g.session_token = token
    g.user = token.user
    g.no_organization = no_organization
    g.membership = acting(token.user, chosen)
    g.organization = g.membership.organization if g.membership else None


def chosen_or_default(user: User, chosen: str | None) -> Membership | None:
    """The organization the switcher chose; one the user has since left falls back to the
    default (the oldest membership), as a request without ``current-identity`` would."""
    try:
        return resolve_acting_membership(user, chosen)
    except Forbidden:
        return resolve_acting_membership(user, None)


def current_user() -> User:
    return g.user


def current_session_token() -> SessionToken:
    return g.session_token


def acting_membership() -> Membership:
    """The acting membership; a user with no organization yet is told how to get one."""
    if g.get("membership") is None:
        raise Forbidden(g.get("no_organization", API_NO_ORGANIZATION), code="NO_ORGANIZATION")
    return g.membership


def acting_organization() -> Organization:
    """The organization this request acts for (apikey: the key's; a person: chosen)."""
    if g.get("organization") is None:
        if g.get("organization_id") is not None:  # an integration key: loaded on first use
            g.organization = organization_of_key(g.organization_id)
            return g.organization
        return acting_membership().organization
    return g.organization


def acting_organization_id() -> uuid.UUID:
    """The acting organization's ID, without loading it when an integration key named it."""
    if g.get("organization_id") is not None:
        return g.organization_id
    return acting_organization().id


def tier_gated(action: str) -> Callable[[F], F]:
    """402 UPGRADE_REQUIRED for a FREE acting organization; apply inside the sign-in decorator.

    The JSON API answers the contract's 402 body; the dashboard shows its upgrade page.
    """

    def decorate(view: F) -> F:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            require_paid_plan(acting_organization(), action)
            return view(*args, **kwargs)

        wrapper.tier_gated = True  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def upgrade_prompt(organization: Organization, action: str) -> str | None:
    """What a page says in place of a gated form: the gate's own message, or None when the
    organization's plan allows ``action``."""
    try:
        require_paid_plan(organization, action)
    except UpgradeRequired as exc:
        hint = exc.operator_hint()
        return f"{exc.message}. {hint}" if hint else exc.message
    return None
