"""What a trust list says, whatever its format: the readers in this package turn an ETSI
TS 119 612 trusted list (or the EU List of Trusted Lists), an ETSI TS 119 602 List of
Trusted Entities, or an ISO/IEC 18013-5 VICAL into these frozen values, after checking the
list's signature. Nothing here touches a database, Flask or the network: the caller fetches
the bytes and keeps what it learns."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography import x509

# The largest national trusted lists are a few megabytes; anything far beyond is not a list.
MAX_LIST_BYTES = 32 * 1024 * 1024


class TrustListError(Exception):
    """A list was refused. The reason is plain and user-facing ("the list's signature does
    not match its content", "the list is not signed by any of the given signers"), so staff
    can act on it without reading XML or CBOR."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ListedService:
    """One certificate a list vouches for, with the status the list gives it now."""

    certificate: x509.Certificate
    # ETSI service type URI (http://uri.etsi.org/TrstSvc/Svctype/CA/QC), the LoTE service
    # type as written, or "iaca" for a VICAL entry.
    service_type: str
    # ETSI status URI, the LoTE status as written, or "granted" for a VICAL entry (a VICAL
    # lists only what its provider currently vouches for).
    status: str
    status_starting: datetime | None
    # The trust service provider, trusted entity or issuing authority.
    entity_name: str
    territory: str | None
    # VICAL: the docTypes the IACA may sign documents of.
    doctypes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ListPointer:
    """Where a List of Trusted Lists says a member state's list lives, and who signs it."""

    location: str
    territory: str
    mime_type: str | None
    signer_certificates: tuple[x509.Certificate, ...]


# Values of TrustList.kind.
ETSI_TSL = "etsi_tsl"
EU_LOTL = "eu_lotl"
ETSI_LOTE = "etsi_lote"
VICAL = "vical"


@dataclass(frozen=True)
class TrustList:
    """A list whose signature has been verified. ``next_update`` is reported, never
    enforced: a list past its next update is still read, and the caller decides."""

    kind: str
    territory: str | None
    operator: str
    sequence_number: int | None
    issued_at: datetime
    next_update: datetime | None
    services: tuple[ListedService, ...]
    pointers: tuple[ListPointer, ...]


# ETSI TS 119 612 v2 "granted", and the v1 statuses that meant the same before eIDAS
# ("undersupervision" and "accredited"), read as granted.
GRANTED_STATUSES = frozenset(
    {
        "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted",
        "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/undersupervision",
        "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/accredited",
        "granted",
    }
)


def granted(
    trust_list: TrustList, service_types: Collection[str] | None, now: datetime
) -> list[ListedService]:
    """The services whose current status is granted (and started by ``now``), optionally only
    those of the given service types. A status URI of another scheme whose last segment is
    "granted" (a List of Trusted Entities may define its own) counts as granted too."""
    return [
        service
        for service in trust_list.services
        if is_granted(service.status)
        and (service.status_starting is None or service.status_starting <= now)
        and (service_types is None or service.service_type in service_types)
    ]


def is_granted(status: str) -> bool:
    return status in GRANTED_STATUSES or status.rsplit("/", 1)[-1] == "granted"


def parse_datetime(text: str | None) -> datetime | None:
    """An xsd:dateTime / RFC 3339 date-time as an aware datetime; one without an offset is
    taken as UTC (TS 119 612 §5.1.5 asks for UTC). None when absent or unreadable."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
