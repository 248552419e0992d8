"""The certificates an mdoc issuer signs with (ISO/IEC 18013-5 Annex B).

An IACA root (B.1.2): self-signed, a CA that may certify one level below it (pathLen 0),
keyCertSign and cRLSign only, naming the organization and its country. A document signer
(B.1.4) certified by it: digitalSignature only, extendedKeyUsage mdlDS (1.0.18013.5.1.2),
the same country. Both carry key identifiers and the issuer's alternative name (a URI where
the organization is reached), so a reader can tell who issued them. Pure: keys come in,
certificates go out; a key held in a PKCS#11 token signs like any other.

An organization with an IACA of its own gets a signing request for its document signer key
instead, and its IACA's answer is checked here before it is used.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.x509.oid import NameOID

from app.trust.x5c import key_usage

MDOC_DS_EKU = x509.ObjectIdentifier("1.0.18013.5.1.2")
# Annex B: an IACA lives at most 20 years, a document signer at most 1,187 days (457 days
# of use); both are kept well within.
IACA_DAYS = 9 * 365
DOCUMENT_SIGNER_DAYS = 457


def _name(common_name: str, country: str, organization: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, country),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization[:64]),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64]),
        ]
    )


def iaca_certificate(
    key: ec.EllipticCurvePrivateKey, *, organization: str, country: str, url: str, now: datetime
) -> x509.Certificate:
    """Annex B.1.2: the self-signed root ``key`` makes, valid from ``now``."""
    name = _name(f"{organization} IACA", country, organization)
    public = key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(_serial())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=IACA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.IssuerAlternativeName([x509.UniformResourceIdentifier(url)]), critical=False
        )
        .sign(key, hashes.SHA256())
    )


def document_signer_certificate(
    iaca_key: ec.EllipticCurvePrivateKey,
    iaca: x509.Certificate,
    public: ec.EllipticCurvePublicKey,
    *,
    organization: str,
    country: str,
    url: str,
    now: datetime,
) -> x509.Certificate:
    """Annex B.1.4: ``public``'s certificate, issued by the IACA ``iaca``."""
    return (
        x509.CertificateBuilder()
        .subject_name(_name(f"{organization} Document Signer", country, organization))
        .issuer_name(iaca.subject)
        .public_key(public)
        .serial_number(_serial())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(min(now + timedelta(days=DOCUMENT_SIGNER_DAYS), iaca.not_valid_after_utc))
        .add_extension(key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([MDOC_DS_EKU]), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(iaca.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .add_extension(
            x509.IssuerAlternativeName([x509.UniformResourceIdentifier(url)]), critical=False
        )
        .sign(iaca_key, hashes.SHA256())
    )


def _serial() -> int:
    """RFC 5280 4.1.2.2: positive, at most 20 octets; 18 random bytes leave room."""
    return int.from_bytes(secrets.token_bytes(18), "big") | 1


# -- staff's own IACA ---------------------------------------------------------------------------

# Annex B: the IACA certifies the document signer itself (pathLenConstraint 0), so the chain an
# organization uploads is exactly those two certificates.
UPLOADED_CHAIN_LENGTH = 2
MAX_CHAIN_PEM = 64 * 1024


class DocumentSignerChainError(ValueError):
    """An uploaded chain that cannot sign mdocs; the message says what to fix."""


def signing_request(key: ec.EllipticCurvePrivateKey, *, organization: str, country: str) -> bytes:
    """A PKCS#10 request (PEM) for the document signer ``key``: the subject a generated
    document signer would carry, and the extensions Annex B.1.4 asks of its certificate, so
    the organization's CA sees what to put in it."""
    csr = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(_name(f"{organization} Document Signer", country, organization))
        .add_extension(key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([MDOC_DS_EKU]), critical=True)
        .sign(key, hashes.SHA256())
    )
    return csr.public_bytes(Encoding.PEM)


def read_uploaded_chain(
    chain_pem: str, public: ec.EllipticCurvePublicKey, now: datetime
) -> tuple[x509.Certificate, x509.Certificate]:
    """The document signer and the IACA of an uploaded chain (document signer first), once
    the first is for ``public``, issued by the second, both valid at ``now``, the first an
    mdoc document signer (EKU 1.0.18013.5.1.2) and the second a self-signed CA."""
    chain = _parse(chain_pem)
    ours = [_spki(cert.public_key()) == _spki(public) for cert in chain]
    if not ours[0] and any(ours):
        raise DocumentSignerChainError(
            f"The chain is out of order: the document signer certificate (for this "
            f"organization's key) is number {ours.index(True) + 1}; put it first, the IACA last"
        )
    if not ours[0]:
        raise DocumentSignerChainError(
            "The first certificate is not for this organization's document signer key: upload "
            "the certificate your IACA issued for the signing request downloaded here"
        )
    if len(chain) != UPLOADED_CHAIN_LENGTH:
        raise DocumentSignerChainError(
            "Upload two certificates: the document signer, then the IACA that issued it "
            "(ISO/IEC 18013-5 Annex B has no intermediate)"
        )
    signer, iaca = chain
    _check_issued_by(signer, iaca, "The document signer certificate is not issued by the IACA")
    _check_issued_by(iaca, iaca, "The IACA (the last certificate) is not self-signed")
    for position, cert in enumerate(chain, start=1):
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            raise DocumentSignerChainError(
                f"Certificate {position} of the chain ({cert.subject.rfc4514_string()}) is valid "
                f"from {cert.not_valid_before_utc:%Y-%m-%d %H:%M} to "
                f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC, not now"
            )
    if MDOC_DS_EKU not in _extension(signer, x509.ExtendedKeyUsage, ()):
        raise DocumentSignerChainError(
            "The document signer certificate lacks the mdoc document signer extended key "
            "usage (1.0.18013.5.1.2, ISO/IEC 18013-5 Annex B.1.4)"
        )
    constraints = _extension(iaca, x509.BasicConstraints, None)
    usage = _extension(iaca, x509.KeyUsage, None)
    if constraints is None or not constraints.ca or (usage is not None and not usage.key_cert_sign):
        raise DocumentSignerChainError(
            "The IACA (the last certificate) is not a CA: it needs basicConstraints cA and "
            "keyCertSign (ISO/IEC 18013-5 Annex B.1.2)"
        )
    return signer, iaca


def _parse(chain_pem: str) -> list[x509.Certificate]:
    if len(chain_pem) > MAX_CHAIN_PEM:
        raise DocumentSignerChainError(f"The chain is longer than {MAX_CHAIN_PEM // 1024} KiB")
    try:
        return x509.load_pem_x509_certificates(chain_pem.encode("utf-8"))
    except ValueError:
        raise DocumentSignerChainError(
            "The upload holds no PEM certificates (-----BEGIN CERTIFICATE----- blocks)"
        ) from None


def _check_issued_by(child: x509.Certificate, parent: x509.Certificate, message: str) -> None:
    try:
        child.verify_directly_issued_by(parent)
    except (ValueError, TypeError, InvalidSignature):
        raise DocumentSignerChainError(message) from None


def _extension(cert: x509.Certificate, kind: type, missing: Any) -> Any:
    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return missing


def _spki(public: Any) -> bytes:
    return public.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
