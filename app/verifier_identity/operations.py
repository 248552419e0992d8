"""Each organization's verifier identity: the key and CSR staff make, the chain they upload,
the logo that travels with the requests, and the signer requests are made with (registration
certificates: ``app.verifier_identity.registration``).

The private key is made here, sealed at once, and opened only to sign; no function returns it
and nothing logs it. Writes are for the organization's owners and admins.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import select

from app import clock
from app.errors import Conflict, InvalidRequest
from app.extensions import db
from app.issuance import settings
from app.oid4vci.keys import generate_signing_key, open_private_key, seal_private_key
from app.oid4vp import access_certificate as certificates
from app.oid4vp import wrpac
from app.oid4vp.access_certificate import AccessCertificateError
from app.oid4vp.client import X509Client
from app.oid4vp.profile import HAIP
from app.organizations.models import Membership, Organization
from app.organizations.operations import require_manager
from app.trust.x5c import self_signed
from app.verifications.profile import current_profile
from app.verifier_identity import google_wallet
from app.verifier_identity.models import VerifierKey, VerifierProfile

# VerifierKey.profile of a request for an EU access certificate.
TS_119_411_8 = "ts-119-411-8"
# VerifierKey.relying_party of the organization's own certificates.
OWN = ""


@dataclass(frozen=True)
class VerifierIdentity:
    """What the organization's settings page and API show."""

    organization: Organization
    active: VerifierKey | None
    pending: VerifierKey | None
    profile: VerifierProfile | None
    # With a Google Wallet registrar CA: the leaf issued last (or None) and what is missing.
    google_wallet: tuple[x509.Certificate | None, list[str]] | None = None
    # An intermediary's access certificates, one per relying party it acts for, by name.
    relying_parties: tuple[RelyingPartyIdentity, ...] = ()


@dataclass(frozen=True)
class RelyingPartyIdentity:
    """One intermediated relying party: its certificate in use and the CSR waiting."""

    name: str
    active: VerifierKey | None
    pending: VerifierKey | None


@dataclass(frozen=True)
class OrganizationClient:
    """The organization's own identity as a request is made with it."""

    client: X509Client
    logo_uri: str | None


def identity_of(organization: Organization, *, registrar: bool = False) -> VerifierIdentity:
    """``registrar``: the deployment holds a Google Wallet registrar CA, so the organization's
    leaf (and what it still lacks for one) is part of its identity."""
    return VerifierIdentity(
        organization,
        active_key(organization.id),
        pending_key(organization.id),
        db.session.get(VerifierProfile, organization.id),
        (
            (google_wallet.held_leaf(organization.id), google_wallet.missing_for(organization))
            if registrar
            else None
        ),
        tuple(
            RelyingPartyIdentity(
                name, active_key(organization.id, name), pending_key(organization.id, name)
            )
            for name in relying_parties_of(organization.id)
        ),
    )


def relying_parties_of(organization_id: uuid.UUID) -> list[str]:
    """The relying parties the organization holds (or asked for) a certificate for, by name."""
    return list(
        db.session.scalars(
            select(VerifierKey.relying_party)
            .where(
                VerifierKey.organization_id == organization_id,
                VerifierKey.relying_party != OWN,
                VerifierKey.retired_at.is_(None),
            )
            .distinct()
            .order_by(VerifierKey.relying_party)
        )
    )


def check_relying_party(organization_id: uuid.UUID, relying_party: str | None) -> str | None:
    """A verification's ``relying_party``: one the organization holds a certificate or a
    waiting request for (400 UNKNOWN_RELYING_PARTY otherwise); None is the organization."""
    if relying_party is None:
        return None
    if relying_party not in relying_parties_of(organization_id):
        raise InvalidRequest(
            f"relying_party: {relying_party!r} is not a relying party this organization holds "
            "an access certificate for: make a signing request for it first "
            "(POST /verifier-identity/signing-request with relying_party)",
            code="UNKNOWN_RELYING_PARTY",
        )
    return relying_party


def logo_uri_of(organization_id: uuid.UUID) -> str | None:
    """The organization's logo as its verifier profile gives it, or None."""
    profile = db.session.get(VerifierProfile, organization_id)
    return profile.logo_uri if profile is not None else None


