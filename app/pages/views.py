"""Routes of the person's page (``/i/<individual_id>``, ``/p/<token>``) and its live fragment.

Without ``response_code`` the page is the live one: purpose, QR code, wallet buttons and the
status, which is semi-public like ``GET /verifications/<id>/verify``. With it, the page is the
result for the browser the wallet returned to, and only if the code is the one handed out.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, current_app, make_response, redirect, render_template, request, url_for
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from markupsafe import Markup
from werkzeug.exceptions import HTTPException

from app import clock
from app.database import reading
from app.didcomm import invitation as oob
from app.didcomm.errors import DidcommError
from app.didcomm_agent import operations as agent
from app.errors import (
    ApiError,
    CodeNotFound,
    NotFound,
    Unauthorized,
    answer_browsers_unknown_paths_with,
)
from app.extensions import db
from app.pages import state
from app.pages.headers import protect
from app.pages.qr import QrCache
from app.pages.wallet_apps import wallet_apps
from app.presentations.glance import glance_individual
from app.presentations.reasons import for_person, not_again_for_person
from app.verifications import operations as individuals
from app.verifications.models import PresentationSubject, Status
from app.verifications.return_address import return_address
from app.web import language
from app.web.documentation import documented
from app.web.links import links
from app.web.requests import parse_id

log = logging.getLogger(__name__)

bp = Blueprint("pages", __name__)
bp.after_request(protect)

# What the Socious Wallet's scanner appends to a scanned address (see ``didcomm_invitation``).
SCANNER_SUFFIX = "/fetch"
FRAGMENTS = {"pages.individual_status", "pages.policy_status", "pages.offer_status"}
# htmx reads its settings from a meta tag. Nothing evaluated, no inline <style>, and error
# statuses (404, 410) are swapped in, so their fragment (which does not poll) ends the polling;
# a 5xx is not swapped, so a passing failure does not stop the page from updating.
HTMX_CONFIG = {
    "allowEval": False,
    "allowScriptTags": False,
    "includeIndicatorStyles": False,
    "historyEnabled": False,
    "responseHandling": [
        {"code": "^204$", "swap": False},
        {"code": "^[23]..$", "swap": True},
        {"code": "^4..$", "swap": True, "error": True},
        {"code": "...", "swap": False, "error": True},
    ],
}


@bp.app_template_global()
def htmx_config() -> dict:
    return HTMX_CONFIG


bp.add_app_template_global(wallet_apps)


@bp.get("/language/<code>")
def choose_language(code: str) -> ResponseReturnValue:
    """The switcher: remember the person's language (a cookie, a year) and go back. A GET
    that changes only this browser's own preference, so it needs no form token."""
    response = redirect(language.safe_next(request.args.get("next")), code=303)
    if code in language.LANGUAGES:
        response.set_cookie(
            language.COOKIE,
            code,
            max_age=language.COOKIE_SECONDS,
            path="/",
            secure=request.is_secure,
            httponly=True,
            samesite="Lax",
        )
    return response


@bp.get("/")
def home() -> ResponseReturnValue:
    """A small page pointing to the dashboard and the API description, instead of a 404."""
    return render_template("home/index.html")


@bp.get("/favicon.ico")
def favicon() -> ResponseReturnValue:
    """Browsers ask here when a page names no icon (a JSON answer, say)."""
    return redirect(url_for("static", filename="favicon.svg"), 301)


@bp.get("/i/<individual_id>")
def individual_page(individual_id: str) -> ResponseReturnValue:
    """The person's page for an individual, or its result for the browser holding the code."""
    if "response_code" in request.args:
        subject, holds = state.answered_individual(
            parse_id(individual_id), request.args["response_code"]
        )
        return result_page(subject, holds, url_for(".individual_page", individual_id=subject.id))
    return live_page(state.of_individual(parse_id(individual_id), windows()))


@bp.get("/connect/redirect/<verification_id>")
@documented(
    "The no-code link: opens the customer's individual (opened_by link) and redirects the "
    "person to their page /i/{individual_id}",
    responses={303: None},
    query={
        "customer": "The customer ID (1 to 200 characters); without it, a new unguessable one "
        '(only where anonymous_open is "allowed")',
        "customer_sig": 'Where anonymous_open is "signed": base64url (no padding) of '
        "HMAC-SHA256 over the customer ID, keyed with the verification's link secret",
    },
    errors={
        403: 'The link is not valid: anonymous_open "refused", or customer_sig missing or '
        "wrong (a page in the person's language)",
        404: "No such verification (a page)",
    },
    tags=("individuals",),
    page=True,
)
def no_code_link(verification_id: str) -> ResponseReturnValue:
    """The no-code link (Socious Verify's ``/connect/redirect/{verification_id}?customer=``):
    opens the individual, or finds it again, and sends the person to their page. A link the
    verification's ``anonymous_open`` refuses is a page saying so, never JSON."""
    try:
        individual_id = individuals.open_by_link(
            parse_id(verification_id),
            request.args.get("customer"),
            request.args.get("customer_sig"),
        )
    except Unauthorized:
        return render_template("person/error.html", heading=LINK_NOT_VALID, advice=ASK_AGAIN), 403
    return redirect(url_for(".individual_page", individual_id=individual_id), 303)


