"""Each organization's mdoc signing certificates: an IACA root and a document signer it
certified (``app.mdoc.certificates``), made on first use. Both private keys are made and kept
like issuer keys (``keys.make_private_key``: sealed, or in the PKCS#11 token). The IACA is
what verifiers trust; staff download it from the issuer's ``/iaca`` path.

An organization with an IACA of its own replaces both certificates: staff take a signing
request for the document signer key held here, and upload the chain their IACA returns.

A document signer certificate lives 457 days, the generated IACA 9 years. Past its end the
generated document signer is certified anew by the generated IACA, for the same key, when next
needed (``renewed_signer``); an uploaded one cannot be (its IACA is elsewhere), so mdoc
issuance stops (``validity_problem``) until staff upload a new chain.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.errors import InvalidRequest
from app.extensions import db
from app.issuance import keys, settings
from app.issuance.models import MdocSigner
from app.mdoc.certificates import (
    DocumentSignerChainError,
    document_signer_certificate,
    iaca_certificate,
    read_uploaded_chain,
)
from app.mdoc.certificates import signing_request as signing_request_pem
from app.organizations.models import Membership, Organization
from app.organizations.operations import require_manager


def current_signer(organization: Organization, url: str) -> MdocSigner:
    """The organization's signer, made on first use; two first uses at once meet at the
    unique organization and the loser reads the winner's. ``url`` is the issuer's identifier,
    named in the certificates."""
    signer = existing_signer(organization.id)
    if signer is not None:
        return signer
    try:
        with db.session.begin_nested():
            signer = _new_signer(organization, url)
    except IntegrityError:
        signer = existing_signer(organization.id)
        if signer is None:
            raise
    return signer


def existing_signer(organization_id: Any) -> MdocSigner | None:
    """Read only: None before the organization's first mdoc."""
    return db.session.scalar(
        select(MdocSigner).where(MdocSigner.organization_id == organization_id)
    )


def _new_signer(organization: Organization, url: str) -> MdocSigner:
    now = clock.now()
    country = settings.current().country
    iaca_key, iaca_stored = keys.make_private_key("iaca")
    iaca = iaca_certificate(
        iaca_key, organization=organization.name, country=country, url=url, now=now
    )
    signer_key, signer_stored = keys.make_private_key("mdoc-ds")
    certificate = document_signer_certificate(
        iaca_key,
        iaca,
        signer_key.public_key(),
        organization=organization.name,
        country=country,
        url=url,
        now=now,
    )
    signer = MdocSigner(
        organization_id=organization.id,
        iaca_certificate=iaca.public_bytes(Encoding.DER),
        iaca_sealed_private_key=iaca_stored.get("sealed_private_key"),
        iaca_token_key_label=iaca_stored.get("token_key_label"),
        document_signer_certificate=certificate.public_bytes(Encoding.DER),
        created_at=now,
        **signer_stored,
    )
    db.session.add(signer)
    db.session.flush()
    return signer


def renewed_signer(organization: Organization, url: str, now: datetime) -> MdocSigner:
    """The organization's signer (made on first use), its generated document signer
    certificate made again under the generated IACA when it is no longer valid at ``now``:
    the same key, so status lists and mdocs already issued keep matching it. An uploaded
    certificate is left as it is (``validity_problem`` says so)."""
    signer = current_signer(organization, url)
    if uploaded(signer) or _valid_at(certificate(signer), now):
        return signer
    iaca = x509.load_der_x509_certificate(signer.iaca_certificate)
    if not _valid_at(iaca, now):
        return signer  # a certificate under an expired IACA would not be valid either
    iaca_key = keys.open_stored_key(
        "the mdoc IACA key", signer.iaca_token_key_label, signer.iaca_sealed_private_key
    )
    renewed = document_signer_certificate(
        iaca_key,
        iaca,
        signing_key(signer).public_key(),
        organization=organization.name,
        country=settings.current().country,
        url=url,
        now=now,
    )
    signer.document_signer_certificate = renewed.public_bytes(Encoding.DER)
    db.session.flush()
    return signer


