"""The authentication decorators live in the web kit (``app.web.access``), shared with the
dashboard's pages; this name is kept for code written against it."""

from app.web.access import (
    SESSION_COOKIE,
    acting_membership,
    acting_organization,
    bearer_token,
    current_session_token,
    current_user,
    require_apikey,
    require_session,
    tier_gated,
)

__all__ = [
    "SESSION_COOKIE",
    "acting_membership",
    "acting_organization",
    "bearer_token",
    "current_session_token",
    "current_user",
    "require_apikey",
    "require_session",
    "tier_gated",
]
