"""The staff dashboard's blueprint: server-rendered pages under ``/dashboard``.

Pages call the same domain operations as the session-token JSON API and validate forms with
the same pydantic models, so the two surfaces cannot drift apart. Errors are pages here, not
JSON: people read them.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import Blueprint, Response, g, redirect, render_template, request, url_for
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException

from app.errors import (
    ApiError,
    CodeNotFound,
    NotFound,
    Unauthorized,
    UpgradeRequired,
    answer_unmatched_paths_with,
    describe_validation_error,
)
from app.pages.headers import protect

log = logging.getLogger(__name__)

bp = Blueprint("staff", __name__, url_prefix="/dashboard")


@bp.record_once
def answer_unmatched_paths(state: BlueprintSetupState) -> None:
    """An address under /dashboard that matches no route is a dashboard page too."""
    answer_unmatched_paths_with(state.app, bp.url_prefix or "", http_error)


@bp.after_request
def dashboard_headers(response: Response) -> Response:
    """The person's page headers (strict CSP, no-store, no Referer), and no framing at all."""
    response.headers["X-Frame-Options"] = "DENY"
    protect(response)
    origins = g.get("form_redirect_origins")
    if origins:
        policy = response.headers["Content-Security-Policy"]
        response.headers["Content-Security-Policy"] = policy.replace(
            "form-action 'self'", "form-action 'self' " + " ".join(sorted(origins))
        )
    return response


def allow_form_redirects_to(url: str) -> None:
    """Let this page's forms end at ``url``'s origin. CSP ``form-action`` also governs where a
    form's redirect goes, so a form whose answer sends the browser to the identity provider or
    the payment processor needs that origin named, and only that one."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        g.setdefault("form_redirect_origins", set()).add(f"{parts.scheme}://{parts.netloc}")


def wants_fragment() -> bool:
    return request.headers.get("HX-Request") == "true"


def navigate(target: str, status: int = 303) -> ResponseReturnValue:
    """Send the browser to ``target``: a redirect for a plain form, ``HX-Redirect`` for htmx
    (whose requests follow redirects invisibly, and whose script navigation a CSP
    ``form-action`` does not hold back)."""
    if wants_fragment():
        return Response(status=204, headers={"HX-Redirect": target})
    return redirect(target, status)


def to_sign_in() -> ResponseReturnValue:
    """Browsers go to the sign-in page and come back; htmx is told to navigate there."""
    target = url_for(
        "staff.login", next=request.full_path.rstrip("?") if request.method == "GET" else None
    )
    return navigate(target, 302)


def error_page(status: int, heading: str, message: str) -> ResponseReturnValue:
    return render_template("staff/error.html", heading=heading, message=message), status


@bp.errorhandler(Unauthorized)
def signed_out(exc: Unauthorized) -> ResponseReturnValue:
    return to_sign_in()


@bp.errorhandler(UpgradeRequired)
def upgrade_prompt(exc: UpgradeRequired) -> ResponseReturnValue:
    """A gated action on a FREE organization: say what a plan unlocks, not a raw 402."""
    return render_template(
        "staff/upgrade.html", action=exc.message, commands=exc.operator_commands()
    ), 402


@bp.errorhandler(ValidationError)
def invalid_form(exc: ValidationError) -> ResponseReturnValue:
    return error_page(400, "Please check the form", describe_validation_error(exc))


@bp.errorhandler(ApiError)
def domain_error(exc: ApiError) -> ResponseReturnValue:
    if isinstance(exc, NotFound | CodeNotFound):
        return error_page(
            404, "Not found", "It does not exist, or it belongs to another organization."
        )
    return error_page(exc.status, "That did not work", exc.message)


@bp.errorhandler(HTTPException)
def http_error(exc: HTTPException) -> ResponseReturnValue:
    status = exc.code or 500
    if status == 404:
        return error_page(404, "Not found", "There is no such page in the dashboard.")
    return error_page(status, exc.name, exc.description or exc.name)


@bp.errorhandler(Exception)
def unexpected_error(exc: Exception) -> ResponseReturnValue:
    log.exception("unhandled error on a dashboard page")
    return error_page(500, "Something went wrong on our side", "Please try again in a moment.")
