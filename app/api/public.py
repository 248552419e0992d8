"""Endpoints for the person being verified and their wallet: no credential, unguessable IDs."""

from __future__ import annotations

from flask import Blueprint, current_app, g, request
from sqlalchemy.orm import joinedload

from app.api import compat, render
from app.api.common import documented, json_response, parse_body, parse_id
from app.database import read_only
from app.errors import InvalidRequest, NotFound, Unauthorized
from app.integrations.operations import authenticate_key
from app.oid4vp import wallet_metadata
from app.oid4vp.request import AuthorizationRequest
from app.presentations import operations as presentations
from app.verifications import operations as individuals
from app.verifications import profile, transaction_data
from app.verifications.models import BACKEND, OPENID4VP, Individual
from app.web.idempotency import idempotent
from app.web.links import links
from app.web.payloads.individuals import IndividualOpenOut, IndividualOut, OpenIndividual

bp = Blueprint("public", __name__)
# The prefix of the Idempotency-Key space of unauthenticated openings (see opener_scope).
UNAUTHENTICATED_SCOPE = "unauthenticated:"


def opener() -> individuals.Opener:
    """Who sends the open. A credential that is sent must be right: a wrong, unknown or
    deleted integration key (header or query), or a session token, is a 401 as on every
    apikey endpoint, never read as no credential. Only a request with none is anonymous."""
    if "opener" in g:
        return g.opener
    key = request.headers.get("apikey")
    if key is None:
        key = request.args.get("apikey")
    if key is None:
        # As on every apikey endpoint, a session token is no integration key (beside a key,
        # it is ignored there too).
        if request.headers.get("Authorization") is not None:
            raise Unauthorized(
                "POST /verifications/individuals takes the integration key in the 'apikey' "
                "header; a session token (Authorization) is not accepted here: send none, or "
                "the apikey"
            )
        g.opener = individuals.ANONYMOUS_OPENER
    else:
        integration_id, organization_id = authenticate_key(key)
        g.opener = individuals.Opener(BACKEND, integration_id, organization_id)
    return g.opener


def opener_scope() -> str | None:
    """Whose ``Idempotency-Key`` an opening shares, by who sent it: with an integration key,
    the key's organization (the space of its other creates); without one, a space of its own
    per verification's organization, so an unauthenticated caller, who may be anyone, can
    neither replay nor burn nor probe the keys the organization's backend sends."""
    who = opener()  # a wrong key is refused here, before any replay
    owner = individuals.owner_scope(request.get_data(cache=True))
    if owner is None:
        return None
    if who.kind == BACKEND:
        return str(who.organization_id)
    return f"{UNAUTHENTICATED_SCOPE}{owner}"


@bp.post("/verifications/individuals")
@idempotent(scope=opener_scope)
@documented(
    "Open an individual for (customer_id, verification_id); safe to retry",
    body=OpenIndividual,
    responses={200: IndividualOpenOut, 201: IndividualOpenOut},
    tags=("individuals",),
    headers={
        "apikey": "Optional: the organization's integration key, from its backend (opened_by "
        "backend; needed under anonymous_open refused). A key that is sent must be valid: "
        "a wrong, unknown or deleted one is a 401, never read as no key."
    },
    errors={
        401: "A wrong, unknown or deleted apikey, or a session token without one "
        '(UNAUTHORIZED); no apikey where anonymous_open is "refused", or transaction_data '
        'without one (APIKEY_REQUIRED); customer_sig missing or wrong where it is "signed" '
        "(CUSTOMER_SIG_INVALID)",
    },
)
def open_individual():
    """201 when created, 200 with the same body when it already existed (whoever opened it:
    ``opened_by`` names the first opener)."""
    who = opener()
    body = parse_body(OpenIndividual)
    profile.require_verification_allowed(body.verification_id)
    rules = individuals.opening(body.verification_id, body.customer_id)
    if rules is None:
        raise NotFound()
    individuals.check_opener(rules, who, body.customer_id, body.customer_sig)
    sent = None
    if body.transaction_data is not None:
        sent = transaction_data.for_open(who, body.verification_id, body.transaction_data)
        if rules.id is not None:
            transaction_data.require_same(rules.transaction_data, sent)
    if rules.id is not None:  # a retry, the common case: one read
        return json_response(opened_answer(rules, who), 200)
    individual, created = individuals.open_individual(
        body.verification_id, body.customer_id, who, sent
    )
    if not created and sent is not None:
        transaction_data.require_same(individual.transaction_data, sent)
    return json_response(opened_answer(individual, who), 201 if created else 200)


