"""ISO/IEC 18013-5 Annex C Verified Issuer Certificate Authority Lists: a COSE_Sign1 over a
CBOR map listing the IACA certificates of issuing authorities.

The VICAL signer's certificate comes in the COSE ``x5chain`` header (RFC 9360, label 33) and
must lead to one of the anchors the staff give (the VICAL provider's root), valid at ``now``;
the chain is walked as every other certificate chain here (``app.trust.x5c``). A VICAL lists
only the IACAs its provider vouches for today, so every entry is reported as granted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from cryptography import x509

from app.cose import CoseError, loads, read_sign1, x5chain
from app.trust.errors import TrustError
from app.trust.lists.model import (
    MAX_LIST_BYTES,
    VICAL,
    ListedService,
    TrustList,
    TrustListError,
    parse_datetime,
)
from app.trust.x5c import validate_chain

IACA = "iaca"
GRANTED = "granted"


def read_vical(
    document: bytes, signer_anchors: Sequence[x509.Certificate], now: datetime
) -> TrustList:
    """Verify the COSE_Sign1 (its x5chain must lead to one of ``signer_anchors``, valid at
    ``now``) and read the IACA certificates with their docTypes. Raises TrustListError."""
    if not signer_anchors:
        raise TrustListError("No VICAL signer anchors are given, so the VICAL cannot be trusted")
    if len(document) > MAX_LIST_BYTES:
        raise TrustListError("The VICAL is larger than a VICAL can be")
    try:
        sign1 = read_sign1(document, "The VICAL")
        chain = x5chain(sign1)
        if not chain:
            raise TrustListError("The VICAL carries no signer certificate (x5chain)")
        try:
            validate_chain(chain, signer_anchors, now)
        except TrustError as exc:
            raise TrustListError(f"The VICAL signer is not trusted: {exc.reason}") from None
        sign1.verify(chain[0].public_key())
        content = loads(sign1.payload or b"", "The VICAL content")
    except CoseError as exc:
        raise TrustListError(exc.reason) from None
    return _read(content)


def _read(content: Any) -> TrustList:
    if not isinstance(content, dict):
        raise TrustListError("The VICAL content is not a map")
    provider = content.get("vicalProvider")
    if not isinstance(provider, str):
        raise TrustListError("The VICAL names no provider")
    issued = _datetime(content.get("date"))
    if issued is None:
        raise TrustListError("The VICAL gives no valid date")
    infos = content.get("certificateInfos")
    if not isinstance(infos, list):
        raise TrustListError("The VICAL lists no certificates")
    issue_id = content.get("vicalIssueID")
    return TrustList(
        kind=VICAL,
        territory=None,
        operator=provider,
        sequence_number=issue_id if isinstance(issue_id, int) else None,
        issued_at=issued,
        next_update=_datetime(content.get("nextUpdate")),
        services=tuple(s for s in (_service(info) for info in infos) if s is not None),
        pointers=(),
    )


def _service(info: Any) -> ListedService | None:
    """One CertificateInfo; an entry whose certificate cannot be read is left out rather than
    refusing the VICAL (the other issuing authorities stay usable)."""
    if not isinstance(info, dict) or not isinstance(info.get("certificate"), bytes):
        return None
    try:
        cert = x509.load_der_x509_certificate(info["certificate"])
    except ValueError:
        return None
    doctypes = info.get("docType")
    if not isinstance(doctypes, list):
        doctypes = []
    authority = info.get("issuingAuthority")
    country = info.get("issuingCountry")
    return ListedService(
        certificate=cert,
        service_type=IACA,
        status=GRANTED,
        status_starting=None,
        entity_name=authority if isinstance(authority, str) else cert.subject.rfc4514_string(),
        territory=country if isinstance(country, str) else None,
        doctypes=tuple(d for d in doctypes if isinstance(d, str)),
    )


def _datetime(value: Any) -> datetime | None:
    """18013-5 writes tdate (tag 0) or full-date (tag 1004); cbor2 decodes both."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        return parse_datetime(value)
    return None
