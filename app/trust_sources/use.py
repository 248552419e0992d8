"""What a verification's trust sources vouch for when a presentation is decided, and what its
DCQL query tells wallets (``trusted_authorities``).

Certificates are parsed once per source version and kept per process (a list of a few
thousand certificates is parsed in tens of milliseconds, which a presentation should not pay
each time); the kept copy is only a cache, keyed by the version every good refresh bumps.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509
from sqlalchemy import select

from app.extensions import db
from app.oid4vp.formats import MSO_MDOC, CredentialType
from app.recently_used import RecentlyUsed
from app.trust.lists.model import is_granted
from app.trust.sources import (
    SourceAnchor,
    SourceTrust,
    Standing,
    authority_key_ids,
    describe_time,
)
from app.trust.x5c import load_pem_anchors
from app.trust_sources import settings
from app.trust_sources.models import (
    PEM_KINDS,
    REGISTRAR_SERVICE_TYPE,
    WALLET_PROVIDER_SERVICE_TYPE,
    SourceKind,
    TrustSource,
)

# Beyond this many ``aki`` values the query leaves ``trusted_authorities`` out: a request
# carried in a link or a QR code cannot hold the whole EU, and the verifier checks anyway.
MAX_TRUSTED_AUTHORITIES = 32


@dataclass(frozen=True)
class ParsedEntry:
    certificate: x509.Certificate
    entry: dict[str, Any]


_PARSED: RecentlyUsed[tuple[uuid.UUID, int], tuple[ParsedEntry, ...]] = RecentlyUsed(size=64)


def _parsed(source: TrustSource) -> tuple[ParsedEntry, ...]:
    key = (source.id, source.version)
    kept = _PARSED.get(key)
    if kept is None:
        if source.kind in PEM_KINDS:
            kept = tuple(ParsedEntry(c, {}) for c in load_pem_anchors(source.certificates_pem))
        else:
            kept = tuple(
                ParsedEntry(x509.load_der_x509_certificate(base64.b64decode(e["certificate"])), e)
                for e in source.entries or []
            )
        _PARSED.put(key, kept)
    return kept


def chosen_sources(organization_id: uuid.UUID, ids: Sequence[str] | None) -> list[TrustSource]:
    """The verification's sources that belong to its organization, in the order chosen."""
    if not ids:
        return []
    # ``entries`` (megabytes for the EU) stays deferred: it is read only when this version
    # of the source has not been parsed in this process yet.
    rows = db.session.scalars(
        select(TrustSource).where(
            TrustSource.organization_id == organization_id,
            TrustSource.id.in_([uuid.UUID(i) for i in ids]),
        )
    )
    by_id = {str(row.id): row for row in rows}
    return [by_id[i] for i in ids if i in by_id]


def source_trust(
    sources: Sequence[TrustSource], credential: CredentialType, now: datetime
) -> SourceTrust:
    refuse_stale = settings.current().refuse_stale
    anchors: list[SourceAnchor] = []
    for source in sources:
        for parsed in _parsed(source):
            if _applies(source, parsed.entry, credential):
                anchors.append(_anchor(source, parsed, now, refuse_stale))
    return SourceTrust(tuple(anchors), not_listed(sources))


def _applies(source: TrustSource, entry: dict[str, Any], credential: CredentialType) -> bool:
    """A VICAL lists IACAs: they anchor mdocs, of the docTypes it names for them if any.
    Wallet provider and registrar certificates anchor wallets and registration certificates,
    never a credential's issuer."""
    if source.kind in (SourceKind.WALLET_PROVIDERS, SourceKind.REGISTRARS):
        return False
    if source.kind is not SourceKind.VICAL:
        return True
    if credential.format != MSO_MDOC:
        return False
    doctypes = entry.get("doctypes") or []
    return not doctypes or credential.doctype in doctypes