def active_key(organization_id: uuid.UUID, relying_party: str = "") -> VerifierKey | None:
    return db.session.scalar(
        select(VerifierKey).where(
            VerifierKey.organization_id == organization_id,
            VerifierKey.relying_party == relying_party,
            VerifierKey.activated_at.is_not(None),
            VerifierKey.retired_at.is_(None),
        )
    )


def active_key_id(organization_id: uuid.UUID, relying_party: str | None = None) -> uuid.UUID | None:
    """The key a new request of the organization (for ``relying_party``, when it is an
    intermediary's verification for one) is made under; None: the deployment's.

    A certificate past its end is not used for new requests (every wallet would refuse them):
    they carry the deployment's identity until a renewed chain is uploaded. An intermediated
    relying party without a certificate in use does not borrow the intermediary's: its
    requests carry the deployment's identity too.
    """
    return db.session.scalar(
        select(VerifierKey.id).where(
            VerifierKey.organization_id == organization_id,
            VerifierKey.relying_party == (relying_party or OWN),
            VerifierKey.activated_at.is_not(None),
            VerifierKey.retired_at.is_(None),
            VerifierKey.not_after > clock.now(),
        )
    )


def pending_key(organization_id: uuid.UUID, relying_party: str = "") -> VerifierKey | None:
    """The newest key whose chain has not come back yet (older ones were given up)."""
    return db.session.scalar(
        select(VerifierKey).where(
            VerifierKey.organization_id == organization_id,
            VerifierKey.relying_party == relying_party,
            VerifierKey.activated_at.is_(None),
            VerifierKey.retired_at.is_(None),
        )
    )


def eu_details(body: Any) -> certificates.EuDetails | None:
    """The EU details of a validated signing request body (``eu_access_certificate``)."""
    eu = getattr(body, "eu_access_certificate", None)
    if eu is None:
        return None
    return certificates.EuDetails(eu.organization_identifier, eu.contact_uri, eu.contact_email)


def request_certificate(
    member: Membership,
    country: str,
    name_host: bool,
    host: str,
    eu: certificates.EuDetails | None = None,
    relying_party: str = "",
) -> VerifierKey:
    """A new key and its CSR. The certificate in use keeps signing until a chain for this key
    is uploaded; an earlier CSR still waiting is given up (its chain would now be refused).
    With ``eu`` the request is for an EU access certificate (ETSI TS 119 411-8): the CSR
    carries what that profile asks of the subject, and the chain is checked against it.
    ``relying_party``: an intermediary's request for a relying party it acts for, which the
    certificate then names (CN and O) in place of the organization."""
    require_manager(member)
    organization = member.organization
    relying_party = relying_party.strip()
    try:
        country = certificates.check_country(country)
        dns_name = host if name_host else None
        if name_host and not host:
            raise AccessCertificateError("This deployment has no host name to put in the CSR")
        private = generate_signing_key()
        csr = certificates.make_csr(
            private, relying_party or organization.name, country, dns_name, eu
        )
    except AccessCertificateError as exc:
        raise InvalidRequest(str(exc), code="INVALID_CSR_REQUEST") from None
    now = clock.now()
    earlier = pending_key(organization.id, relying_party)
    if earlier is not None:
        earlier.retired_at = now
    key = VerifierKey(
        organization_id=organization.id,
        sealed_private_key=seal_private_key(private, settings.current().kek),
        csr_pem=csr.decode("ascii"),
        country=country,
        dns_name=dns_name,
        profile=TS_119_411_8 if eu is not None else None,
        relying_party=relying_party,
        created_at=now,
    )
    db.session.add(key)
    db.session.flush()
    return key


