"""The dashboard's cookies: the session token (HttpOnly) and the organization the switcher chose.

Who is signed in and for which organization is the web kit's ``require_staff``
(``app.web.access``), the same rules the JSON API's ``require_session`` follows.
"""

from __future__ import annotations

from datetime import datetime

from flask import Response, current_app, request

from app.web.access import ORGANIZATION_COOKIE, SESSION_COOKIE, require_staff

__all__ = [
    "ORGANIZATION_COOKIE",
    "SESSION_COOKIE",
    "clear_cookie",
    "require_staff",
    "set_cookie",
    "start_session",
]

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
