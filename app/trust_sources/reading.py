"""Fetching and reading one trust source: what a refresh would keep, or why it cannot.

No database and no Flask: ``read_source`` gets what the source asks for (``Wanted``), a
function that fetches bytes (the outbound fetcher, with its address rules and limits) and the
clock, and returns the copy to keep (``Copy``) or raises ``SourceError``. The EU List of
Trusted Lists is followed to the member states' lists; one of them failing keeps that
state's last good entries and says so, rather than dropping a whole continent.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from app.trust.errors import FetchError
from app.trust.lists import (
    ListedService,
    TrustList,
    TrustListError,
    read_etsi_tsl,
    read_lote,
    read_vical,
)
from app.trust.lists.model import EU_LOTL
from app.trust_sources.models import SourceKind

Fetch = Callable[[str], bytes]


class SourceError(Exception):
    """A refresh that keeps nothing new; ``reason`` is shown to staff as the last error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Wanted:
    """What a source asks for, read from its record before anything is fetched."""

    kind: SourceKind
    url: str
    signers: tuple[x509.Certificate, ...]
    territories: tuple[str, ...] = ()
    service_types: tuple[str, ...] = ()
    # The last good copy, for member state lists that fail this time.
    previous_entries: tuple[dict[str, Any], ...] = ()
    previous_lists: tuple[dict[str, Any], ...] = ()


@dataclass
class Copy:
    entries: list[dict[str, Any]]
    lists: list[dict[str, Any]]
    sequence_number: int | None
    issued_at: datetime | None
    next_update: datetime | None
    # Member state lists that could not be refreshed (their last good copy is kept).
    problems: list[str] = field(default_factory=list)


def read_source(wanted: Wanted, fetch: Fetch, now: datetime) -> Copy:
    if wanted.kind is SourceKind.LIST_OF_TRUSTED_LISTS:
        return _read_lotl(wanted, fetch, now)
    trust_list = _read_one(wanted.kind, wanted.url, wanted.signers, fetch, now)
    return Copy(
        entries=_entries(trust_list, wanted),
        lists=[_list_info(trust_list, wanted.url)],
        sequence_number=trust_list.sequence_number,
        issued_at=trust_list.issued_at,
        next_update=trust_list.next_update,
    )


def _read_one(
    kind: SourceKind,
    url: str,
    signers: Sequence[x509.Certificate],
    fetch: Fetch,
    now: datetime,
) -> TrustList:
    try:
        document = fetch(url)
    except FetchError as exc:
        raise SourceError(f"Could not fetch {url}: {exc.reason}") from None
    try:
        if kind is SourceKind.LIST_OF_TRUSTED_ENTITIES:
            return read_lote(document, signers)
        if kind is SourceKind.VICAL:
            return read_vical(document, signers, now)
        trust_list = read_etsi_tsl(document, signers)
    except TrustListError as exc:
        raise SourceError(exc.reason) from None
    wants_lotl = kind is SourceKind.LIST_OF_TRUSTED_LISTS
    if (trust_list.kind == EU_LOTL) != wants_lotl:
        raise SourceError(
            f"{url} is a List of Trusted Lists: add it as that kind"
            if not wants_lotl
            else f"{url} is a trusted list, not a List of Trusted Lists"
        )
    return trust_list


def _read_lotl(wanted: Wanted, fetch: Fetch, now: datetime) -> Copy:
    lotl = _read_one(wanted.kind, wanted.url, wanted.signers, fetch, now)
    entries: list[dict[str, Any]] = []
    lists: list[dict[str, Any]] = [_list_info(lotl, wanted.url)]
    problems: list[str] = []
    for pointer in _followed(lotl, wanted):
        try:
            member = _read_one(
                SourceKind.TRUSTED_LIST, pointer.location, pointer.signer_certificates, fetch, now
            )
        except SourceError as exc:
            problems.append(f"trusted list of {pointer.territory}: {exc.reason}")
            entries += [e for e in wanted.previous_entries if e["territory"] == pointer.territory]
            kept = _previous_list(wanted, pointer.territory) or {
                "territory": pointer.territory,
                "url": pointer.location,
                "sequence_number": None,
                "issued_at": None,
                "next_update": None,
            }
            lists.append({**kept, "error": exc.reason})
            continue
        entries += _entries(member, wanted, territory=pointer.territory)
        lists.append(_list_info(member, pointer.location, territory=pointer.territory))
    return Copy(
        entries=entries,
        lists=lists,
        sequence_number=lotl.sequence_number,
        issued_at=lotl.issued_at,
        next_update=_earliest(info["next_update"] for info in lists),
        problems=problems,
    )


def _followed(lotl: TrustList, wanted: Wanted) -> list:
    """The XML lists of the wanted territories (the LoTL also points to PDF copies, and to
    itself), one per territory."""
    chosen: dict[str, Any] = {}
    for pointer in lotl.pointers:
        if wanted.territories and pointer.territory not in wanted.territories:
            continue
        if pointer.mime_type and "xml" not in pointer.mime_type.lower():
            continue
        if pointer.location == wanted.url or pointer.territory in chosen:
            continue
        chosen[pointer.territory] = pointer
    return list(chosen.values())


def _previous_list(wanted: Wanted, territory: str) -> dict[str, Any] | None:
    return next((i for i in wanted.previous_lists[1:] if i.get("territory") == territory), None)


def _entries(
    trust_list: TrustList, wanted: Wanted, territory: str | None = None
) -> list[dict[str, Any]]:
    types = set(wanted.service_types)
    return [
        _entry(service, territory or service.territory or trust_list.territory)
        for service in trust_list.services
        if wanted.kind is SourceKind.VICAL or not types or service.service_type in types
    ]


def _entry(service: ListedService, territory: str | None) -> dict[str, Any]:
    der = service.certificate.public_bytes(serialization.Encoding.DER)
    return {
        "certificate": base64.b64encode(der).decode(),
        "service_type": service.service_type,
        "status": service.status,
        "status_starting": _time(service.status_starting),
        "entity_name": service.entity_name,
        "territory": territory,
        "doctypes": list(service.doctypes),
    }


def _list_info(trust_list: TrustList, url: str, territory: str | None = None) -> dict[str, Any]:
    return {
        "territory": territory or trust_list.territory,
        "url": url,
        "sequence_number": trust_list.sequence_number,
        "issued_at": _time(trust_list.issued_at),
        "next_update": _time(trust_list.next_update),
        "error": None,
    }


def _time(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _earliest(values: Any) -> datetime | None:
    moments = [datetime.fromisoformat(v) for v in values if v]
    return min(moments) if moments else None
