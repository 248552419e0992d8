"""Domain errors and the JSON error surface.

Every error the service returns is ``{"error": str, "code": str, "tier"?: str}`` with a stable
``code`` that clients branch on. Domain code raises the classes
below; it never builds HTTP responses itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from flask import (
    Flask,
    Response,
    current_app,
    g,
    has_app_context,
    has_request_context,
    jsonify,
    make_response,
    request,
)
from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import HTTPException

log = logging.getLogger(__name__)

NOT_FOUND_TEXT = "sql: no rows in result set"


class ApiError(Exception):
    """An error with an HTTP status and a stable machine code."""

    status = 400
    code = "INVALID_REQUEST"
    # Response headers the refusal carries (``Retry-After`` on a 429 or 503).
    headers: Mapping[str, str] = {}

    def __init__(self, message: str, *, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "code": self.code, **self.extra}


class InvalidRequest(ApiError):
    status = 400
    code = "INVALID_REQUEST"


class NotFound(ApiError):
    """An unknown ID, or another organization's record (indistinguishable on purpose).

    The contract fixes both the status (400, not 404) and the text.
    """

    status = 400
    code = "NOT_FOUND"

    def __init__(self, message: str = NOT_FOUND_TEXT) -> None:
        super().__init__(message)


class Unauthorized(ApiError):
    status = 401
    code = "UNAUTHORIZED"


class UpgradeRequired(ApiError):
    """The contract's 402: ``error``, ``code`` UPGRADE_REQUIRED, ``tier`` FREE, nothing else.

    Only the human message says more: on a deployment without billing nobody can buy a plan,
    so it adds the operator's commands that set one (``operator_hint``).
    """

    status = 402
    code = "UPGRADE_REQUIRED"

    def __init__(self, message: str, organization_id: object = None) -> None:
        super().__init__(message, tier="FREE")
        self.organization_id = organization_id

    def operator_commands(self) -> list[str]:
        """The commands that lift the gate where billing is not set up; none where it is."""
        if not has_app_context() or current_app.extensions.get("billing") is not None:
            return []
        organization = self.organization_id or "<organization id>"
        return [
            f"flask orgs set-plan {organization} PRO",
            "flask vouchers mint --plan PRO --days 30",
        ]

    def operator_hint(self) -> str | None:
        commands = self.operator_commands()
        if not commands:
            return None
        return (
            f"Billing is not set up on this deployment: an operator sets the plan with "
            f"{commands[0]} (or mints a voucher to redeem on the Plan page: {commands[1]})"
        )

    def body(self) -> dict[str, Any]:
        body = super().body()
        hint = self.operator_hint()
        if hint:
            body["error"] = f"{self.message}. {hint}"
        return body


class Forbidden(ApiError):
    status = 403
    code = "FORBIDDEN"


class CodeNotFound(ApiError):
    """No such policy or organization code, voucher included (404)."""

    status = 404
    code = "NOT_FOUND"


class Conflict(ApiError):
    status = 409
    code = "CONFLICT"


class Expired(ApiError):
    status = 410
    code = "EXPIRED"


class UnsupportedMediaType(ApiError):
    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"


class UpstreamFailed(ApiError):
    status = 502
    code = "UPSTREAM_FAILED"


class StorageUnavailable(ApiError):
    """The database (or the rate limiter's storage) cannot be reached: retry after a moment.

    502 like any failed upstream (retry with backoff), with its own code so a
    client can tell an outage from a bad answer, and ``Retry-After`` on the response.
    """

    status = 502
    code = "STORAGE_UNAVAILABLE"

    def __init__(self, message: str = "Storage is unavailable; try again in a moment") -> None:
        super().__init__(message)
        if has_request_context():
            g.storage_unavailable = True


# Seconds a client is asked to wait when storage is unavailable; outages seen so far were short.
RETRY_AFTER_SECONDS = 2


class NotConfigured(ApiError):
    status = 503
    code = "NOT_CONFIGURED"


HTTP_CODES = {
    400: "INVALID_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}


def error_response(status: int, body: dict[str, Any]) -> Response:
    response = jsonify(body)
    response.status_code = status
    return response


def describe_validation_error(exc: ValidationError) -> str:
    """One readable sentence naming each rejected field, without echoing the input."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "body"
        parts.append(f"{where}: {error['msg']}")
    return "Invalid request: " + "; ".join(parts)


# Where surfaces of pages register the handler that answers their unmatched addresses.
PAGE_ERRORS = "page_error_handlers"


def answer_unmatched_paths_with(
    app: Flask, prefix: str, handler: Callable[[HTTPException], Any]
) -> None:
    """Let the pages under ``prefix`` answer their own unmatched addresses (a page, not JSON)."""
    app.extensions.setdefault(PAGE_ERRORS, {})[prefix] = handler


def page_error_handler(path: str) -> Callable[[HTTPException], Any] | None:
    for prefix, handler in current_app.extensions.get(PAGE_ERRORS, {}).items():
        if path == prefix or path.startswith(prefix + "/"):
            return handler
    return None


# Where the surface of pages for people registers the page an unknown address shows a browser.
BROWSER_NOT_FOUND = "browser_not_found_page"


def answer_browsers_unknown_paths_with(app: Flask, handler: Callable[[], Any]) -> None:
    """Let a person's browser that follows a wrong link get a page, not the API's JSON."""
    app.extensions[BROWSER_NOT_FOUND] = handler


def wants_a_page() -> bool:
    """A browser asks for HTML above JSON (``text/html,...,*/*;q=0.8``); an API client asks
    for JSON, for anything (``*/*``, curl's default) or for nothing, and keeps getting JSON."""
    accept = request.accept_mimetypes
    return accept["text/html"] > accept["application/json"] and "text/html" in accept.values()


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def handle_api_error(exc: ApiError) -> Response:
        response = error_response(exc.status, exc.body())
        response.headers.update(exc.headers)
        return response

    @app.after_request
    def ask_to_retry(response: Response) -> Response:
        # Every surface (JSON, the person's pages, the dashboard) renders the outage its own
        # way; all of them tell clients when to come back.
        if g.get("storage_unavailable"):
            response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    @app.errorhandler(ValidationError)
    def handle_validation_error(exc: ValidationError) -> Response:
        return error_response(
            400, {"error": describe_validation_error(exc), "code": "INVALID_REQUEST"}
        )

    @app.errorhandler(IntegrityError)
    def handle_integrity_error(exc: IntegrityError) -> Response:
        # Operations catch the races they expect; one that slips through is still a conflict
        # with existing state, never a server failure or a half-written record.
        log.warning("integrity error: %s", exc.orig)
        return error_response(
            409, {"error": "The request conflicts with existing data", "code": "CONFLICT"}
        )

    @app.errorhandler(HTTPException)
    def handle_http_exception(exc: HTTPException) -> Response:
        page_error = page_error_handler(request.path)
        if page_error is not None:
            # No route matched, so no blueprint: a surface of pages still answers as a page.
            return make_response(page_error(exc))
        status = exc.code or 500
        browser_page = current_app.extensions.get(BROWSER_NOT_FOUND)
        if status == 404 and browser_page is not None and wants_a_page():
            return make_response(browser_page())
        if status == 429:
            message = "Too many attempts; retry later"
        elif status == 404:
            message = "No such endpoint"
        else:
            message = exc.description or exc.name
        response = error_response(
            status, {"error": message, "code": HTTP_CODES.get(status, "ERROR")}
        )
        # Keep the headers the exception carries (Allow on 405); Flask-Limiter adds
        # Retry-After and the X-RateLimit-* headers to 429s after this handler.
        for key, value in exc.get_headers():
            if key.lower() != "content-type":
                response.headers[key] = value
        return response

    @app.errorhandler(Exception)
    def handle_unexpected(exc: Exception) -> Response:
        log.exception("unhandled error")
        return error_response(500, {"error": "Internal server error", "code": "INTERNAL"})
