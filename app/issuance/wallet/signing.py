"""The issuance step of the Credential Endpoint: each copy signed in the schema's format
(SD-JWT VC, ISO mdoc or VC-JWT; ``SIGNERS``), bound to the holder's key and carrying its own
status list entry."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.issuance import certificates, keys, mdoc_signer
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialCopy
from app.issuance.operations import claims_of
from app.mdoc.issuing import issue_mdoc
from app.oid4vci.credential import sign_sd_jwt_vc
from app.oid4vci.errors import CredentialRequestDenied
from app.oid4vci.keys import jwk_thumbprint
from app.oid4vp.formats import JWT_VC_JSON, MSO_MDOC, SD_JWT_VC
from app.organizations.models import Organization
from app.schemas import type_metadata
from app.schemas.models import Schema
from app.vcjwt.issuing import sign_vc_jwt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CopyToSign:
    """What every format's signer reads: the copy, whose claims and status entry it carries,
    the holder key it is bound to, and the validity ``sign_copy`` settled on."""

    organization: Organization
    credential: Credential
    copy: CredentialCopy
    holder_jwk: dict[str, Any]
    links: IssuerLinks
    now: datetime
    expires: datetime | None


def sign_copy(
    organization: Organization,
    credential: Credential,
    copy: CredentialCopy,
    holder_jwk: dict[str, Any],
    links: IssuerLinks,
    now: datetime,
) -> str:
    """One copy in the schema's format: the credential's claims with fresh salts, bound to
    ``holder_jwk``, carrying the copy's status list entry."""
    validity = credential.schema.validity_days
    # The schema's validity counts from the signature; the JWKS keeps the signing key as long
    # as the last copy is valid. ISO/IEC 18013-5 has no open-ended MSO, so an mdoc without
    # validity_days is valid for MDOC_DEFAULT_DAYS.
    expires = now + timedelta(days=validity) if validity else None
    if expires is None and credential.schema.format == MSO_MDOC:
        expires = now + timedelta(days=MDOC_DEFAULT_DAYS)
    job = CopyToSign(organization, credential, copy, holder_jwk, links, now, expires)
    signing_key_id, signed = SIGNERS.get(credential.schema.format, _sign_sd_jwt_vc)(job)
    copy.issued_at = now
    copy.holder_key_thumbprint = jwk_thumbprint(holder_jwk)
    if copy.number == 0:
        credential.issued_at = now
        credential.signing_key_id = signing_key_id
        credential.holder_key_thumbprint = copy.holder_key_thumbprint
    credential.expires_at = expires
    return signed


def _sign_sd_jwt_vc(job: CopyToSign) -> tuple[uuid.UUID | None, str]:
    organization, credential, links = job.organization, job.credential, job.links
    key = keys.current_key(organization.id)
    issuer = links.issuer(organization.id)
    return key.id, sign_sd_jwt_vc(
        private_key=keys.private_key(key),
        kid=key.kid,
        x5c=certificates.x5c_for_signing(key, organization, issuer),
        vct_integrity=_vct_integrity(credential, links),
        issuer=issuer,
        vct=credential.vct,
        claims=claims_of(credential),
        holder_jwk=job.holder_jwk,
        status_uri=links.status_list_uri(organization.id, job.copy.status_list),
        status_idx=job.copy.status_index,
        issued_at=int(job.now.timestamp()),
        expires_at=int(job.expires.timestamp()) if job.expires else None,
    )


def _sign_mdoc(job: CopyToSign) -> tuple[uuid.UUID | None, str]:
    """Signed by the organization's document signer; the status entry names the CWT form of
    the same list."""
    organization, credential, links, now = job.organization, job.credential, job.links, job.now
    schema = credential.schema
    signer = mdoc_signer.renewed_signer(organization, links.issuer(organization.id), now)
    problem = mdoc_signer.validity_problem(signer, now)
    if problem is not None:
        # No verifier would accept the mdoc: refused, and said to staff in the log (the
        # dashboard's mdoc signer page shows it too); the wallet is told only that it failed.
        log.warning("mdoc issuance refused for organization %s: %s", organization.id, problem)
        raise CredentialRequestDenied(
            "The issuer cannot sign this mdoc now: its document signer certificate is not valid"
        )
    uri = links.status_list_uri(organization.id, job.copy.status_list)
    return None, issue_mdoc(
        private_key=mdoc_signer.signing_key(signer),
        certificate=mdoc_signer.certificate(signer),
        doctype=schema.doctype or "",
        namespaces=_by_namespace(schema, claims_of(credential)),
        device_jwk=job.holder_jwk,
        signed=now,
        valid_until=job.expires or now + timedelta(days=MDOC_DEFAULT_DAYS),
        status={"status_list": {"idx": job.copy.status_index, "uri": uri}},
    )


def _by_namespace(schema: Schema, claims: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The claims as mdoc elements: each in its attribute's namespace, else the schema's."""
    namespace_of = {a["name"]: a.get("namespace") or schema.namespace for a in schema.attributes}
    elements: dict[str, dict[str, Any]] = {}
    for name, value in claims.items():
        elements.setdefault(namespace_of.get(name) or schema.namespace or "", {})[name] = value
    return elements


def _sign_vc_jwt(job: CopyToSign) -> tuple[uuid.UUID | None, str]:
    organization, credential, copy = job.organization, job.credential, job.copy
    key = keys.current_key(organization.id)
    return key.id, sign_vc_jwt(
        private_key=keys.private_key(key),
        kid=key.kid,
        issuer=job.links.issuer(organization.id),
        credential_id=f"urn:uuid:{credential.id}" + (f"#{copy.number}" if copy.number else ""),
        types=list(credential.schema.types or ()),
        claims=claims_of(credential),
        holder_jwk=job.holder_jwk,
        issued_at=int(job.now.timestamp()),
        expires_at=int(job.expires.timestamp()) if job.expires else None,
        status_list_credential=job.links.status_list_uri(organization.id, copy.status_list)
        + BITSTRING_SUFFIX,
        status_idx=copy.status_index,
    )


MDOC_DEFAULT_DAYS = 365
# Each status list is served as a Bitstring Status List credential too, for VC-JWTs.
BITSTRING_SUFFIX = "/bitstring"
SIGNERS = {SD_JWT_VC: _sign_sd_jwt_vc, MSO_MDOC: _sign_mdoc, JWT_VC_JSON: _sign_vc_jwt}


def _vct_integrity(credential: Credential, links: IssuerLinks) -> str | None:
    """SD-JWT VC §6.5: the hash of the type metadata this deployment serves at the
    credential's ``vct``; None for a ``vct`` served elsewhere (a wallet fetches it there)."""
    schema = credential.schema
    if schema.vct != credential.vct or not type_metadata.served_here(schema, links.base_url):
        return None
    return type_metadata.integrity(type_metadata.document_bytes(schema))
