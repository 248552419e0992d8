"""One OpenID4VCI 1.0 credential issuer per organization, at ``<PUBLIC_URL>/issuers/<org_id>``.

The metadata documents (path-inserted well-knowns, OpenID4VCI 1.0 §12.2.2, RFC 8414 §3, SD-JWT
VC §5), the Credential Offer by reference, the Pushed Authorization Request, Token, Nonce and
Credential Endpoints and the Token Status Lists (the authorization endpoint is a page:
``app.pages.authorize``). Every answer of the POST endpoints carries a fresh ``DPoP-Nonce``
(RFC 9449 §8), so a wallet always has one to put in its next proof. Errors here speak the wallet's protocol, not the API's: ``{"error",
"error_description"}`` with the codes of RFC 6749 §5.2 (token endpoint), RFC 6750 §3.1 and
OpenID4VCI 1.0 §8.3.1 (credential endpoint). An unknown issuer or offer is a 404 of that
shape; an unknown route stays the API's 404.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask_limiter.errors import RateLimitExceeded

from app import mail
from app.api.common import base_url, documented
from app.database import read_only
from app.extensions import db
from app.issuance import authorization, dpop, prism_issuer
from app.issuance.links import IssuerLinks
from app.issuance.wallet.credential import issue_to_wallet
from app.issuance.wallet.metadata import (
    issuer_metadata,
    issuer_organization,
    oauth_metadata,
    offer_document,
    sd_jwt_vc_metadata,
)
from app.issuance.wallet.proofs import new_nonce
from app.issuance.wallet.status_lists import (
    iaca_certificate,
    status_list_credential,
    status_list_cwt,
    status_list_token,
)
from app.issuance.wallet.token import exchange_code, par_dpop_key, token_dpop_key
from app.oid4vci.errors import CredentialError, TokenError
from app.oid4vci.request import AuthorizationCodeRequest, parse_token_request
from app.oid4vci.statuslist import STATUS_LIST_CWT_TYPE, STATUS_LIST_TYP
from app.organizations.models import Organization
from app.schemas import operations as schemas
from app.schemas import type_metadata as types
from app.verifier_identity import operations as verifier_identity

bp = Blueprint("issuer", __name__)

NO_STORE = {"Cache-Control": "no-store"}
# Seconds a StatusList2021 list may be reused: Identus verifiers fetch it for every check.
CREDENTIAL_STATUS_MAX_AGE = 60
DPOP_ENDPOINTS = frozenset({"issuer.par", "issuer.token", "issuer.nonce", "issuer.credential"})


@bp.after_request
def _dpop_nonce(response: Response) -> Response:
    """RFC 9449 §8.2: a new nonce may come with any response; browsers' wallets read it."""
    if request.endpoint in DPOP_ENDPOINTS:
        response.headers["DPoP-Nonce"] = dpop.fresh_nonce()
        response.headers["Access-Control-Expose-Headers"] = "DPoP-Nonce, WWW-Authenticate"
    return response


class _Missing(Exception):
    """An unknown issuer, offer or status list: 404 in the protocol's error shape."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


@bp.errorhandler(_Missing)
def _missing(exc: _Missing) -> Response:
    return _error({"error": "not_found", "error_description": exc.description}, 404)


@bp.errorhandler(RateLimitExceeded)
def _too_many(exc: RateLimitExceeded) -> Response:
    """429 in the wallet's error shape; the limiter adds ``Retry-After`` (seconds) afterwards.
    RFC 6749 registers no code for it: ``rate_limited``, the API's ``RATE_LIMITED`` in the
    protocol's lower case."""
    return _error(
        {
            "error": "rate_limited",
            "error_description": f"Too many requests from this address ({exc.limit.limit}); "
            "retry after the Retry-After seconds",
        },
        429,
    )


@bp.errorhandler(CredentialError)
def _credential_error(exc: CredentialError) -> Response:
    """§8.3.1: nothing of a refused request is kept (its status rolls it back at the boundary)."""
    response = _error(exc.body(), exc.status)
    if exc.status == 401:
        # RFC 6750 §3 and RFC 9449 §7.1: the scheme and the error in WWW-Authenticate.
        response.headers["WWW-Authenticate"] = _challenge(exc.scheme, exc.error)
    return response


def _challenge(scheme: str, error: str) -> str:
    if scheme == "DPoP":
        return f'DPoP error="{error}", algs="ES256"'
    return f'Bearer error="{error}"'


