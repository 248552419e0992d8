"""Response headers every person-facing page and fragment carries."""

from __future__ import annotations

from flask import Response

from app.web.language import current_language

# Nothing inline and nothing from elsewhere: scripts and styles are files under /static,
# the QR code is inline SVG markup (not a style), Pico's icons are data: URIs.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)


def protect(response: Response) -> Response:
    """Strict CSP; no Referer, so the page address (an unguessable ID or token, sometimes a
    response code) never reaches the organization's return_url or anyone else; no caching,
    so a shared computer's back button or a proxy cannot replay someone's result."""
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    # frame-ancestors for browsers that read CSP; X-Frame-Options for those that predate it.
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Language"] = current_language()
    return response
