"""An organization's registration certificates (ETSI TS 119 475): uploaded and checked, one
per intended use, and the rule that no verification asks for more than its certificate
permits.

A certificate is checked once, at upload, against the registrars the organization trusts
(trust sources of kind REGISTRARS, and the registration certificate providers of its Lists of
Trusted Entities) and against the access certificate its requests are signed with. What it
permits is kept as read, so saving a verification compares queries without the network.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from cryptography import x509
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.errors import Conflict, InvalidRequest, NotFound
from app.extensions import db
from app.oid4vp import registration_certificate as rc
from app.oid4vp.formats import CredentialType
from app.oid4vp.request import CREDENTIAL_QUERY_ID
from app.organizations.models import Membership, Organization
from app.organizations.operations import require_manager
from app.schemas.models import Schema
from app.statuslist import StatusError, check_status
from app.trust.errors import TrustError
from app.trust.issuers import ResolvedIssuer
from app.trust.x5c import bind_identity, fingerprint, leaf_key
from app.trust_sources import settings as source_settings
from app.trust_sources.use import registrar_trust
from app.verifications.models import Verification
from app.verifications.operations import provide_registration_check
from app.verifier_identity.models import RegistrationCertificate, VerifierKey
from app.verifier_identity.operations import OWN

INVALID = "INVALID_REGISTRATION_CERTIFICATE"
OUTSIDE = "OUTSIDE_REGISTRATION"
REQUIRED = "NO_REGISTRATION_CERTIFICATE"

_required: list[Callable[[], bool]] = []


def provide_required(provider: Callable[[], bool]) -> None:
    """Where the running application's ``REGISTRATION_CERTIFICATE_REQUIRED`` is read."""
    _required[:] = [provider]


def required() -> bool:
    return bool(_required and _required[0]())


# -- upload, list, delete --------------------------------------------------------------------


def upload(member: Membership, token: str) -> RegistrationCertificate:
    """Check the registration certificate and keep it; 400 INVALID_REGISTRATION_CERTIFICATE
    with the reason when a wallet would refuse it. The same certificate twice is kept once."""
    require_manager(member)
    organization_id = member.organization_id
    access = _access_certificate(organization_id)
    now = clock.now()
    try:
        checked = rc.check(token, registrar_trust(organization_id, now), access, now)
    except rc.RegistrationCertificateError as exc:
        raise InvalidRequest(str(exc), code=INVALID) from None
    if checked.status is not None:
        _check_status(checked, organization_id, now)
    digest = hashlib.sha256(checked.token.encode("ascii")).hexdigest()
    existing = db.session.scalar(
        select(RegistrationCertificate).where(
            RegistrationCertificate.organization_id == organization_id,
            RegistrationCertificate.token_sha256 == digest,
        )
    )
    if existing is not None:
        return existing
    record = RegistrationCertificate(
        organization_id=organization_id,
        token=checked.token,
        token_sha256=digest,
        sub=checked.sub[:500],
        name=checked.name[:500],
        intended_use_id=(checked.intended_use_id or None) and checked.intended_use_id[:500],
        purpose=list(checked.purpose),
        credentials=[c.describe() for c in checked.credentials],
        registrar=checked.registrar[:1000],
        access_certificate_sha256=fingerprint(access),
        status=checked.status,
        issued_at=checked.issued_at,
        expires_at=checked.expires_at,
        created_at=now,
    )
    try:
        with db.session.begin_nested():
            db.session.add(record)
    except IntegrityError:  # the same upload, twice at once
        return upload(member, token)
    return record


