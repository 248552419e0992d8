"""Anchors that come from an organization's trust sources, and what they say about an issuer.

A verification that chooses trust sources trusts an x5c issuer (an SD-JWT VC signer, an mdoc
document signer) when its validated chain ends at a certificate one of those sources vouches
for now: a PEM anchor, or a service a trusted list, List of Trusted Entities or VICAL lists
as granted. The readers are handed every certificate the sources know of, granted or not, so
that a chain ending at a withdrawn service or at a list past its next update still validates
and the refusal can say so plainly ("its service was withdrawn on ...") instead of "does not
lead to a trusted anchor". No database and no Flask: the caller builds ``SourceTrust`` from
what it keeps.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cryptography import x509


class Standing(enum.StrEnum):
    """Whether a source's certificate is trusted now."""

    GRANTED = "GRANTED"
    # The list no longer grants the service (withdrawn, suspended, revoked ...).
    WITHDRAWN = "WITHDRAWN"
    # The list is past its next update and the deployment refuses stale lists.
    STALE = "STALE"


@dataclass(frozen=True)
class SourceAnchor:
    """One certificate a trust source names, and why it is or is not trusted.

    ``refusal`` is the plain reason a chain ending here is refused (None when granted).
    """

    certificate: x509.Certificate = field(repr=False)
    standing: Standing
    refusal: str | None = None


@dataclass(frozen=True)
class SourceTrust:
    """The certificates a verification's trust sources name, and how to explain a miss.

    ``not_listed`` is the reason for a chain that leads to none of them ("Issuer certificate
    is not in the trusted list 'X' (trusted list of DE, sequence 123)").
    """

    anchors: tuple[SourceAnchor, ...]
    not_listed: str

    def certificates(self) -> list[x509.Certificate]:
        """Every certificate to validate chains with, whatever its standing."""
        return list(dict.fromkeys(anchor.certificate for anchor in self.anchors))

    def granted(self) -> list[x509.Certificate]:
        return [a.certificate for a in self.anchors if a.standing is Standing.GRANTED]

    def refusal(self, path: Sequence[x509.Certificate]) -> str | None:
        """Why a validated path (leaf first, anchor last) is not trusted by these sources;
        None when one of its certificates is granted now.

        Any certificate of the path counts, as with pinned PEM entries: a list may name an
        intermediate CA as well as its root.
        """
        standing = {cert: [] for cert in path}  # type: dict[x509.Certificate, list[SourceAnchor]]
        for anchor in self.anchors:
            if anchor.certificate in standing:
                standing[anchor.certificate].append(anchor)
        found = [anchor for cert in reversed(path) for anchor in standing[cert]]
        if any(anchor.standing is Standing.GRANTED for anchor in found):
            return None
        # A stale list says more than a withdrawn service: it may be granted once refreshed.
        for wanted in (Standing.STALE, Standing.WITHDRAWN):
            for anchor in found:
                if anchor.standing is wanted and anchor.refusal:
                    return anchor.refusal
        return self.not_listed


def key_identifier(cert: x509.Certificate) -> bytes:
    """The certificate's key identifier: its subjectKeyIdentifier, or computed from its key
    as RFC 5280 4.2.1.2 (1) says when it has none (the SHA-1 of the subjectPublicKey)."""
    try:
        return cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except x509.ExtensionNotFound:
        return x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest


def authority_key_ids(certificates: Sequence[x509.Certificate]) -> list[str]:
    """OpenID4VP 1.0 §6.1.1.1 ``aki`` values: base64url (no padding) of the key identifier a
    certificate issued by each anchor names in its authorityKeyIdentifier."""
    values = (
        base64.urlsafe_b64encode(key_identifier(cert)).rstrip(b"=").decode()
        for cert in certificates
    )
    return list(dict.fromkeys(values))


def describe_time(moment: datetime | None) -> str:
    """How list dates read in reasons: minutes, UTC."""
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "an unknown date"
