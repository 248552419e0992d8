"""Issuer keys from an ``x5c`` certificate chain (RFC 7515 4.1.6; SD-JWT VC 3.5, "X.509
Certificates").

The chain is validated by hand, in the order RFC 5280 6.1 walks it, because ecosystem
issuer certificates (document signers, PID providers) do not follow the web PKI profile that
ready-made verifiers enforce: each certificate valid at ``now``, each signed by the next,
intermediates marked as CAs within their path length, ending at (or signed by) a configured
anchor. Anchors are operator input and are not themselves validated (RFC 5280 6.1.1 (d)).
Revocation of certificates (CRL, OCSP) is not checked.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from app.recently_used import RecentlyUsed
from app.sdjwt import PublicKey
from app.trust.errors import TrustError

MAX_CHAIN_LENGTH = 8


def key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    """The KeyUsage every certificate Verity makes carries: a CA's (``keyCertSign``,
    ``cRLSign``) or a signer's (``digitalSignature``), nothing else (RFC 5280 4.2.1.3)."""
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def fingerprint(cert: x509.Certificate) -> str:
    """SHA-256 over the DER encoding, lowercase hex: how anchors are pinned by value."""
    return cert.fingerprint(hashes.SHA256()).hex()


def load_pem_anchors(pem: str | bytes) -> list[x509.Certificate]:
    """Every certificate in a PEM bundle, for configuring trust anchors."""
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    return x509.load_pem_x509_certificates(data)


def parse_x5c(value: Any) -> list[x509.Certificate]:
    """RFC 7515 4.1.6: a JSON array of base64 (not base64url) DER certificates, leaf first."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise TrustError("Header x5c is not a list of certificates")
    if len(value) > MAX_CHAIN_LENGTH:
        raise TrustError(f"Header x5c holds more than {MAX_CHAIN_LENGTH} certificates")
    try:
        return [x509.load_der_x509_certificate(base64.b64decode(v, validate=True)) for v in value]
    except (ValueError, binascii.Error) as exc:
        raise TrustError("Header x5c holds a certificate that cannot be read") from exc


def validate_chain(
    chain: Sequence[x509.Certificate], anchors: Sequence[x509.Certificate], now: datetime
) -> tuple[x509.Certificate, ...]:
    """Return the validated path, leaf first and the anchor last.

    Of the walk below only the validity dates depend on ``now``; the signatures, CA flags,
    path lengths and key usages depend on the certificates alone. So a path that validated once
    is kept (``VALIDATED_PATHS``) and, when the same chain comes again under the same anchors,
    only its dates are checked again, in the same order and with the same reasons: the answer is
    the one a whole walk would give. A document signer or a PID provider certificate signs
    thousands of credentials, so most chains are ones seen before.
    """
    if not anchors:
        raise TrustError("No trust anchors are configured, so certificate chains cannot be trusted")
    key = (tuple(chain), tuple(anchors))
    known = VALIDATED_PATHS.get(key)
    if known is None:
        known = _walk(chain, anchors, now)
        VALIDATED_PATHS.put(key, known)
        return known.path
    for index, cert in enumerate(known.path[: known.from_chain]):
        _check_validity(cert, index, now)
    return known.path


@dataclass(frozen=True)
class ValidatedPath:
    """A path ``_walk`` accepted: leaf first, anchor last; its first ``from_chain`` come from
    the chain presented (the anchor is one of them when the chain carried it)."""

    path: tuple[x509.Certificate, ...]
    from_chain: int


# Only successes are kept, so a presented chain can enter it only by leading to a configured
# anchor. Certificates compare and hash by their DER encoding.
VALIDATED_PATHS: RecentlyUsed[tuple, ValidatedPath] = RecentlyUsed(size=256)


def _walk(
    chain: Sequence[x509.Certificate], anchors: Sequence[x509.Certificate], now: datetime
) -> ValidatedPath:
    for index, cert in enumerate(chain):
        _check_validity(cert, index, now)
        if index > 0:
            _check_ca(cert, index)
        if any(cert == anchor for anchor in anchors):
            return ValidatedPath(tuple(chain[: index + 1]), index + 1)
        issuing_anchor = _issuing_anchor(cert, anchors)
        if issuing_anchor is not None:
            return ValidatedPath((*chain[: index + 1], issuing_anchor), index + 1)
        if index + 1 < len(chain):
            _check_issued_by(cert, chain[index + 1], index)
    raise TrustError("Certificate chain does not lead to a trusted anchor")


def leaf_key(leaf: x509.Certificate) -> PublicKey:
    """The leaf's key, if it may sign: keyUsage, when present, must allow digitalSignature."""
    try:
        usage = leaf.extensions.get_extension_for_class(x509.KeyUsage).value
        if not usage.digital_signature:
            raise TrustError("Issuer certificate does not allow digital signatures (keyUsage)")
    except x509.ExtensionNotFound:
        pass
    key = leaf.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | rsa.RSAPublicKey):
        raise TrustError("Issuer certificate holds a key type that is not supported")
    return key