def _access_certificate(organization_id: uuid.UUID) -> x509.Certificate:
    """The leaf the organization's own requests are signed with (not an intermediated
    relying party's); a registration certificate only travels with those, and must name the
    relying party that leaf names."""
    chain_pem = db.session.scalar(
        select(VerifierKey.chain_pem).where(
            VerifierKey.organization_id == organization_id,
            VerifierKey.relying_party == OWN,
            VerifierKey.activated_at.is_not(None),
            VerifierKey.retired_at.is_(None),
        )
    )
    if not chain_pem:
        raise InvalidRequest(
            "Upload the organization's access certificate first (PUT "
            "/verifier-identity/certificate): a registration certificate is checked against "
            "it, and travels only with requests signed by it",
            code=INVALID,
        )
    return x509.load_pem_x509_certificate(chain_pem.encode("ascii"))


def _check_status(checked: rc.RegistrationCertificate, organization_id, now) -> None:
    """TS 119 475: a certificate naming a status list is refused unless the registrar's list
    says valid, signed by the registrar (as a credential's list is by its issuer)."""
    path = checked.registrar_path
    try:
        issuer = ResolvedIssuer(bind_identity(path[0], None), leaf_key(path[0]), "x5c", path)
        result = check_status(
            checked.status,
            credential_issuer=issuer,
            fetcher=source_settings.current().fetcher,
            anchors=registrar_trust(organization_id, now).granted(),
            now=now,
        )
    except (StatusError, TrustError) as exc:
        raise InvalidRequest(
            f"{rc.LABEL} status could not be checked: {exc}", code=INVALID
        ) from None
    if not result.valid:
        raise InvalidRequest(
            f"{rc.LABEL} is revoked or suspended by its registrar (status {result.status})",
            code=INVALID,
        )


def list_for(organization: Organization) -> list[RegistrationCertificate]:
    return list(
        db.session.scalars(
            select(RegistrationCertificate)
            .where(RegistrationCertificate.organization_id == organization.id)
            .order_by(RegistrationCertificate.created_at, RegistrationCertificate.id)
        )
    )


def get(organization_id: uuid.UUID, certificate_id: uuid.UUID | str) -> RegistrationCertificate:
    try:
        wanted = uuid.UUID(str(certificate_id))
    except ValueError:
        raise NotFound() from None
    record = db.session.get(RegistrationCertificate, wanted)
    if record is None or record.organization_id != organization_id:
        raise NotFound()
    return record


def delete(member: Membership, certificate_id: uuid.UUID) -> None:
    """Refused while a verification names it: its requests would lose their registration."""
    require_manager(member)
    record = get(member.organization_id, certificate_id)
    users = list(
        db.session.scalars(
            select(Verification.name).where(
                Verification.registration_certificate_id == record.id,
                Verification.deleted_at.is_(None),
            )
        )
    )
    if users:
        raise Conflict(
            f"The registration certificate is used by verification(s) "
            f"{', '.join(repr(n) for n in users)}; give them another one first",
            code="REGISTRATION_CERTIFICATE_IN_USE",
        )
    # Policy requests made under it forget it (ON DELETE SET NULL): theirs is their
    # verification's from then on.
    db.session.delete(record)
    db.session.flush()


# -- no over-asking --------------------------------------------------------------------------


def choose(
    organization_id: uuid.UUID,
    asked: uuid.UUID | str | None,
    current: uuid.UUID | None,
    relying_party: str | None = None,
) -> RegistrationCertificate | None:
    """The certificate a verification is made under: the one named, else the one it had,
    else the organization's only one; None where it has none (refused when the deployment
    requires one).

    A registration certificate is the organization's own: it names the relying party of the
    organization's own access certificate, so a verification an intermediary makes for
    another relying party (``relying_party``) is made under none.
    """
    if relying_party:
        return _none_for(relying_party, asked)
    if asked is not None:
        return get(organization_id, asked)
    if current is not None:
        record = db.session.get(RegistrationCertificate, current)
        if record is not None:
            return record
    records = list(
        db.session.scalars(
            select(RegistrationCertificate)
            .where(RegistrationCertificate.organization_id == organization_id)
            .limit(2)
        )
    )
    if len(records) == 1:
        return records[0]
    if records:
        raise InvalidRequest(
            "The organization has several registration certificates: name the one this "
            "verification is made under (registration_certificate_id)",
            code=REQUIRED,
        )
    if required():
        raise InvalidRequest(
            "This deployment requires a registration certificate for every verification "
            "(REGISTRATION_CERTIFICATE_REQUIRED): upload one (POST "
            "/verifier-identity/registration-certificates) and name it",
            code=REQUIRED,
        )
    return None


