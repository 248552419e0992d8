"""What a trust list says, whatever its format: the readers in this package turn an ETSI
TS 119 612 trusted list (or the EU List of Trusted Lists), an ETSI TS 119 602 List of
Trusted Entities, or an ISO/IEC 18013-5 VICAL into these frozen values, after checking the
list's signature. Nothing here touches a database, Flask or the network: the caller fetches
the bytes and keeps what it learns."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509


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


# ETSI TS 119 612 v2 "granted", and the v1 statuses that meant the same (TS 119 612 v1
# §5.5.4: "undersupervision" and "accredited" for a CA/QC service are read as granted).
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
    those of the given service types."""
    raise NotImplementedError