def _anchor(
    source: TrustSource,
    parsed: ParsedEntry,
    now: datetime,
    refuse_stale: bool,
    subject: str = "Issuer certificate",
) -> SourceAnchor:
    """``subject`` names the certificate in a refusal: a credential's issuer, or a wallet
    provider (whose attestation a wallet presents)."""
    entry = parsed.entry
    if source.kind not in PEM_KINDS:
        late = _late_list(source, entry, now)
        if late is not None and refuse_stale:
            return SourceAnchor(parsed.certificate, Standing.STALE, late)
        if not _granted(entry, now):
            return SourceAnchor(
                parsed.certificate, Standing.WITHDRAWN, _withdrawn(source, entry, subject)
            )
    return SourceAnchor(parsed.certificate, Standing.GRANTED)


def _granted(entry: dict[str, Any], now: datetime) -> bool:
    starting = entry.get("status_starting")
    started = starting is None or datetime.fromisoformat(starting) <= now
    return is_granted(str(entry.get("status") or "")) and started


def _withdrawn(source: TrustSource, entry: dict[str, Any], subject: str) -> str:
    status = str(entry.get("status") or "").rstrip("/").rsplit("/", 1)[-1] or "not granted"
    starting = entry.get("status_starting")
    when = f" on {describe_time(datetime.fromisoformat(starting))}" if starting else ""
    word = "withdrawn" if status == "withdrawn" else f"given the status {status}"
    return f"{subject} is not in {_phrase(source)}: its service was {word}{when}"


def _late_list(source: TrustSource, entry: dict[str, Any], now: datetime) -> str | None:
    """The reason when the list this entry comes from (or the LoTL above it) is past its
    next update."""
    lists = source.lists or []
    own = [i for i in lists[1:] if i.get("territory") == entry.get("territory")]
    for info in [*lists[:1], *own]:
        next_update = info.get("next_update")
        if next_update and datetime.fromisoformat(next_update) < now:
            label = _list_name(source, info)
            when = describe_time(datetime.fromisoformat(next_update))
            return f"{label} is past its next update ({when})"
    return None


def _list_name(source: TrustSource, info: dict[str, Any]) -> str:
    if source.kind is SourceKind.LIST_OF_TRUSTED_LISTS:
        if info is (source.lists or [None])[0]:
            return f"List of Trusted Lists '{source.name}'"
        return f"Trusted list of {info.get('territory')} in '{source.name}'"
    kind = KIND_NAMES[source.kind]
    return f"{kind[:1].upper()}{kind[1:]} '{source.name}'"


KIND_NAMES = {
    SourceKind.PEM: "the certificates of trust source",
    SourceKind.TRUSTED_LIST: "trusted list",
    SourceKind.LIST_OF_TRUSTED_LISTS: "EU list of qualified trust service providers",
    SourceKind.LIST_OF_TRUSTED_ENTITIES: "list of trusted entities",
    SourceKind.VICAL: "VICAL",
    SourceKind.WALLET_PROVIDERS: "the wallet provider certificates of trust source",
    SourceKind.REGISTRARS: "the registrar certificates of trust source",
}


def _phrase(source: TrustSource) -> str:
    """How a refusal names the source: "the trusted list 'X' (trusted list of DE, sequence
    123)"."""
    if source.kind in (SourceKind.WALLET_PROVIDERS, SourceKind.REGISTRARS):
        return f"{KIND_NAMES[source.kind]} '{source.name}'"
    if source.kind is SourceKind.PEM:
        return f"the certificates of trust source '{source.name}'"
    if source.refreshed_at is None:
        detail = "not read yet"
        if source.last_error:
            detail += f": {source.last_error}"
        return f"the {KIND_NAMES[source.kind]} '{source.name}' ({detail})"
    if source.kind is SourceKind.LIST_OF_TRUSTED_LISTS:
        return f"the {KIND_NAMES[source.kind]} '{source.name}' ({_members(source)})"
    info = (source.lists or [{}])[0]
    held = [f"sequence {source.sequence_number}"] if source.sequence_number is not None else []
    if info.get("territory") and source.kind is SourceKind.TRUSTED_LIST:
        held.insert(0, f"trusted list of {info['territory']}")
    suffix = f" ({', '.join(held)})" if held else ""
    return f"the {KIND_NAMES[source.kind]} '{source.name}'{suffix}"