def _error(body: dict[str, Any], status: int) -> Response:
    response = jsonify(body)
    response.status_code = status
    response.headers.update(NO_STORE)
    return response


def _links() -> IssuerLinks:
    return IssuerLinks(base_url())


def _issuer(org_id: str) -> Organization:
    organization = issuer_organization(org_id)
    if organization is None:
        raise _Missing("No such credential issuer")
    return organization


def _document(body: dict[str, Any]) -> Response:
    """Public metadata: any origin may read it (browser wallets and verifiers)."""
    response = jsonify(body)
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


# -- metadata ---------------------------------------------------------------------------------


@bp.get("/.well-known/openid-credential-issuer/issuers/<org_id>")
@read_only
@documented(
    "OpenID4VCI 1.0 Credential Issuer Metadata of an organization (one configuration per "
    "published schema)",
    tags=("issuer",),
)
def credential_issuer_metadata(org_id: str) -> Response:
    """§12.2.2: the well-known segment inserted between host and path."""
    return _document(_issuer_metadata(org_id))


def _issuer_metadata(org_id: str) -> dict[str, Any]:
    """The issuer is shown with the logo its organization's verifier profile gives (the one
    logo an organization keeps)."""
    organization = _issuer(org_id)
    logo_uri = verifier_identity.logo_uri_of(organization.id)
    return issuer_metadata(organization, _links(), logo_uri)


@bp.get("/issuers/<org_id>/.well-known/openid-credential-issuer")
@read_only
@documented(
    "The same Credential Issuer Metadata at the address drafts 13 to 15 of OpenID4VCI used "
    "(the well-known segment appended to the issuer identifier)",
    tags=("issuer",),
)
def credential_issuer_metadata_draft(org_id: str) -> Response:
    """Draft 15 §11.2.2 appended the segment; wallets built to it look only there."""
    return _document(_issuer_metadata(org_id))


@bp.get("/.well-known/oauth-authorization-server/issuers/<org_id>")
@read_only
@documented(
    "OAuth 2.0 Authorization Server Metadata of an organization's issuer (pre-authorized "
    "code and authorization code grants, PAR, PKCE S256, DPoP)",
    tags=("issuer",),
)
def authorization_server_metadata(org_id: str) -> Response:
    """RFC 8414 §3: the issuer is its own authorization server."""
    return _document(oauth_metadata(_issuer(org_id), _links()))


@bp.get("/issuers/<org_id>/.well-known/oauth-authorization-server")
@read_only
@documented(
    "The same Authorization Server Metadata at the address wallets built to drafts 13 to 15 "
    "of OpenID4VCI look for (the well-known segment appended to the issuer identifier)",
    tags=("issuer",),
)
def authorization_server_metadata_draft(org_id: str) -> Response:
    """Draft-15 wallets (npm @sphereon/oid4vci-client 0.20) look only here."""
    return _document(oauth_metadata(_issuer(org_id), _links()))


@bp.get("/.well-known/jwt-vc-issuer/issuers/<org_id>")
@read_only
@documented(
    "SD-JWT VC Issuer Metadata with the issuer's JWKS (current key and retired keys still needed)",
    tags=("issuer",),
)
def jwt_vc_issuer_metadata(org_id: str) -> Response:
    """SD-JWT VC §5: how any verifier finds the keys of a credential's ``iss``. Read-only, so
    that our own verifier can fetch it on SQLite while its presentation transaction holds the
    write lock (no key is made here: the first credential makes it)."""
    return _document(sd_jwt_vc_metadata(_issuer(org_id), _links()))


@bp.get("/types/<path:name>")
@read_only
@documented(
    "SD-JWT VC Type Metadata (draft-ietf-oauth-sd-jwt-vc §6) of a published schema whose vct "
    "is this address: name, description, display (colours, logo) and claim labels. "
    "Credentials carry the SHA-256 of these exact bytes as vct#integrity",
    tags=("issuer",),
)
def type_metadata(name: str) -> Response:
    """Any origin may read it, like the issuer metadata."""
    schema = schemas.schema_of_type(types.type_url(base_url(), name))
    if schema is None:
        raise _Missing("No credential type is published at this address")
    response = Response(types.document_bytes(schema), mimetype="application/json")
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


# -- offer, token, nonce, credential ----------------------------------------------------------