def bind_identity(leaf: x509.Certificate, iss: str | None) -> str:
    """The issuer identifier the leaf certificate vouches for.

    SD-JWT VC 3.5: an HTTPS ``iss`` must match a uniformResourceIdentifier SAN of the leaf, or
    its host a dNSName SAN. Any other ``iss`` must equal a URI SAN, so a credential cannot name
    an issuer its certificate does not. Without ``iss`` the issuer is the certificate's
    subject: its first URI SAN, else its first dNSName SAN, else its distinguished name.
    """
    uris, dns_names = _subject_alt_names(leaf)
    if iss is None:
        return next(iter(uris or dns_names), leaf.subject.rfc4514_string())
    if iss in uris:
        return iss
    parts = urlsplit(iss)
    host = (parts.hostname or "").rstrip(".")
    if parts.scheme == "https" and host and host in dns_names:
        return iss
    raise TrustError(f"Issuer certificate does not name {iss} in its subjectAltName")


def _subject_alt_names(cert: x509.Certificate) -> tuple[list[str], list[str]]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [], []
    uris = san.get_values_for_type(x509.UniformResourceIdentifier)
    dns_names = [name.lower().rstrip(".") for name in san.get_values_for_type(x509.DNSName)]
    return uris, dns_names


def _describe(index: int) -> str:
    return "Issuer certificate" if index == 0 else f"Certificate {index + 1} in the chain"


def _check_validity(cert: x509.Certificate, index: int, now: datetime) -> None:
    if now < cert.not_valid_before_utc:
        raise TrustError(f"{_describe(index)} is not valid yet")
    if now > cert.not_valid_after_utc:
        raise TrustError(f"{_describe(index)} has expired")


def _check_ca(cert: x509.Certificate, index: int) -> None:
    """RFC 5280 6.1.4 (k), (l), (n): an issuing certificate must be a CA, within its path
    length, and allowed to sign certificates."""
    try:
        constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        constraints = None
    if constraints is None or not constraints.ca:
        raise TrustError(f"{_describe(index)} is not a CA certificate but signs one")
    below = index - 1  # intermediates between this certificate and the leaf
    if constraints.path_length is not None and below > constraints.path_length:
        raise TrustError(f"{_describe(index)} exceeds its path length constraint")
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
        if not usage.key_cert_sign:
            raise TrustError(f"{_describe(index)} may not sign certificates (keyUsage)")
    except x509.ExtensionNotFound:
        pass


def self_signed(cert: x509.Certificate) -> bool:
    """A certificate that names itself as issuer and verifies under its own key: a root."""
    return _signed_by(cert, cert)


def _signed_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _issuing_anchor(
    cert: x509.Certificate, anchors: Sequence[x509.Certificate]
) -> x509.Certificate | None:
    return next((anchor for anchor in anchors if _signed_by(cert, anchor)), None)


def _check_issued_by(cert: x509.Certificate, issuer: x509.Certificate, index: int) -> None:
    if not _signed_by(cert, issuer):
        raise TrustError(f"{_describe(index)} is not signed by the next certificate in the chain")
