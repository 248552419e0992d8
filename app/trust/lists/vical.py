"""ISO/IEC 18013-5 Annex C Verified Issuer Certificate Authority Lists: a COSE_Sign1 over a
CBOR map listing the IACA certificates of issuing authorities."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cryptography import x509

from app.trust.lists.model import TrustList


def read_vical(
    document: bytes, signer_anchors: Sequence[x509.Certificate], now: datetime
) -> TrustList:
    """Verify the COSE_Sign1 (its x5chain must lead to one of ``signer_anchors``, valid at
    ``now``) and read the IACA certificates with their docTypes. Raises TrustListError."""
    raise NotImplementedError
