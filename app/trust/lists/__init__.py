"""Readers of signed trust lists: ETSI TS 119 612 trusted lists and the EU List of Trusted
Lists (XML, XAdES), ETSI TS 119 602 Lists of Trusted Entities (JSON, JAdES) and ISO/IEC
18013-5 VICALs (COSE_Sign1 over CBOR). Each reader takes bytes and the signers the staff
trust, verifies the signature and returns a ``TrustList``, or raises ``TrustListError``."""

from app.trust.lists.etsi import read_etsi_tsl
from app.trust.lists.lote import read_lote
from app.trust.lists.model import (
    GRANTED_STATUSES,
    ListedService,
    ListPointer,
    TrustList,
    TrustListError,
    granted,
)
from app.trust.lists.vical import read_vical

__all__ = [
    "GRANTED_STATUSES",
    "ListPointer",
    "ListedService",
    "TrustList",
    "TrustListError",
    "granted",
    "read_etsi_tsl",
    "read_lote",
    "read_vical",
]
