"""The authorization endpoint ``/issuers/<org_id>/authorize``: the page a wallet sends the
person to in the authorization code flow (OpenID4VCI 1.0 §5.1, RFC 9126 §4).

Only pushed requests are taken (``client_id`` and ``request_uri``). The page looks like the
offer page: who issues what, and what the credential holds. Continuing is a form POST, checked
against a double-submit token (an HttpOnly cookie of this browser and an HMAC of it and the
request in the form), which then redirects to the wallet's ``redirect_uri`` with ``code``,
``state`` and ``iss`` (RFC 9207). When the schema says ``authorization_code_by_mail``, the page
also asks for the one-time code mailed to the recipient at the pushed request. A request that is unknown, expired or used is an error page
and never a redirect: its ``redirect_uri`` is not to be trusted.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from flask import current_app, g, redirect, request
from flask.typing import ResponseReturnValue
from flask_babel import ngettext

from app import mail
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.issuance import authorization
from app.issuance.links import IssuerLinks
from app.issuance.models import AuthorizationRequest
from app.issuance.wallet.metadata import issuer_organization
from app.organizations.models import Organization
from app.pages.views import bp, render
from app.web.language import current_language
from app.web.requests import base_url

COOKIE = "verity_authorize"


@dataclass(frozen=True)
class AuthorizePage:
    organization: str
    credential: str
    description: str
    claims: list[str]
    action: str
    client_id: str
    request_uri: str
    csrf_token: str
    mail_code: bool = False
    # False when no mail server is configured: the page then never claims the code was emailed.
    mail_delivered: bool = True
    mailed_to: str = ""
    mail_code_error: str = ""


def _organization(org_id: str) -> Organization:
    organization = issuer_organization(org_id)
    if organization is None:
        raise NotFound("No such credential issuer")
    return organization


def _pending(organization: Organization, client_id: str | None, request_uri: str | None):
    try:
        return authorization.pending(organization, client_id, request_uri)
    except authorization.AuthorizationUnavailable as exc:
        raise NotFound(str(exc)) from exc


def _seed() -> str:
    seed = request.cookies.get(COOKIE) or g.get("authorize_seed")
    if not seed:
        seed = g.authorize_seed = secrets.token_urlsafe(32)
    return seed


def _form_token(seed: str, request_uri: str) -> str:
    key = current_app.config["SECRET_KEY"].encode()
    message = f"authorize:{seed}:{request_uri}".encode("utf-8", "surrogatepass")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _masked(email: str) -> str:
    """``a***@example.test``: enough for the person to know which mailbox to look in."""
    name, _, domain = email.partition("@")
    return f"{name[:1]}***@{domain}" if domain else "the recipient"


def _page(
    organization: Organization,
    pending: AuthorizationRequest,
    request_uri: str,
    mail_code_error: str = "",
):
    credential = pending.credential
    schema = credential.schema
    return AuthorizePage(
        organization=organization.name,
        credential=credential.name,
        description=credential.description or "",
        claims=[schema.shown_to_person(c["name"], current_language()) for c in credential.claims],
        action=request.path,
        client_id=pending.client_id,
        request_uri=request_uri,
        csrf_token=_form_token(_seed(), request_uri),
        mail_code=pending.mail_code_hash is not None,
        mail_delivered=mail.delivers(),
        mailed_to=_masked(credential.recipient.email or ""),
        mail_code_error=mail_code_error,
    )


@bp.get("/issuers/<org_id>/authorize")
def authorize(org_id: str) -> ResponseReturnValue:
    """The person sees what is being issued and by whom, and continues."""
    organization = _organization(org_id)
    client_id, request_uri = request.args.get("client_id"), request.args.get("request_uri")
    pending = _pending(organization, client_id, request_uri)
    response = current_app.make_response(
        render("person/authorize.html", page=_page(organization, pending, request_uri or ""))
    )
    if g.get("authorize_seed"):
        response.set_cookie(
            COOKIE,
            g.authorize_seed,
            path="/issuers/",
            # Secure everywhere but plain-HTTP local development, as the dashboard's cookies.
            secure=current_app.config.get("ENV") != "development" or request.is_secure,
            httponly=True,
            samesite="Lax",
        )
    return response


@bp.post("/issuers/<org_id>/authorize")
def authorize_decision(org_id: str) -> ResponseReturnValue:
    """Continue (a code for the wallet) or decline (``access_denied``); either way back to
    the wallet's redirect_uri."""
    organization = _organization(org_id)
    client_id, request_uri = request.form.get("client_id"), request.form.get("request_uri")
    seed = request.cookies.get(COOKIE)
    sent = request.form.get("csrf_token", "")
    if (
        not seed
        or not request_uri
        or not hmac.compare_digest(
            sent.encode("utf-8", "surrogatepass"), _form_token(seed, request_uri).encode()
        )
    ):
        raise Forbidden("This form has expired or did not come from this page; reload it")
    links = IssuerLinks(base_url())
    try:
        if request.form.get("decision") == "decline":
            target = authorization.decline(organization, client_id, request_uri, links)
        else:
            target = authorization.approve(
                organization, client_id, request_uri, links, request.form.get("mail_code")
            )
    except authorization.WrongMailCode as exc:
        db.session.commit()  # the failure counts, though the page answers 400
        pending = _pending(organization, client_id, request_uri)
        shown = _page(
            organization,
            pending,
            request_uri,
            ngettext(
                "That is not the code we emailed. %(num)d try left.",
                "That is not the code we emailed. %(num)d tries left.",
                exc.left,
            ),
        )
        return render("person/authorize.html", page=shown), 400
    except authorization.AuthorizationUnavailable as exc:
        db.session.commit()  # a request ended by wrong codes stays ended
        raise NotFound(str(exc)) from exc
    return redirect(target, code=303)
