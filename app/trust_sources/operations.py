"""Trust sources: added, changed, refreshed, deleted, and used by verifications.

Another organization's source reads as missing, like an unknown one, here and when a
verification names it. A refresh fetches with no transaction open, then writes in one short
one; a refresh that fails keeps the last good copy and records why.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import event as sa_event
from sqlalchemy import or_, select
from sqlalchemy.orm import Session, undefer

from app import clock, jobs
from app.errors import Conflict, InvalidRequest, NotFound
from app.extensions import db
from app.organizations.models import Organization
from app.trust.x5c import load_pem_anchors
from app.trust_sources import settings
from app.trust_sources.models import (
    FETCHED_KINDS,
    PEM_KINDS,
    REGISTRAR_SERVICE_TYPE,
    WALLET_PROVIDER_SERVICE_TYPE,
    SourceKind,
    TrustSource,
)
from app.trust_sources.reading import SourceError, Wanted, read_source

log = logging.getLogger(__name__)

REFRESH_JOB = "trust_sources.refresh"
MAX_URL_LENGTH = 2000
MAX_NAME_LENGTH = 200
MAX_PEM_LENGTH = 256 * 1024
_TERRITORY = re.compile(r"^[A-Z]{2}$")

QC_CA = "http://uri.etsi.org/TrstSvc/Svctype/CA/QC"
# Service types staff pick from (any other URI may be given too); the first is the default of
# ETSI trusted lists.
SERVICE_TYPE_PRESETS: dict[str, str] = {
    QC_CA: "CA issuing qualified certificates (CA/QC), ETSI TS 119 612",
    "http://uri.etsi.org/TrstSvc/Svctype/CA/PKC": "CA issuing other certificates (CA/PKC)",
    "http://uri.etsi.org/19602/SvcType/PID/Issuance": "EU PID provider (ETSI TS 119 602)",
    "http://uri.etsi.org/19602/SvcType/QEAA/Issuance": "Qualified EAA provider (QEAA)",
    "http://uri.etsi.org/19602/SvcType/PubEAA/Issuance": "Public-sector EAA provider (Pub-EAA)",
    WALLET_PROVIDER_SERVICE_TYPE: "Wallet provider",
    REGISTRAR_SERVICE_TYPE: "Registration certificate provider (registrar)",
}

KIND_WORDS = {
    SourceKind.PEM: "PEM certificates",
    SourceKind.TRUSTED_LIST: "ETSI trusted list",
    SourceKind.LIST_OF_TRUSTED_LISTS: "EU List of Trusted Lists",
    SourceKind.LIST_OF_TRUSTED_ENTITIES: "List of Trusted Entities",
    SourceKind.VICAL: "VICAL",
    SourceKind.WALLET_PROVIDERS: "Wallet provider certificates",
    SourceKind.REGISTRARS: "Registrar certificates",
}


# -- reading and checking ------------------------------------------------------------------


def _of(organization: Organization):
    return select(TrustSource).where(TrustSource.organization_id == organization.id)


def list_sources(organization: Organization) -> list[TrustSource]:
    return list(db.session.scalars(_of(organization).order_by(TrustSource.created_at)))


def get_source(
    organization: Organization, source_id: uuid.UUID, with_entries: bool = False
) -> TrustSource:
    query = _of(organization).where(TrustSource.id == source_id)
    if with_entries:
        query = query.options(undefer(TrustSource.entries))
    source = db.session.scalar(query)
    if source is None:
        raise NotFound()
    return source


def check_source_ids(organization: Organization, ids: Sequence[uuid.UUID | str]) -> list[str]:
    """The ids as stored on a verification; each must be a source of ``organization``."""
    wanted = list(dict.fromkeys(str(i) for i in ids))
    if not wanted:
        return []
    found = set(
        str(i)
        for i in db.session.scalars(
            select(TrustSource.id).where(
                TrustSource.organization_id == organization.id,
                TrustSource.id.in_([uuid.UUID(i) for i in wanted]),
            )
        )
    )
    if any(i not in found for i in wanted):
        raise NotFound()
    other = db.session.execute(
        select(TrustSource.name, TrustSource.kind).where(
            TrustSource.id.in_([uuid.UUID(i) for i in wanted]),
            TrustSource.kind.in_([SourceKind.WALLET_PROVIDERS, SourceKind.REGISTRARS]),
        )
    ).first()
    if other is not None and other.kind is SourceKind.WALLET_PROVIDERS:
        raise InvalidRequest(
            f"Trust source '{other.name}' lists wallet providers: it anchors wallet "
            "attestations, not the issuers of credentials"
        )
    if other is not None:
        raise InvalidRequest(
            f"Trust source '{other.name}' lists registrars: it anchors registration "
            "certificates, not the issuers of credentials"
        )
    return wanted


def _certificates(text: str, field_name: str) -> str:
    text = (text or "").strip()
    if not text:
        raise InvalidRequest(f"{field_name} is required: paste one or more PEM certificates")
    if len(text) > MAX_PEM_LENGTH:
        raise InvalidRequest(f"{field_name} is longer than {MAX_PEM_LENGTH} characters")
    try:
        certificates = load_pem_anchors(text)
    except ValueError:
        certificates = []
    if not certificates:
        raise InvalidRequest(
            f"{field_name} holds no readable PEM certificate "
            "(paste the whole -----BEGIN CERTIFICATE----- block)"
        )
    return text + "\n"


def _url(url: str | None) -> str:
    url = (url or "").strip()
    if not url:
        raise InvalidRequest("url is required for a list: where it is published")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise InvalidRequest("url is not a valid URL") from None
    schemes = ("https", "http") if settings.current().allow_private else ("https",)
    if parts.scheme not in schemes or not parts.hostname:
        raise InvalidRequest("url must be an https:// URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidRequest("url must not carry a user name or password")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidRequest(f"url is longer than {MAX_URL_LENGTH} characters")
    return url


def _territories(kind: SourceKind, values: Sequence[str] | None) -> list[str]:
    values = [v.strip().upper() for v in values or [] if v.strip()]
    if values and kind is not SourceKind.LIST_OF_TRUSTED_LISTS:
        raise InvalidRequest("territories applies to the EU List of Trusted Lists only")
    bad = [v for v in values if not _TERRITORY.match(v)]
    if bad:
        raise InvalidRequest(f"territories are two-letter codes (DE, FR, EL ...), not {bad[0]}")
    return list(dict.fromkeys(values))


def _service_types(kind: SourceKind, values: Sequence[str] | None) -> list[str]:
    values = [v.strip() for v in values or [] if v.strip()]
    if values and kind in (*PEM_KINDS, SourceKind.VICAL):
        raise InvalidRequest("service_types applies to trusted lists and Lists of Trusted Entities")
    if not values and kind in (SourceKind.TRUSTED_LIST, SourceKind.LIST_OF_TRUSTED_LISTS):
        return [QC_CA]
    return list(dict.fromkeys(values))


# -- changing --------------------------------------------------------------------------------


def create_source(organization: Organization, fields: dict[str, Any]) -> TrustSource:
    kind = SourceKind(fields["kind"])
    source = TrustSource(organization_id=organization.id, kind=kind, entries=[], lists=[])
    _apply(source, fields, new=True)
    db.session.add(source)
    db.session.flush()
    if source.fetched:
        refresh_after_commit(source.id)
    return source


def update_source(
    organization: Organization, source_id: uuid.UUID, fields: dict[str, Any]
) -> TrustSource:
    source = get_source(organization, source_id, with_entries=True)
    if fields.get("kind") is not None and SourceKind(fields["kind"]) is not source.kind:
        raise InvalidRequest("kind cannot be changed: add a new source instead")
    if _apply(source, fields, new=False) and source.fetched:
        _forget_copy(source)
        refresh_after_commit(source.id)
    db.session.flush()
    return source


def _apply(source: TrustSource, fields: dict[str, Any], *, new: bool) -> bool:
    """Set the given fields; whether what the source lists may have changed (a changed URL,
    signer, territory or service type makes the kept copy one that no longer answers)."""
    if fields.get("name") is not None or new:
        name = (fields.get("name") or "").strip()
        if not name or len(name) > MAX_NAME_LENGTH:
            raise InvalidRequest(f"name must be 1 to {MAX_NAME_LENGTH} characters")
        source.name = name
    kind = source.kind
    before = (source.url, source.certificates_pem, source.territories, source.service_types)
    if kind in PEM_KINDS:
        if fields.get("url"):
            raise InvalidRequest("url applies to lists, not to PEM certificates")
        if fields.get("signer_certificates"):
            raise InvalidRequest("signer_certificates applies to lists; give certificates")
        if fields.get("certificates") is not None or new:
            source.certificates_pem = _certificates(
                fields.get("certificates") or "", "certificates"
            )
    else:
        if fields.get("certificates"):
            raise InvalidRequest("certificates applies to PEM sources; give signer_certificates")
        if fields.get("url") is not None or new:
            source.url = _url(fields.get("url"))
        if fields.get("signer_certificates") is not None or new:
            source.certificates_pem = _certificates(
                fields.get("signer_certificates") or "", "signer_certificates"
            )
    if fields.get("territories") is not None or new:
        source.territories = _territories(kind, fields.get("territories"))
    if fields.get("service_types") is not None or new:
        source.service_types = _service_types(kind, fields.get("service_types"))
    after = (source.url, source.certificates_pem, source.territories, source.service_types)
    return not new and before != after


def _forget_copy(source: TrustSource) -> None:
    """Nothing read under the old settings stays in use."""
    source.entries = []
    source.entry_count = 0
    source.lists = []
    source.sequence_number = None
    source.issued_at = None
    source.next_update = None
    source.refreshed_at = None
    source.version += 1


def delete_source(organization: Organization, source_id: uuid.UUID) -> None:
    """Refused while a verification uses it: dropping it silently would widen what that
    verification trusts."""
    source = get_source(organization, source_id)
    users = verifications_using(organization, source.id)
    if users:
        raise Conflict(
            f"Trust source '{source.name}' is used by verification(s) "
            f"{', '.join(repr(name) for name in users)}; remove it from them first"
        )
    db.session.delete(source)
    db.session.flush()


UsedBy = Callable[[Organization, uuid.UUID], list[str]]
_used_by: UsedBy | None = None


def provide_usage(used_by: UsedBy) -> None:
    """Called by the verifications domain (which chooses sources and so imports this one):
    the names of the live verifications that use a source."""
    global _used_by
    _used_by = used_by


def verifications_using(organization: Organization, source_id: uuid.UUID) -> list[str]:
    if _used_by is None:
        raise RuntimeError("the verifications domain provides who uses a source")
    return _used_by(organization, source_id)


# -- refreshing ------------------------------------------------------------------------------


_REFRESH_KEY = "verity.trust_sources.refresh"


def refresh_after_commit(source_id: uuid.UUID) -> None:
    """Hand the refresh to the queue once the open transaction commits (before that, a worker
    would not find the source)."""
    db.session.info.setdefault(_REFRESH_KEY, []).append(str(source_id))


def request_refresh(organization: Organization, source_id: uuid.UUID) -> TrustSource:
    """ "Refresh now": queued, like the periodic refresh."""
    source = get_source(organization, source_id)
    if not source.fetched:
        raise InvalidRequest("A PEM source has nothing to fetch")
    refresh_after_commit(source.id)
    return source


def _enqueue_after_commit(session: Session) -> None:
    for source_id in session.info.pop(_REFRESH_KEY, []):
        try:
            jobs.enqueue(REFRESH_JOB, source_id)
        except Exception:
            log.warning("trust source refresh not queued; the sweep will", exc_info=True)


def _forget(session: Session, *_: Any) -> None:
    session.info.pop(_REFRESH_KEY, None)


def listen() -> None:
    if not sa_event.contains(Session, "after_commit", _enqueue_after_commit):
        sa_event.listen(Session, "after_commit", _enqueue_after_commit)
        sa_event.listen(Session, "after_rollback", _forget)


def due_sources(now: datetime) -> list[uuid.UUID]:
    """Lists not fetched within the refresh interval, never fetched, or past their next
    update since they were last tried."""
    every = timedelta(minutes=settings.current().refresh_minutes)
    return list(
        db.session.scalars(
            select(TrustSource.id).where(
                TrustSource.kind.in_(FETCHED_KINDS),
                or_(
                    TrustSource.last_attempt_at.is_(None),
                    TrustSource.last_attempt_at <= now - every,
                    (TrustSource.next_update <= now)
                    & (TrustSource.last_attempt_at < TrustSource.next_update),
                ),
            )
        )
    )


def refresh(source_id: uuid.UUID) -> TrustSource | None:
    """Fetch and read the source, then keep the new copy, or keep the old one and say why.

    The fetch happens with no transaction open: no lock is held while a list server answers.
    """
    source = db.session.get(TrustSource, source_id, options=[undefer(TrustSource.entries)])
    if source is None or not source.fetched:
        return None
    wanted = _wanted(source)
    asked = _what_is_fetched(source)
    db.session.rollback()
    now = clock.now()
    fetcher = settings.current().fetcher
    try:
        copy = read_source(wanted, lambda url: fetcher.get_bytes(url, cache_ttl=0), now)
        error = None
    except SourceError as exc:
        copy, error = None, exc.reason
    source = db.session.get(TrustSource, source_id, with_for_update=True)
    if source is None or _what_is_fetched(source) != asked:
        return None  # deleted, or changed while fetched: the change queued a refresh of its own
    source.last_attempt_at = now
    if copy is None:
        source.last_error = error
        source.last_error_at = now
        db.session.flush()
        return source
    source.entries = copy.entries
    source.entry_count = len(copy.entries)
    source.lists = copy.lists
    source.sequence_number = copy.sequence_number
    source.issued_at = copy.issued_at
    source.next_update = copy.next_update
    source.refreshed_at = now
    source.version += 1
    if copy.problems:
        source.last_error = "Kept the last good copy of: " + "; ".join(copy.problems)
        source.last_error_at = now
    else:
        source.last_error = None
        source.last_error_at = None
    db.session.flush()
    return source


def _what_is_fetched(source: TrustSource) -> tuple:
    return (source.url, source.certificates_pem, source.territories, source.service_types)


def _wanted(source: TrustSource) -> Wanted:
    return Wanted(
        kind=source.kind,
        url=source.url or "",
        signers=tuple(load_pem_anchors(source.certificates_pem)),
        territories=tuple(source.territories or ()),
        service_types=tuple(source.service_types or ()),
        previous_entries=tuple(source.entries or ()),
        previous_lists=tuple(source.lists or ()),
    )


# -- what the page and the API show ----------------------------------------------------------


@dataclass(frozen=True)
class Freshness:
    stale: bool
    # Lists past their next update: "trusted list of DE (next update 2026-...)".
    stale_lists: list[str]


def freshness(source: TrustSource, now: datetime) -> Freshness:
    late = [
        info
        for info in source.lists or []
        if info.get("next_update") and datetime.fromisoformat(info["next_update"]) < now
    ]
    return Freshness(bool(late), [list_label(source, info) for info in late])


def certificate_count(source: TrustSource) -> int:
    if source.kind in PEM_KINDS:
        return len(load_pem_anchors(source.certificates_pem))
    return source.entry_count


def list_label(source: TrustSource, info: dict[str, Any]) -> str:
    territory = info.get("territory")
    if source.kind is SourceKind.LIST_OF_TRUSTED_LISTS and info is (source.lists or [None])[0]:
        return "the List of Trusted Lists"
    return f"trusted list of {territory}" if territory else f"'{source.name}'"