def opened_answer(individual, who: individuals.Opener) -> dict:
    """Verity's answer to an open, with Socious Verify's fields when the organization's own
    integration key opened it and the organization asked for them (never to anyone else)."""
    answer = render.opened_individual(individual, links())
    organization_id = who.organization_id if who.kind == BACKEND else None
    return compat.with_socious_verify_fields(answer, individual, organization_id)


@bp.get("/verifications/<individual_id>/connect")
@documented(
    "Connection link for the person: the same link for 2 minutes, then a new one",
    responses={200: IndividualOut},
    tags=("individuals",),
)
def connect(individual_id: str):
    """Returns the individual with ``connection_url`` set."""
    config = current_app.config
    individual = presentations.connect_individual(
        parse_id(individual_id),
        config["CONNECT_LINK_SECONDS"],
        config["PRESENTATION_REQUEST_SECONDS"],
        # A new link's status change reads the verification (its webhook event): joined.
        load=(joinedload(Individual.verification),),
    )
    body = render.individual(individual, links())
    if individual.verification.protocols() != [OPENID4VP] and individual.connection_request_id:
        # More than OpenID4VP offered: each protocol's link, by name (the first is also
        # connection_url).
        body["connection_urls"] = dict(links().connection_urls(individual.connection_request_id))
    return json_response(body)


@bp.get("/verifications/<individual_id>/verify")
@read_only
@documented(
    "Status of an individual; a failed presentation is 200 with status FAILED",
    responses={200: IndividualOut},
    tags=("individuals",),
)
def verify(individual_id: str):
    """The status and reason only; the decision itself comes from the authenticated lookup."""
    return json_response(
        render.individual(individuals.individual_row(parse_id(individual_id)), links())
    )


@bp.route("/oid4vp/requests/<request_id>", methods=["GET", "POST"])
@read_only
def request_object(request_id: str):
    """The Request Object a wallet fetches by reference: signed when a certificate is set;
    a POST (``request_uri_method=post``) fits it to the wallet's metadata and nonce."""
    authorization = links().authorization_request(
        *presentations.verification_of(parse_id(request_id))
    )
    if request.method == "POST":
        authorization = for_posting_wallet(authorization)
    return (
        authorization.request_object(),
        200,
        {
            "Content-Type": "application/oauth-authz-req+jwt",
            "Cache-Control": "no-store",
        },
    )


def for_posting_wallet(authorization: AuthorizationRequest) -> AuthorizationRequest:
    """OpenID4VP 1.0 §5.10: ``wallet_metadata`` and ``wallet_nonce``, form-encoded.

    Only signed requests are fetched so (the answer to a POST is a signed Request Object);
    what the wallet cannot take is refused with the OAuth error code as ``code``.
    """
    if not authorization.client.signed:
        raise InvalidRequest(
            "This deployment's requests are unsigned and fetched with GET; "
            "request_uri_method=post answers with signed requests only",
            code="INVALID_REQUEST_URI_METHOD",
        )
    try:
        nonce = wallet_metadata.read_wallet_nonce(request.form.get("wallet_nonce"))
        metadata = wallet_metadata.read_wallet_metadata(request.form.get("wallet_metadata"))
        return wallet_metadata.honour(authorization, metadata).with_wallet_nonce(nonce)
    except wallet_metadata.WalletMetadataError as exc:
        raise InvalidRequest(exc.reason, code=exc.error.upper()) from None
