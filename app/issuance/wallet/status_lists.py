"""The status lists the issuer serves (Token Status List as JWT and CWT, Bitstring Status
List credential for VC-JWTs) and the IACA certificate mdoc verifiers anchor to; signed on every
fetch, so a revocation shows at once."""

from __future__ import annotations

from dataclasses import dataclass

from app import clock
from app.issuance import certificates, keys, mdoc_signer, settings
from app.issuance.links import IssuerLinks
from app.issuance.own import list_started, revoked_indices
from app.issuance.wallet.signing import BITSTRING_SUFFIX
from app.mdoc.status_list import sign_status_list_cwt
from app.oid4vci.statuslist import sign_status_list
from app.organizations.models import Organization
from app.vcjwt.issuing import sign_bitstring_status_list


def status_list_token(organization: Organization, number: int, links: IssuerLinks) -> str | None:
    """The signed Token Status List ``number`` (its revoked bits as of now); None for a list
    that was never started. Signed on every fetch, so a revocation shows at once."""
    # Read-only (see keys.published_keys): without a key no credential was signed yet.
    key = keys.existing_key(organization.id)
    moment = _list_now(organization, number, key)
    if key is None or moment is None:
        return None
    issuer = links.issuer(organization.id)
    return sign_status_list(
        private_key=keys.private_key(key),
        kid=key.kid,
        x5c=certificates.stored_x5c(key, issuer),
        uri=links.status_list_uri(organization.id, number),
        revoked=moment.revoked,
        size=settings.STATUS_LIST_SIZE,
        issued_at=moment.issued_at,
        ttl=moment.ttl,
        expires_at=moment.expires_at,
        issuer=issuer,
    )


def status_list_cwt(organization: Organization, number: int, links: IssuerLinks) -> bytes | None:
    """The same list as ``status_list_token``, in its CWT form (Token Status List §5.2) for
    mdoc readers, signed by the organization's document signer; None for a list never started
    or an organization that never issued an mdoc (it has no document signer to sign with)."""
    signer = mdoc_signer.existing_signer(organization.id)
    moment = _list_now(organization, number, signer)
    if signer is None or moment is None:
        return None
    return sign_status_list_cwt(
        private_key=mdoc_signer.signing_key(signer),
        certificate_der=signer.document_signer_certificate,
        uri=links.status_list_uri(organization.id, number),
        revoked=moment.revoked,
        size=settings.STATUS_LIST_SIZE,
        issued_at=moment.issued_at,
        ttl=moment.ttl,
        expires_at=moment.expires_at,
    )


def iaca_certificate(organization: Organization, links: IssuerLinks) -> str:
    """The PEM of the organization's IACA root, made (with its document signer) on first use,
    so staff can give it to verifiers before the first mdoc is issued."""
    return mdoc_signer.iaca_pem(
        mdoc_signer.current_signer(organization, links.issuer(organization.id))
    )


def status_list_credential(
    organization: Organization, number: int, links: IssuerLinks
) -> str | None:
    """The same list as a ``BitstringStatusListCredential`` for W3C credentials, signed by
    the issuer key; None for a list never started or before the first key."""
    key = keys.existing_key(organization.id)
    moment = _list_now(organization, number, key)
    if key is None or moment is None:
        return None
    return sign_bitstring_status_list(
        private_key=keys.private_key(key),
        kid=key.kid,
        issuer=links.issuer(organization.id),
        uri=links.status_list_uri(organization.id, number) + BITSTRING_SUFFIX,
        revoked=moment.revoked,
        size=settings.STATUS_LIST_SIZE,
        issued_at=moment.issued_at,
        ttl_seconds=moment.ttl,
        expires_at=moment.expires_at,
    )


@dataclass(frozen=True)
class _ListNow:
    """What every form of a status list says when it is signed: its revoked bits, the moment
    (seconds), how long a reader may cache it and when it expires."""

    revoked: list[int]
    issued_at: int
    ttl: int
    expires_at: int


def _list_now(organization: Organization, number: int, signer: object | None) -> _ListNow | None:
    """List ``number`` as of now, for any of its three forms; None without the key that signs
    that form (``signer``) or for a list never started."""
    if signer is None or not list_started(organization.id, number):
        return None
    current = settings.current()
    now = int(clock.now().timestamp())
    return _ListNow(
        revoked=revoked_indices(organization.id, number),
        issued_at=now,
        ttl=current.status_list_ttl,
        expires_at=now + current.status_list_valid_seconds,
    )