@bp.get("/i/<individual_id>/status")
def individual_status(individual_id: str) -> ResponseReturnValue:
    """The status region htmx polls; it also brings a fresh code when the link changed."""
    ident = parse_id(individual_id)
    seen = glance_individual(ident, current_app.config["CONNECT_LINK_SECONDS"])
    if seen is not None and not Shown.from_query().changes(seen.final, seen.attempts, seen.link_id):
        return "", 204  # the common case: one read, nothing rendered
    return status_update(state.of_individual(ident, windows()))


@bp.get("/p/<token>")
def policy_page(token: str) -> ResponseReturnValue:
    """The same page for a policy request (410 once it expired without a result)."""
    if "response_code" in request.args:
        subject, holds = state.answered_policy(token, request.args["response_code"])
        return result_page(subject, holds, url_for(".policy_page", token=token))
    return live_page(state.of_policy(token, windows()))


@bp.get("/p/<token>/status")
def policy_status(token: str) -> ResponseReturnValue:
    """The polled status region of a policy request's page."""
    return status_update(state.of_policy(token, windows()))


@bp.get("/didcomm/invitation")
def didcomm_invitation() -> ResponseReturnValue:
    """A DIDComm out-of-band invitation, the connection link of a verification that offers
    DIDComm first: a wallet reads the invitation from the address itself; a browser that opens
    it gets the same address as a QR code to scan with the wallet. Only an invitation from one
    of this deployment's DIDs naming a live exchange is shown, and then as this service makes
    it (its own goal text, the deployment's public URL, never the request's Host header):
    anything else is the 404 page, so the page cannot be made to show a stranger's words."""
    value = request.args.get("_oob", "")
    # The Socious Wallet's scanner reads every QR code as a link shortener's: it asks for
    # "<scanned>/fetch" and opens the "long_url" of the JSON answer (socious-wallet
    # src/pages/Scan/index.tsx). Appended to this address, "/fetch" lands at the end of the
    # _oob value, whose alphabet ([A-Za-z0-9=]) has no "/": so that question is answered here.
    scanned = value.endswith(SCANNER_SUFFIX)
    value = value.removesuffix(SCANNER_SUFFIX)
    try:
        url = agent.live_invitation_url(oob.parse_oob(f"?_oob={value}"))
    except DidcommError:
        url = None
    if url is None:
        raise NotFound()
    if scanned:
        return {"long_url": url}
    goal = oob.parse_oob(url)["body"].get("goal")
    return render(
        "person/didcomm_invitation.html", url=url, goal=goal if isinstance(goal, str) else ""
    )


def windows() -> state.Windows:
    config = current_app.config
    return state.Windows(config["CONNECT_LINK_SECONDS"], config["PRESENTATION_REQUEST_SECONDS"])


@bp.record_once
def keep_qr_codes(state: Any) -> None:
    state.app.extensions["qr_cache"] = QrCache(state.app.config["CACHE_REDIS_URL"])


def kept_qr_svg(data: str, label: str) -> Markup:
    return current_app.extensions["qr_cache"].svg(data, label)


def render(template: str, **context: Any) -> str:
    return render_template(template, links=links(), qr_svg=kept_qr_svg, **context)


def drawn_after_commit(template: str, **context: Any) -> str:
    """A page that may just have handed out a new link, drawn once that link is committed.

    Drawing a new link's QR code takes up to 50 ms; within the request's transaction it would
    hold SQLite's write lock, and every other writer (another page handing out a link, a
    wallet's answer) with it: measured, 49 of a first load's 51 ms. So the transaction ends
    before drawing, keeping what was read (nothing is expired), and whatever the templates
    still read is read without the write lock.
    """
    session = db.session()
    session.expire_on_commit = False
    try:
        session.commit()
    finally:
        session.expire_on_commit = True
    with reading():
        return render(template, **context)