def _members(source: TrustSource) -> str:
    members = (source.lists or [])[1:]
    if 0 < len(members) <= 3:
        return "; ".join(
            f"trusted list of {m.get('territory')}, sequence {m.get('sequence_number')}"
            for m in members
        )
    return f"trusted lists of {len(members)} territories, LoTL sequence {source.sequence_number}"


def not_listed(sources: Sequence[TrustSource]) -> str:
    if not sources:
        return "Issuer certificate is not in any trust source of this verification"
    return "Issuer certificate is not in " + ", nor in ".join(_phrase(s) for s in sources)


def trusted_authorities(
    sources: Sequence[TrustSource],
    credential: CredentialType,
    pinned_pem: Sequence[x509.Certificate],
    now: datetime,
) -> list[str]:
    """The ``aki`` values of the certificates the sources grant now (and the verification's
    pinned PEM certificates); empty when there are more than a request can carry."""
    granted = source_trust(sources, credential, now).granted()
    values = authority_key_ids([*granted, *pinned_pem])
    return values if len(values) <= MAX_TRUSTED_AUTHORITIES else []


WALLET_PROVIDER_CERTIFICATE = "Wallet provider certificate"


def wallet_provider_trust(organization_id: uuid.UUID, now: datetime) -> SourceTrust:
    """The wallet providers an organization's issuer accepts attestations from: every
    certificate of its wallet provider sources, and the wallet provider services (ETSI TS
    119 602 ``WalletSolution``) of its Lists of Trusted Entities, with their standing."""
    return _role_trust(
        organization_id,
        now,
        SourceKind.WALLET_PROVIDERS,
        WALLET_PROVIDER_SERVICE_TYPE,
        WALLET_PROVIDER_CERTIFICATE,
        "wallet provider",
    )


REGISTRAR_CERTIFICATE = "Registrar certificate"


def registrar_trust(organization_id: uuid.UUID, now: datetime) -> SourceTrust:
    """The registrars an organization's registration certificates may be signed by: every
    certificate of its registrar sources, and the registration certificate provider services
    (ETSI TS 119 602 ``WRPRC/Issuance``) of its Lists of Trusted Entities."""
    return _role_trust(
        organization_id,
        now,
        SourceKind.REGISTRARS,
        REGISTRAR_SERVICE_TYPE,
        REGISTRAR_CERTIFICATE,
        "registrar",
    )


def _role_trust(
    organization_id: uuid.UUID,
    now: datetime,
    kind: SourceKind,
    service_type: str,
    subject: str,
    role: str,
) -> SourceTrust:
    rows = list(
        db.session.scalars(
            select(TrustSource)
            .where(
                TrustSource.organization_id == organization_id,
                TrustSource.kind.in_([kind, SourceKind.LIST_OF_TRUSTED_ENTITIES]),
            )
            .order_by(TrustSource.created_at)
        )
    )
    refuse_stale = settings.current().refuse_stale
    anchors: list[SourceAnchor] = []
    used: list[TrustSource] = []
    for source in rows:
        wanted = [
            parsed
            for parsed in _parsed(source)
            if source.kind is kind or parsed.entry.get("service_type") == service_type
        ]
        if wanted:
            used.append(source)
        anchors.extend(_anchor(source, parsed, now, refuse_stale, subject) for parsed in wanted)
    if not used:
        reason = f"{subject} is not in any {role} trust source"
    else:
        reason = f"{subject} is not in " + ", nor in ".join(_phrase(source) for source in used)
    return SourceTrust(tuple(anchors), reason)
