"""ETSI TS 119 612 trusted lists and the EU List of Trusted Lists: XML with an enveloped
XAdES signature."""

from __future__ import annotations

from collections.abc import Sequence

from cryptography import x509

from app.trust.lists.model import TrustList


def read_etsi_tsl(xml: bytes, signer_certificates: Sequence[x509.Certificate]) -> TrustList:
    """Verify the list's enveloped signature (its signing certificate, or that certificate's
    key, must be one of ``signer_certificates``) and read it. A List of Trusted Lists comes
    back with kind ``eu_lotl`` and its pointers filled; a member state list with kind
    ``etsi_tsl`` and its services. Raises TrustListError."""
    raise NotImplementedError