def live_page(page: state.PageState) -> ResponseReturnValue:
    return drawn_after_commit(
        "person/page.html",
        page=page,
        poll=not page.final,
        seen=page.attempts,
        since=int(clock.now().timestamp()),
        ended=False,
        idle=False,
    )


@dataclass(frozen=True)
class Shown:
    """What the page in the browser shows, as its polling address says."""

    request_id: str
    seen: int
    since: int

    def changes(self, final: bool, attempts: int, link_id: str) -> tuple[bool, bool, bool] | None:
        """``(ended, idle, relinked)`` when the page must change, None while it need not."""
        ended = final or attempts > self.seen
        idle = not ended and clock.now().timestamp() - self.since > state.WAIT_SECONDS
        relinked = link_id != self.request_id
        return (ended, idle, relinked) if ended or idle or relinked else None

    @classmethod
    def from_query(cls) -> Shown:
        now = int(clock.now().timestamp())
        return cls(
            request_id=request.args.get("request", ""),
            seen=request.args.get("seen", 0, type=int),
            since=request.args.get("since", now, type=int),
        )


def status_update(page: state.PageState) -> ResponseReturnValue:
    """204 while nothing changed (htmx keeps the region and polls on, screen readers hear
    nothing); otherwise the region, without the polling trigger once the wait is over, and
    the wallet section out of band: with the new link, or emptied once the page stops
    following it (an outcome, or a page left open too long)."""
    shown = Shown.from_query()
    change = shown.changes(page.final, page.attempts, page.link_id)
    if change is None:
        return "", 204
    ended, idle, relinked = change
    return drawn_after_commit(
        "person/_update.html",
        page=page,
        poll=not (ended or idle),
        seen=shown.seen,
        since=shown.since,
        ended=ended,
        idle=idle,
        oob=True,
        relink=ended or idle or relinked,
    )


def result_page(subject: PresentationSubject, holds: bool, path: str) -> ResponseReturnValue:
    """The outcome and the organization's return_url, only for the browser holding the code."""
    if not holds:
        return render("person/wrong_code.html", path=path), 403
    verification = subject.verification
    return render(
        "person/result.html",
        subject=subject,
        reason=for_person(subject.validation_error),
        not_again=not_again_for_person(subject.validation_error),
        verified=subject.status == Status.VERIFIED,
        organization=verification.organization.name,
        contact=verification.organization.contact,
        verification=verification,
        retry_path=path if subject.retries_after_failure else None,
        return_url=state.safe_return_url(return_address(verification.return_url, subject)),
    )


def N_(text: str) -> str:
    """Marks a message for the catalogs; the template translates it when it is shown."""
    return text


ASK_AGAIN = N_(
    "Check the link you were given, or ask the organization that sent you for a new one."
)
LINK_NOT_VALID = N_("This link is not valid")
ERROR_TEXT = {
    404: (N_("This page does not exist"), ASK_AGAIN),
    410: (N_("This request has expired"), N_("Ask the organization that sent you for a new link.")),
    500: (N_("Something went wrong on our side"), N_("Please try again in a moment.")),
    # Storage unreachable: nothing is lost, the page will work again shortly.
    502: (N_("We are having a short pause"), N_("Nothing is lost. Please try again in a moment.")),
}


def error_page(status: int) -> ResponseReturnValue:
    """A page for people (or, to a polling region, a fragment that stops the polling)."""
    fallback = (
        ERROR_TEXT[500] if status >= 500 else (N_("This request could not be handled"), ASK_AGAIN)
    )
    heading, advice = ERROR_TEXT.get(status, fallback)
    template = "person/_error.html" if request.endpoint in FRAGMENTS else "person/error.html"
    return render_template(template, heading=heading, advice=advice), status


def unknown_address_page() -> ResponseReturnValue:
    """A person who follows a mistyped or truncated link reads a page in their language."""
    return protect(make_response(error_page(404)))


@bp.record_once
def answer_browsers_unknown_paths(state: BlueprintSetupState) -> None:
    """An address that matches no route is, to a browser, this surface's "no such page"."""
    answer_browsers_unknown_paths_with(state.app, unknown_address_page)


@bp.errorhandler(ApiError)
def domain_error(exc: ApiError) -> ResponseReturnValue:
    # The JSON API answers unknown IDs with 400; a page answers 404.
    return error_page(404 if isinstance(exc, NotFound | CodeNotFound) else exc.status)


@bp.errorhandler(HTTPException)
def http_error(exc: HTTPException) -> ResponseReturnValue:
    return error_page(exc.code or 500)


@bp.errorhandler(Exception)
def unexpected_error(exc: Exception) -> ResponseReturnValue:
    log.exception("unhandled error on a person's page")
    return error_page(500)
