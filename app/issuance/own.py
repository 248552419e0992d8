"""What verifying this deployment's own credentials reads: each organization's issuer keys and
status list entries, from the database as they are now (see ``app.trust.own``).

Reads only, like the metadata and status list endpoints they stand in for: a presentation is
decided inside a request whose transaction must not take a write lock here.
"""

from __future__ import annotations

import uuid
from typing import Any

from cryptography import x509
from sqlalchemy import exists, select

from app.extensions import db
from app.issuance import certificates, keys, settings
from app.issuance.mdoc_signer import existing_signer
from app.issuance.models import Credential, CredentialCopy, CredentialStatus, PrismIssuer
from app.organizations.models import Organization
from app.statuslist import INVALID, VALID
from app.trust import OwnIssuers


def own_issuers(base_url: str) -> OwnIssuers:
    """The issuers of this deployment as reached at ``base_url``, read from the database."""
    return OwnIssuers(
        base_url,
        published_keys,
        status_entry,
        read_mdoc_signer=mdoc_signer_certificate,
        read_roots=issuer_roots,
        read_prism_did=prism_did,
    )


def mdoc_signer_certificate(organization_id: uuid.UUID) -> bytes | None:
    """The organization's document signer certificate (DER); None before its first mdoc."""
    signer = existing_signer(organization_id)
    return signer.document_signer_certificate if signer is not None else None


def published_keys(organization_id: uuid.UUID) -> list[dict[str, Any]] | None:
    """The JWKs the organization's jwt-vc-issuer metadata lists; None for no organization."""
    if not db.session.scalar(select(exists().where(Organization.id == organization_id))):
        return None
    return keys.published_keys(organization_id)


def prism_did(organization_id: uuid.UUID) -> str | None:
    """The organization's did:prism issuer (long form); None before it was made."""
    return db.session.scalar(
        select(PrismIssuer.did).where(PrismIssuer.organization_id == organization_id)
    )


def issuer_roots(organization_id: uuid.UUID) -> list[x509.Certificate]:
    """The organization's issuer roots, current and replaced (``app.issuance.certificates``)."""
    return certificates.roots(organization_id)


def status_entry(organization_id: uuid.UUID, number: int, idx: int) -> int | None:
    """Entry ``idx`` of the organization's status list ``number`` as the signed list would
    carry it now (revoked: INVALID); None for a list never started or an index outside it."""
    if not 0 <= idx < settings.STATUS_LIST_SIZE or not list_started(organization_id, number):
        return None
    revoked = db.session.scalar(
        select(
            exists().where(
                CredentialCopy.organization_id == organization_id,
                CredentialCopy.status_list == number,
                CredentialCopy.status_index == idx,
                CredentialCopy.credential_id == Credential.id,
                Credential.recorded_status == CredentialStatus.REVOKED,
            )
        )
    )
    return INVALID if revoked else VALID


def list_started(organization_id: uuid.UUID, number: int) -> bool:
    """List 0 is every organization's first; a later one exists once a copy has an entry
    in it."""
    if number == 0:
        return True
    return bool(
        db.session.scalar(
            select(
                exists().where(
                    CredentialCopy.organization_id == organization_id,
                    CredentialCopy.status_list == number,
                )
            )
        )
    )


def revoked_indices(organization_id: uuid.UUID, number: int) -> list[int]:
    """The revoked bits of list ``number``: every copy of a revoked credential, since a batch
    is revoked as a whole. Every form of a list (JWT, CWT, Bitstring, StatusList2021) reads
    them here."""
    return list(
        db.session.scalars(
            select(CredentialCopy.status_index)
            .join(Credential, Credential.id == CredentialCopy.credential_id)
            .where(
                CredentialCopy.organization_id == organization_id,
                CredentialCopy.status_list == number,
                Credential.recorded_status == CredentialStatus.REVOKED,
            )
        )
    )
