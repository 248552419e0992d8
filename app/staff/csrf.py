"""CSRF protection for the dashboard's forms and htmx requests.

A random value lives in an HttpOnly cookie; every form carries, and every htmx request sends
as ``X-CSRF-Token``, an HMAC of it under ``SECRET_KEY``. A cross-site page can make the browser
send the cookie but can neither read it nor compute the token. SameSite=Lax on every dashboard
cookie is the second layer. The JSON API authenticates by header (``apikey`` or Bearer), which
a browser never attaches on its own, so it needs no token and is not checked here.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from flask import Response, current_app, g, request

from app.errors import Forbidden
from app.staff.session import set_cookie

CSRF_COOKIE = "verity_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _sign(seed: str) -> str:
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, _bytes(f"csrf:{seed}"), hashlib.sha256).hexdigest()


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _seed() -> str:
    seed = g.get("csrf_seed") or request.cookies.get(CSRF_COOKIE)
    if not seed:
        seed = secrets.token_urlsafe(32)
        g.csrf_new_seed = seed
    g.csrf_seed = seed
    return seed


def csrf_token() -> str:
    """The token for this browser's forms (a fresh cookie is set if it has none)."""
    return _sign(_seed())


def rotate() -> None:
    """A new seed at sign-in, so a token seen before signing in is worthless after."""
    g.csrf_seed = g.csrf_new_seed = secrets.token_urlsafe(32)


def check_csrf() -> None:
    """Refuse an unsafe request whose token is missing or does not match this browser's."""
    if request.method in SAFE_METHODS:
        return
    seed = request.cookies.get(CSRF_COOKIE)
    sent = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD, "")
    # Compared as bytes: compare_digest refuses a non-ASCII str, and both values are the
    # sender's (a header arrives as Latin-1, a form field as any text).
    if not seed or not sent or not hmac.compare_digest(_bytes(sent), _sign(seed).encode()):
        raise Forbidden(
            "This form has expired or did not come from this dashboard; reload the page and "
            "try again",
            code="CSRF_FAILED",
        )


def remember_seed(response: Response) -> Response:
    if g.get("csrf_new_seed"):
        set_cookie(response, CSRF_COOKIE, g.csrf_new_seed, None)
    return response
