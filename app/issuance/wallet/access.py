"""Step one of the Credential Endpoint (OpenID4VCI 1.0 §8): the access token in the
Authorization header, Bearer (RFC 6750 §2.1) or DPoP-bound with its proof (RFC 9449 §7)."""

from __future__ import annotations

from sqlalchemy import select

from app import clock
from app.extensions import db
from app.issuance import dpop, settings
from app.issuance.links import IssuerLinks
from app.issuance.models import AccessToken
from app.oid4vci.dpop import DpopError
from app.oid4vci.errors import InvalidDpopProof, InvalidToken, UseDpopNonce
from app.oid4vci.metadata import credential_endpoint
from app.organizations.models import Organization
from app.tokens import hash_secret


def checked_token(
    organization: Organization,
    authorization: tuple[str, str | None],
    dpop_proof: str | None,
    links: IssuerLinks,
) -> AccessToken:
    """RFC 6750 §2.1 Bearer, or RFC 9449 §7 DPoP: a token bound to a key is accepted only
    with the DPoP scheme and a proof made with that key for this request and this token."""
    scheme, value = authorization
    if not value:
        error = InvalidToken("An access token is required in the Authorization header")
        if settings.current().dpop_required:
            error.scheme = "DPoP"
        raise error
    token = db.session.scalar(
        select(AccessToken).where(AccessToken.token_hash == hash_secret(value))
    )
    if token is None or token.expires_at <= clock.now():
        raise _invalid_token("The access token is unknown or expired", scheme)
    if token.credential.organization_id != organization.id:
        raise _invalid_token("The access token was not issued by this credential issuer", scheme)
    if token.dpop_jkt is None:
        if scheme != "bearer":
            raise _invalid_token("This access token is a Bearer token", scheme)
        return token
    if scheme != "dpop":
        raise _invalid_token("This access token is DPoP-bound: use the DPoP scheme", "dpop")
    if dpop_proof is None:
        raise InvalidDpopProof("A DPoP proof is required with a DPoP-bound access token")
    try:
        proof = dpop.check_proof(
            dpop_proof,
            method="POST",
            url=credential_endpoint(links.issuer(organization.id)),
            access_token=value,
        )
    except DpopError as exc:
        raise (UseDpopNonce if exc.error == "use_dpop_nonce" else InvalidDpopProof)(
            exc.description
        ) from exc
    if proof is None or proof.jkt != token.dpop_jkt:
        raise InvalidDpopProof("The DPoP proof is made with another key than the token's")
    return token


def _invalid_token(description: str, scheme: str) -> InvalidToken:
    error = InvalidToken(description)
    if scheme == "dpop":
        error.scheme = "DPoP"
    return error