@bp.get("/issuers/<org_id>/offers/<token>")
@read_only
@documented("The Credential Offer a wallet fetches by reference (§4.1.3)", tags=("issuer",))
def credential_offer(org_id: str, token: str) -> Response:
    """404 once the offer was taken, withdrawn, replaced or expired."""
    offer = offer_document(_issuer(org_id), token, _links())
    if offer is None:
        raise _Missing("No such credential offer, or it can no longer be taken")
    response = jsonify(offer)
    response.headers.update(NO_STORE)
    return response


@bp.post("/issuers/<org_id>/par")
@documented(
    "Pushed Authorization Request Endpoint (RFC 9126): the authorization request, form-encoded, "
    "with PKCE S256, issuer_state from the offer and scope or authorization_details; an "
    "optional DPoP proof binds the code to its key. 201 with request_uri and expires_in",
    responses={201: None},
    tags=("issuer",),
)
def par(org_id: str) -> Response:
    """A refusal is committed too: the DPoP proof it carried stays used."""
    organization = _issuer(org_id)
    try:
        jkt = par_dpop_key(organization, _links(), request.headers.get("DPoP"))
        pushed = authorization.push(organization, request.form, _links(), jkt, request.headers)
    except TokenError as exc:
        db.session.commit()
        return _error(exc.body(), exc.status)
    if pushed.mail_code is not None and pushed.credential is not None:
        recipient = pushed.credential.recipient
        mail.send_authorization_code(
            mail.AuthorizationCodeMail(
                to=recipient.email or "",
                recipient_name=f"{recipient.first_name} {recipient.last_name}".strip(),
                organization=organization.name,
                credential=pushed.credential.name,
                code=pushed.mail_code,
                minutes=max(1, pushed.expires_in // 60),
                reference=str(pushed.credential.id),
            )
        )
    response = jsonify({"request_uri": pushed.request_uri, "expires_in": pushed.expires_in})
    response.status_code = 201
    response.headers.update(NO_STORE)
    return response


@bp.post("/issuers/<org_id>/token")
@documented(
    "Token Endpoint: an authorization code (with its PKCE code_verifier and redirect_uri) or "
    "a pre-authorized code (and tx_code) for an access token, DPoP-bound when a DPoP proof "
    "is sent; form-encoded (RFC 6749 §4.1.3, RFC 9449 §5, OpenID4VCI 1.0 §6)",
    tags=("issuer",),
)
def token(org_id: str) -> Response:
    """A refusal is committed too: a wrong tx_code must count toward the five allowed, and
    a code used twice withdraws the token of its first use."""
    organization = _issuer(org_id)
    try:
        token_request = parse_token_request(request.form)
        jkt = token_dpop_key(organization, _links(), request.headers.get("DPoP"))
        issuer = _links().issuer(organization.id)
        if isinstance(token_request, AuthorizationCodeRequest):
            body = authorization.redeem(
                organization, request.form, token_request, jkt, request.headers, issuer
            )
        else:
            authorization.authenticate_client(
                organization, request.form, request.headers, issuer, client_id_required=False
            )
            body = exchange_code(organization, token_request, jkt)
    except TokenError as exc:
        db.session.commit()
        return _error(exc.body(), exc.status)
    response = jsonify(body)
    response.headers.update({**NO_STORE, "Pragma": "no-cache"})
    return response


@bp.post("/issuers/<org_id>/nonce")
@read_only
@documented(
    "Nonce Endpoint: a fresh single-use c_nonce (§7); throttled per client IP and issuer "
    "(429 with Retry-After)",
    responses={200: None, 429: None},
    tags=("issuer",),
)
def nonce(org_id: str) -> Response:
    """§7.2: the nonce must not be cached. Nothing is written: the nonce proves itself."""
    response = jsonify({"c_nonce": new_nonce(_issuer(org_id))})
    response.headers.update(NO_STORE)
    return response


@bp.post("/issuers/<org_id>/credential")
@documented(
    "Credential Endpoint: one credential per proof (a batch of up to ISSUER_BATCH_SIZE) in the "
    "configuration's format (SD-JWT VC, mdoc or VC-JWT), each bound to its proof's key (§8); "
    "the access token serves further requests until it expires; access token in the "
    "Authorization header only (Bearer, or DPoP with its proof in the DPoP header)",
    tags=("issuer",),
)
def credential(org_id: str) -> Response:
    """RFC 6750 §2.3 (token in the URI) is refused: URIs end up in logs and histories."""
    organization = _issuer(org_id)
    # Read before the form is looked at, which would consume a form-encoded body.
    body = request.get_data(cache=True)
    if "access_token" in request.args or "access_token" in request.form:
        response = _error(
            {
                "error": "invalid_request",
                "error_description": "Send the access token in the Authorization header only",
            },
            400,
        )
        response.headers["WWW-Authenticate"] = 'Bearer error="invalid_request"'
        return response
    signed = issue_to_wallet(
        organization, _authorization(), body, _links(), request.headers.get("DPoP")
    )
    response = jsonify({"credentials": [{"credential": credential} for credential in signed]})
    response.headers.update(NO_STORE)
    return response


def _authorization() -> tuple[str, str | None]:
    """The Authorization header's scheme (lower case) and token: RFC 6750 ``Bearer`` or
    RFC 9449 ``DPoP``; another scheme counts as no token."""
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    scheme = scheme.lower()
    if scheme not in ("bearer", "dpop"):
        return "bearer", None
    return scheme, value.strip() or None


# -- status lists -----------------------------------------------------------------------------


@bp.get("/issuers/<org_id>/status-lists/<int:number>")
@read_only
@documented(
    "A Token Status List of the issuer (application/statuslist+jwt, signed, with ttl and exp)",
    tags=("issuer",),
)
def status_list(org_id: str, number: int) -> Response:
    """Signed at each fetch and not cached by HTTP caches, so a revocation shows on the next
    fetch; verifiers cache it for ``ttl`` seconds at most. One URI, two forms (Token Status
    List §8.1): the CWT for a reader that prefers ``application/statuslist+cwt`` (mdoc), the
    JWT otherwise."""
    organization = _issuer(org_id)
    wants_cwt = request.accept_mimetypes.quality(
        STATUS_LIST_CWT_TYPE
    ) > request.accept_mimetypes.quality(f"application/{STATUS_LIST_TYP}")
    if wants_cwt:
        signed: str | bytes | None = status_list_cwt(organization, number, _links())
        mimetype = STATUS_LIST_CWT_TYPE
    else:
        signed = status_list_token(organization, number, _links())
        mimetype = f"application/{STATUS_LIST_TYP}"
    if signed is None:
        raise _Missing("No such status list")
    response = Response(signed, mimetype=mimetype)
    response.headers["Vary"] = "Accept"
    response.headers["Cache-Control"] = "no-cache"
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


@bp.get("/issuers/<org_id>/status-lists/<int:number>/bitstring")
@read_only
@documented(
    "The same status list as a W3C BitstringStatusListCredential (a VC-JWT, revocation), "
    "for the issuer's jwt_vc_json credentials",
    tags=("issuer",),
)
def bitstring_status_list(org_id: str, number: int) -> Response:
    """Signed at each fetch, like the Token Status List it mirrors."""
    signed = status_list_credential(_issuer(org_id), number, _links())
    if signed is None:
        raise _Missing("No such status list")
    response = Response(signed, mimetype="application/vc+jwt")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


@bp.get("/issuers/<org_id>/credential-status/<int:number>")
@read_only
@documented(
    "The same status list as a StatusList2021Credential (JSON-LD, EcdsaSecp256k1Signature2019 "
    "by the issuer's did:prism), for the credentials it issued over DIDComm",
    tags=("issuer",),
)
def credential_status_list(org_id: str, number: int) -> Response:
    """Signed at each fetch; HTTP caches keep it a minute at most."""
    document = prism_issuer.status_list_document(_issuer(org_id).id, number, _links())
    if document is None:
        raise _Missing("No such status list")
    response = jsonify(document)
    response.headers["Cache-Control"] = f"public, max-age={CREDENTIAL_STATUS_MAX_AGE}"
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


@bp.get("/issuers/<org_id>/iaca")
@documented(
    "The issuer's IACA root certificate (PEM, ISO/IEC 18013-5 Annex B): the trust anchor of "
    "its mdoc credentials and CWT status lists, made on first use, or the organization's own "
    "once staff uploaded its chain (PUT /issuer/mdoc-signer)",
    tags=("issuer",),
)
def iaca(org_id: str) -> Response:
    """Public like the JWKS: a verifier trusts the organization's mdocs by this root."""
    pem = iaca_certificate(_issuer(org_id), _links())
    response = Response(pem, mimetype="application/x-pem-file")
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response
