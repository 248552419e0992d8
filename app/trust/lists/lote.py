"""ETSI TS 119 602 Lists of Trusted Entities: JSON signed with JAdES (a JWS carrying its
signing certificate in ``x5c``)."""

from __future__ import annotations

from collections.abc import Sequence

from cryptography import x509

from app.trust.lists.model import TrustList


def read_lote(document: bytes, signer_certificates: Sequence[x509.Certificate]) -> TrustList:
    """Verify the JWS (compact or JSON serialization; the first ``x5c`` certificate, or its
    key, must be one of ``signer_certificates``) and read the list. Raises TrustListError."""
    raise NotImplementedError