def upload_chain(
    member: Membership, chain_pem: str, host: str, relying_party: str = ""
) -> VerifierKey:
    """Take the chain issued for the pending CSR (or a renewal for the key in use) and sign
    the organization's requests (or those for ``relying_party``) with it from now on; the
    key it replaces is retired."""
    require_manager(member)
    organization_id = member.organization_id
    relying_party = relying_party.strip()
    key = pending_key(organization_id, relying_party) or active_key(organization_id, relying_party)
    if key is None:
        raise Conflict(
            "There is no certificate signing request to take a chain for: generate one first",
            code="NO_SIGNING_REQUEST",
        )
    public = x509.load_pem_x509_csr(key.csr_pem.encode("ascii")).public_key()
    now = clock.now()
    try:
        chain = certificates.read_chain(chain_pem, public, now)
    except AccessCertificateError as exc:
        raise InvalidRequest(str(exc), code="INVALID_CERTIFICATE_CHAIN") from None
    haip = current_profile() == HAIP
    if haip and any(self_signed(cert) for cert in chain):
        # HAIP 1.0: the x5c a signed request carries holds neither the trust anchor nor any
        # self-signed certificate, as the deployment's own certificate is held to at start-up.
        raise InvalidRequest(
            "VERIFIER_PROFILE=haip (HAIP 1.0): the chain must not hold a self-signed "
            "certificate; give the leaf and its intermediates only, issued by a CA",
            code="INVALID_CERTIFICATE_CHAIN",
        )
    if key.profile == TS_119_411_8 and (unmet := wrpac.unmet_requirements(chain[0])):
        # Every unmet requirement at once, by name, for staff to send to their provider.
        raise InvalidRequest(
            f"The certificate does not meet ETSI TS 119 411-8 ({len(unmet)} requirement"
            f"{'s' if len(unmet) > 1 else ''}): "
            + "; ".join(f"{item.requirement}: {item.problem}" for item in unmet),
            code="ACCESS_CERTIFICATE_PROFILE",
            unmet=[item.as_dict() for item in unmet],
        )
    prefix, name = certificates.client_identifier(chain[0], host, hash_only=haip)
    if key.activated_at is None:
        replaced = active_key(organization_id, relying_party)
        if replaced is not None:
            replaced.retired_at = now
            db.session.flush()
        key.activated_at = now
    key.chain_pem = certificates.chain_pem_of(chain)
    key.client_id_prefix, key.client_id_name = prefix, name
    key.not_after = chain[0].not_valid_after_utc
    db.session.flush()
    return key


def stop_using(member: Membership, relying_party: str = "") -> None:
    """Back to the deployment's identity: the key in use is retired (a pending CSR stays)."""
    require_manager(member)
    key = active_key(member.organization_id, relying_party.strip())
    if key is None:
        raise Conflict(
            "The organization has no certificate of its own in use", code="NO_ACTIVE_CERTIFICATE"
        )
    key.retired_at = clock.now()
    db.session.flush()


def update_profile(member: Membership, changes: dict[str, Any]) -> VerifierProfile:
    """``logo_uri`` and ``privacy_policy_uri``: a field left out keeps its value, null (or an
    empty text) clears it."""
    require_manager(member)
    profile = db.session.get(VerifierProfile, member.organization_id)
    if profile is None:
        profile = VerifierProfile(organization_id=member.organization_id)
        db.session.add(profile)
    for field in ("logo_uri", "privacy_policy_uri"):
        if field in changes:
            setattr(profile, field, changes[field] or None)
    profile.updated_at = clock.now()
    db.session.flush()
    return profile


def organization_client(key_id: uuid.UUID) -> OrganizationClient | None:
    """The signer and what travels with it, for a request made under ``key_id``.

    A key retired after the request was made still signs it (until the request expires), so a
    person mid-way through a presentation is not cut off by a rotation.
    """
    key = db.session.get(VerifierKey, key_id)
    if key is None or key.chain_pem is None or key.client_id_prefix is None:
        return None
    client = certificates.signing_client(
        key.chain_pem, _private_key(key), key.client_id_prefix, key.client_id_name or ""
    )
    profile = db.session.get(VerifierProfile, key.organization_id)
    return OrganizationClient(client, profile.logo_uri if profile else None)


def client_id_of(key_id: uuid.UUID) -> str | None:
    """The client ID a request made under ``key_id`` carries, without opening its key."""
    key = db.session.get(VerifierKey, key_id)
    return key.client_id if key is not None else None


def csr_of(organization: Organization, relying_party: str = "") -> str:
    """The pending CSR's PEM; 409 NO_SIGNING_REQUEST when none waits."""
    key = pending_key(organization.id, relying_party)
    if key is None:
        raise Conflict(
            "There is no certificate signing request waiting: generate one first",
            code="NO_SIGNING_REQUEST",
        )
    return key.csr_pem


def _private_key(key: VerifierKey) -> ec.EllipticCurvePrivateKey:
    return open_private_key(key.sealed_private_key, settings.current().kek)