def _none_for(relying_party: str, asked: uuid.UUID | str | None) -> None:
    """An intermediated relying party's verification: no registration certificate of the
    organization's may travel with requests signed by that party's access certificate."""
    if asked is not None:
        raise InvalidRequest(
            "A registration certificate here is the organization's own, matched to its own "
            f"access certificate: a verification for relying party {relying_party!r} cannot "
            "be made under one",
            code=INVALID,
        )
    if required():
        raise InvalidRequest(
            "This deployment requires a registration certificate for every verification "
            "(REGISTRATION_CERTIFICATE_REQUIRED), and an intermediated relying party holds "
            "none here: make the verification under the organization's own identity",
            code=REQUIRED,
        )
    return None


def apply_to(
    organization: Organization,
    verification: Verification,
    schema: Schema,
    asked: uuid.UUID | str | None,
) -> None:
    """Set the certificate a verification is made under (``choose``), once its query (the
    requested claims of its schema's credential type) stays within it."""
    record = choose(
        organization.id,
        asked,
        verification.registration_certificate_id,
        verification.relying_party,
    )
    if record is not None:
        require_within(record, schema.credential_type(), verification.requested_claims())
    verification.registration_certificate_id = record.id if record is not None else None


provide_registration_check(apply_to)


def require_within(
    record: RegistrationCertificate, credential: CredentialType, claims: Sequence[str]
) -> None:
    """400 OUTSIDE_REGISTRATION naming each claim (or the credential type) the query asks
    for that the registration certificate does not permit."""
    query = credential.credential_query(CREDENTIAL_QUERY_ID, list(claims))
    permitted = [_permitted(entry) for entry in record.credentials or []]
    missing = rc.outside(permitted, query)
    if missing:
        raise InvalidRequest(
            "The query asks for more than registration certificate "
            f"{record.intended_use_id or record.id} permits: {', '.join(missing)}",
            code=OUTSIDE,
            outside=missing,
            registration_certificate_id=str(record.id),
        )


def _permitted(entry: dict[str, Any]) -> rc.PermittedCredential:
    claims = entry.get("claims")
    return rc.PermittedCredential(
        entry.get("format", ""),
        entry.get("meta") or {},
        None if claims is None else tuple(tuple(path) for path in claims),
    )


def verifier_info_of(certificate_id: uuid.UUID | None) -> tuple[dict[str, Any], ...]:
    """What a request made under the certificate carries (OpenID4VP 1.0 §5.1)."""
    if certificate_id is None:
        return ()
    record = db.session.get(RegistrationCertificate, certificate_id)
    if record is None:
        return ()
    return rc.verifier_info(record.token, [CREDENTIAL_QUERY_ID])


def describe(record: RegistrationCertificate) -> dict[str, Any]:
    """What the API and the page show of one: what it permits and the purpose it states."""
    now = clock.now()
    return {
        "id": str(record.id),
        "name": record.name,
        "sub": record.sub,
        "intended_use_id": record.intended_use_id,
        "purpose": list(record.purpose or []),
        "credentials": list(record.credentials or []),
        "registrar": record.registrar,
        "issued_at": record.issued_at.isoformat(),
        "expires_at": record.expires_at.isoformat() if record.expires_at else None,
        "expired": record.expires_at is not None and record.expires_at <= now,
        "status": record.status,
        "created_at": record.created_at.isoformat(),
        "token": record.token,
    }
