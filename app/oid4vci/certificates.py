"""An issuer's X.509 certificates: a root per organization and an issuing certificate per
issuer key, for the ``x5c`` header of SD-JWT VCs and status list tokens (HAIP 1.0 §6.1.1,
SD-JWT VC §3.5 "X.509 Certificates").

The issuing certificate names the issuer identifier as a uniformResourceIdentifier
subjectAltName, so a verifier binds it to the credential's ``iss`` (SD-JWT VC §3.5). The root
is the trust anchor verifiers configure; it never travels in ``x5c`` (HAIP 1.0 §6.1.1: "the
trust anchor certificate MUST NOT be included"). Pure: no database, no Flask.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.trust.x5c import key_usage

ROOT_VALIDITY = timedelta(days=3650)
# Clocks of verifiers run behind too: a certificate is valid from a little before it is made.
BACKDATE = timedelta(minutes=5)


# What verify_directly_issued_by raises for a certificate its supposed issuer did not sign.
_NOT_SIGNED = (ValueError, TypeError, InvalidSignature)


class CertificateChainError(ValueError):
    """An uploaded chain that cannot serve the issuer key; the message says why."""


def _name(common_name: str, organization: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization[:64] or "Issuer"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64]),
        ]
    )


def make_root(
    root_key: ec.EllipticCurvePrivateKey, organization: str, now: datetime
) -> x509.Certificate:
    """A self-signed CA that may sign issuing certificates only (pathLen 0)."""
    name = _name(f"{organization} issuer root"[:64], organization)
    public = root_key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + ROOT_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(root_key, hashes.SHA256())
    )


def make_issuing_certificate(
    *,
    root: x509.Certificate,
    root_key: ec.EllipticCurvePrivateKey,
    issuer_key: ec.EllipticCurvePublicKey,
    issuer: str,
    organization: str,
    now: datetime,
) -> x509.Certificate:
    """The end-entity certificate of the issuer key, signed by the root, naming ``issuer``.

    Valid as long as the root: verifiers check the chain when a credential is presented, so
    an issuing certificate shorter than the credentials it signs would end them early (a
    credential may be valid for up to ten years, or carry no ``exp`` at all)."""
    ends = root.not_valid_after_utc
    return (
        x509.CertificateBuilder()
        .subject_name(_name(f"{organization} credential issuer"[:64], organization))
        .issuer_name(root.subject)
        .public_key(issuer_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(ends)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(key_usage(cert_sign=False), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.UniformResourceIdentifier(issuer)]), critical=False
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(issuer_key), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(root.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
        .sign(root_key, hashes.SHA256())
    )


def to_pem(certificates: Sequence[x509.Certificate]) -> str:
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certificates)


def from_pem(pem: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise CertificateChainError("The chain is not PEM certificates") from exc


def x5c_of(certificates: Sequence[x509.Certificate]) -> tuple[str, ...]:
    """RFC 7515 §4.1.6: base64 (not base64url) DER, leaf first."""
    return tuple(
        base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode("ascii")
        for c in certificates
    )


def names_issuer(leaf: x509.Certificate, issuer: str) -> bool:
    """Whether the certificate names ``issuer`` as a URI subjectAltName (SD-JWT VC §3.5)."""
    try:
        san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return issuer in san.get_values_for_type(x509.UniformResourceIdentifier)


def split_uploaded_chain(
    pem: str, issuer_key: ec.EllipticCurvePublicKey, issuer: str, now: datetime
) -> tuple[list[x509.Certificate], x509.Certificate]:
    """An uploaded chain (PEM, the issuing certificate first, ending at the organization's
    root) as the ``x5c`` part and the root. Refused: a leaf for another key or issuer, a
    certificate not signed by the next, a last certificate that is not self-signed, dates
    outside validity."""
    chain = from_pem(pem)
    if len(chain) < 2:
        raise CertificateChainError(
            "Upload the issuing certificate and the certificates up to the root, root last"
        )
    leaf, root = chain[0], chain[-1]
    if leaf.public_key() != issuer_key:
        raise CertificateChainError("The first certificate is not for the current issuer key")
    if not names_issuer(leaf, issuer):
        raise CertificateChainError(
            f"The first certificate does not name {issuer} as a URI subjectAltName"
        )
    for cert, signer in itertools.pairwise(chain):
        try:
            cert.verify_directly_issued_by(signer)
        except _NOT_SIGNED as exc:
            raise CertificateChainError(
                "A certificate in the chain is not signed by the next one"
            ) from exc
    try:
        root.verify_directly_issued_by(root)
    except _NOT_SIGNED as exc:
        raise CertificateChainError("The last certificate is not a self-signed root") from exc
    for cert in chain:
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            raise CertificateChainError("A certificate in the chain is not valid now")
    return chain[:-1], root