def validity_problem(signer: MdocSigner, now: datetime) -> str | None:
    """Why mdocs signed now would not verify anywhere: the document signer certificate or
    its IACA outside its validity at ``now`` (an mdoc reader checks both); None when both
    hold. Says what staff can do about it."""
    for role, cert in (
        ("document signer", certificate(signer)),
        ("IACA", x509.load_der_x509_certificate(signer.iaca_certificate)),
    ):
        if not _valid_at(cert, now):
            state = "not yet valid" if now < cert.not_valid_before_utc else "expired"
            return (
                f"The mdoc {role} certificate ({cert.subject.rfc4514_string()}) is {state}: "
                f"valid from {cert.not_valid_before_utc:%Y-%m-%d %H:%M} to "
                f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC; upload a chain from the "
                "organization's IACA for the document signer key (GET "
                "/issuer/mdoc-signer/signing-request, PUT /issuer/mdoc-signer)"
            )
    return None


def _valid_at(cert: x509.Certificate, now: datetime) -> bool:
    return cert.not_valid_before_utc <= now <= cert.not_valid_after_utc


def signing_key(signer: MdocSigner) -> ec.EllipticCurvePrivateKey:
    return keys.open_stored_key(
        "the mdoc document signer key", signer.token_key_label, signer.sealed_private_key
    )


def certificate(signer: MdocSigner) -> x509.Certificate:
    return x509.load_der_x509_certificate(signer.document_signer_certificate)


def iaca_pem(signer: MdocSigner) -> str:
    iaca = x509.load_der_x509_certificate(signer.iaca_certificate)
    return iaca.public_bytes(Encoding.PEM).decode("ascii")


# -- the organization's own IACA ---------------------------------------------------------------


def uploaded(signer: MdocSigner) -> bool:
    """Whether the IACA is the organization's own: this service then holds no IACA key."""
    return signer.iaca_sealed_private_key is None and signer.iaca_token_key_label is None


def signing_request(member: Membership, url: str) -> str:
    """A PKCS#10 request (PEM) for the document signer key this service holds (made, with
    the generated IACA, on first use): the organization's IACA signs it, and the key never
    leaves the service. The same key each time, so a request made earlier stays good."""
    require_manager(member)
    signer = current_signer(member.organization, url)
    return signing_request_pem(
        signing_key(signer),
        organization=member.organization.name,
        country=settings.current().country,
    ).decode("ascii")


def upload_chain(member: Membership, chain_pem: str, url: str) -> MdocSigner:
    """The chain the organization's IACA returned for the signing request (document signer
    first, IACA last): mdocs carry its document signer from now on, and ``/iaca`` serves its
    IACA. The generated IACA's sealed key is dropped (a token key stays in the token): nothing
    is signed with it again, and mdocs issued before keep verifying against its certificate."""
    require_manager(member)
    signer = current_signer(member.organization, url)
    public = signing_key(signer).public_key()
    try:
        document_signer, iaca = read_uploaded_chain(chain_pem, public, clock.now())
    except DocumentSignerChainError as exc:
        raise InvalidRequest(str(exc), code="INVALID_CERTIFICATE_CHAIN") from None
    signer.document_signer_certificate = document_signer.public_bytes(Encoding.DER)
    signer.iaca_certificate = iaca.public_bytes(Encoding.DER)
    signer.iaca_sealed_private_key = None
    signer.iaca_token_key_label = None
    db.session.flush()
    return signer


def describe(member: Membership, url: str) -> dict[str, Any]:
    """What staff see: the IACA verifiers trust, the document signer mdocs carry, whether
    the IACA is the organization's own, and whether mdocs can be signed now (``problem``
    says why not). Made on first use, like ``/iaca``; a generated document signer past its
    end is renewed here as at issuance."""
    now = clock.now()
    signer = renewed_signer(member.organization, url, now)
    document_signer = certificate(signer)
    problem = validity_problem(signer, now)
    return {
        "iaca_pem": iaca_pem(signer),
        "document_signer_pem": document_signer.public_bytes(Encoding.PEM).decode("ascii"),
        "document_signer_subject": document_signer.subject.rfc4514_string(),
        "document_signer_not_before": document_signer.not_valid_before_utc.isoformat(),
        "document_signer_not_after": document_signer.not_valid_after_utc.isoformat(),
        "iaca_not_after": x509.load_der_x509_certificate(
            signer.iaca_certificate
        ).not_valid_after_utc.isoformat(),
        "valid_now": problem is None,
        "problem": problem,
        "uploaded": uploaded(signer),
    }
