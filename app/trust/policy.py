"""Which issuers a verification accepts.

A verification's ``trusted_issuers`` is a list of strings:

- Empty: any issuer is accepted whose key was resolved and whose signature verifies.
- Not empty, the verification "pins its issuers". An issuer is accepted when any entry matches:

  - an identifier (an HTTPS ``iss`` URL or a DID), compared exactly as RFC 3986 6.2.1
    "simple string comparison" asks: no case folding, no trailing-slash games;
  - a certificate, given as PEM or as its SHA-256 fingerprint (hex; colons, case and a
    ``sha256:`` prefix ignored). It matches an x5c issuer whose validated path contains that
    certificate: the trust anchor pins every chain under it, an intermediate CA pins one
    issuing CA under a shared root, a leaf pins one issuer certificate.

An x5c issuer also matches an identifier entry equal to its identifier (its ``iss``, or its
certificate identity when the credential has none).

A did:prism is one DID in two spellings: the short form ``did:prism:<hash>`` (what a published
DID is known by, and what organizations pin) and the long form ``did:prism:<hash>:<operation>``
(the same DID carrying its creation operation). Both sides of the comparison are taken in the
short form, so a pin of either matches a credential signed under either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.trust.did_prism import short_form
from app.trust.errors import TrustError
from app.trust.issuers import ResolvedIssuer
from app.trust.x5c import fingerprint, load_pem_anchors

PEM_MARKER = "-----BEGIN CERTIFICATE-----"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Pins:
    identifiers: frozenset[str]
    fingerprints: frozenset[str]


def normalize_fingerprint(entry: str) -> str | None:
    """The lowercase hex of a SHA-256 fingerprint entry, or None if it is not one."""
    value = entry.strip().lower()
    value = value.removeprefix("sha256:").removeprefix("sha-256:").replace(":", "")
    return value if _HEX64.match(value) else None


def _certificates(entry: str, position: int) -> list:
    """The certificates of a PEM entry; the parser's own words (ASN.1 internals) stay inside."""
    try:
        certificates = load_pem_anchors(entry)
    except ValueError:  # UnicodeEncodeError included: PEM is ASCII
        certificates = []
    if not certificates:
        raise ValueError(
            f"entry {position} is not a readable PEM certificate "
            "(paste the whole -----BEGIN CERTIFICATE----- block)"
        )
    return certificates


def parse_pins(trusted_issuers: Sequence[str]) -> Pins:
    """Sort entries into identifiers and certificate fingerprints.

    Raises ValueError for a PEM entry that holds no readable certificate, so a verification
    can refuse a malformed list when it is saved rather than fail every presentation.
    """
    identifiers: set[str] = set()
    fingerprints: set[str] = set()
    for position, entry in enumerate(trusted_issuers):
        if PEM_MARKER in entry:
            certificates = _certificates(entry, position)
            fingerprints.update(fingerprint(cert) for cert in certificates)
        elif (digest := normalize_fingerprint(entry)) is not None:
            fingerprints.add(digest)
        else:
            identifiers.add(short_form(entry))
    return Pins(frozenset(identifiers), frozenset(fingerprints))


def is_trusted(resolved: ResolvedIssuer, trusted_issuers: Sequence[str]) -> bool:
    """Whether a verification with this ``trusted_issuers`` list accepts the issuer."""
    if not trusted_issuers:
        return True
    pins = parse_pins(trusted_issuers)
    if short_form(resolved.identifier) in pins.identifiers:
        return True
    return any(fingerprint(cert) in pins.fingerprints for cert in resolved.certificates)


def names_issuer(trusted_issuers: Sequence[str], name: str) -> bool:
    """Whether an identifier entry names the issuer ``name`` (as a credential gives it, not yet
    resolved): the comparison ``is_trusted`` makes, without reading certificates."""
    wanted = short_form(name)
    return any(PEM_MARKER not in entry and short_form(entry) == wanted for entry in trusted_issuers)


def require_trusted(resolved: ResolvedIssuer, trusted_issuers: Sequence[str]) -> None:
    """``is_trusted`` for callers that want the reason as an error."""
    if not is_trusted(resolved, trusted_issuers):
        raise TrustError(f"Issuer {resolved.identifier} is not among the trusted issuers")
