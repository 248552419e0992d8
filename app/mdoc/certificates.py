"""The certificates an mdoc issuer signs with (ISO/IEC 18013-5 Annex B).

An IACA root (B.1.2): self-signed, a CA that may certify one level below it (pathLen 0),
keyCertSign and cRLSign only, naming the organization and its country. A document signer
(B.1.4) certified by it: digitalSignature only, extendedKeyUsage mdlDS (1.0.18013.5.1.2),
the same country. Both carry key identifiers and the issuer's alternative name (a URI where
the organization is reached), so a reader can tell who issued them. Pure: keys come in,
certificates go out; a key held in a PKCS#11 token signs like any other.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

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
        .add_extension(_key_usage(cert_sign=True), critical=True)
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
        .add_extension(_key_usage(cert_sign=False), critical=True)
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


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
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


def _serial() -> int:
    """RFC 5280 4.1.2.2: positive, at most 20 octets; 18 random bytes leave room."""
    return int.from_bytes(secrets.token_bytes(18), "big") | 1
