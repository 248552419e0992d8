"""An organization's own access certificate: the CSR it sends its registrar and the chain it
gets back. No database here (registration certificates: ``app.oid4vp.registration_certificate``).

In the EU each relying party registers with a registrar and holds an access certificate of its
own, so that a wallet shows whom it answers. The key is made here and never leaves the service;
what leaves is a PKCS#10 request (RFC 2986) signed by it. The chain that comes back is checked
once, at upload, for everything a wallet would refuse later: a leaf for another key, a chain out
of order or with a broken signature, a certificate outside its validity. Each refusal says what
is wrong in words staff can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.oid4vp import wrpac
from app.oid4vp.client import X509_HASH, X509_SAN_DNS, X509Client, x509_hash

# A chain from a registrar is a leaf and a few CAs; anything longer is not one.
MAX_CHAIN_LENGTH = 10
MAX_CHAIN_PEM = 64 * 1024
# ISO 3166-1 alpha-2, as X.520 countryName requires.
COUNTRY_LENGTH = 2
# X.520 ub-common-name and ub-organization-name.
MAX_NAME = 64


class AccessCertificateError(ValueError):
    """An upload or a request that cannot be taken; the message says what to fix."""


@dataclass(frozen=True)
class EuDetails:
    """What ETSI TS 119 411-8 asks of an access certificate's request beyond the names: the
    organizationIdentifier (GEN-6.6.1-05, as EN 319 412-1 §5.1.4 writes it) and a contact of
    the relying party in subjectAltName (GEN-6.6.1-07): a support website or an e-mail."""

    organization_identifier: str
    contact_uri: str | None = None
    contact_email: str | None = None


def make_csr(
    key: ec.EllipticCurvePrivateKey,
    organization_name: str,
    country: str,
    dns_name: str | None,
    eu: EuDetails | None = None,
) -> bytes:
    """A PKCS#10 request (PEM) signed by ``key``: CN and O the organization's name, C the
    country, and a subjectAltName dNSName when the deployment's host is to be named (which
    lets the client identifier be ``x509_san_dns:<host>``). For an EU access certificate
    (``eu``), also the organizationIdentifier and the contact TS 119 411-8 asks for."""
    name = organization_name.strip()[:MAX_NAME]
    if not name:
        raise AccessCertificateError("The organization has no name to put in the certificate")
    attributes = [
        x509.NameAttribute(NameOID.COUNTRY_NAME, check_country(country)),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, name),
    ]
    names: list[x509.GeneralName] = [x509.DNSName(dns_name)] if dns_name else []
    if eu is not None:
        problem = wrpac.organization_identifier_problem(eu.organization_identifier)
        if problem:
            raise AccessCertificateError(problem)
        if not eu.contact_uri and not eu.contact_email:
            raise AccessCertificateError(
                "ETSI TS 119 411-8 GEN-6.6.1-07: give a contact of the relying party, a "
                "support website (contact_uri) or an e-mail address (contact_email)"
            )
        attributes.append(
            x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, eu.organization_identifier)
        )
        if eu.contact_uri:
            names.append(x509.UniformResourceIdentifier(eu.contact_uri))
        if eu.contact_email:
            names.append(x509.RFC822Name(eu.contact_email))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, name))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attributes))
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    csr = builder.sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM)


def check_country(country: str) -> str:
    value = (country or "").strip().upper()
    if len(value) != COUNTRY_LENGTH or not value.isascii() or not value.isalpha():
        raise AccessCertificateError(
            "Country must be a two-letter ISO 3166 code, such as DE, FR or NL"
        )
    return value


def read_chain(
    chain_pem: str, public_key: ec.EllipticCurvePublicKey, now: datetime
) -> list[x509.Certificate]:
    """The uploaded chain (leaf first), once it is one a wallet can follow to its anchor."""
    if len(chain_pem) > MAX_CHAIN_PEM:
        raise AccessCertificateError(f"The chain is longer than {MAX_CHAIN_PEM // 1024} KiB")
    try:
        chain = x509.load_pem_x509_certificates(chain_pem.encode("utf-8"))
    except ValueError:
        raise AccessCertificateError(
            "The upload holds no PEM certificates (-----BEGIN CERTIFICATE----- blocks)"
        ) from None
    if len(chain) > MAX_CHAIN_LENGTH:
        raise AccessCertificateError(f"The chain has more than {MAX_CHAIN_LENGTH} certificates")
    ours = [_public_der(cert.public_key()) == _public_der(public_key) for cert in chain]
    if not ours[0] and any(ours):
        raise AccessCertificateError(
            f"The chain is out of order: the certificate for this organization's key is number "
            f"{ours.index(True) + 1}; put it first, then each issuer in turn"
        )
    if not ours[0]:
        raise AccessCertificateError(
            "The first certificate is not for the key of this organization's signing request: "
            "upload the certificate issued for the CSR downloaded here, leaf first"
        )
    for position, (child, parent) in enumerate(pairwise(chain), start=1):
        try:
            child.verify_directly_issued_by(parent)
        except (ValueError, TypeError, InvalidSignature):
            raise AccessCertificateError(
                f"Certificate {position} of the chain is not issued by certificate "
                f"{position + 1}: put the leaf first, then each issuer in turn"
            ) from None
    for position, cert in enumerate(chain, start=1):
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            raise AccessCertificateError(
                f"Certificate {position} of the chain ({cert.subject.rfc4514_string()}) is valid "
                f"from {cert.not_valid_before_utc:%Y-%m-%d %H:%M} to "
                f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC, not now"
            )
    return chain


def client_identifier(
    leaf: x509.Certificate, host: str, *, hash_only: bool = False
) -> tuple[str, str]:
    """The prefix and name wallets see (OpenID4VP 1.0 §5.9.3): ``x509_san_dns`` when the leaf
    names the deployment's host in a dNSName (the response URI's host must then be that name),
    else ``x509_hash`` of the leaf, which any host can use. ``hash_only`` (HAIP 1.0, which
    allows ``x509_hash`` alone) always gives ``x509_hash``."""
    host = host.lower().rstrip(".")
    if not hash_only and host and host in dns_names(leaf):
        return X509_SAN_DNS, host
    return X509_HASH, x509_hash(leaf)


def dns_names(cert: x509.Certificate) -> list[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [name.lower().rstrip(".") for name in san.get_values_for_type(x509.DNSName)]


def signing_client(
    chain_pem: str, key: ec.EllipticCurvePrivateKey, prefix: str, name: str
) -> X509Client:
    """The client that signs the organization's Request Objects with the stored chain."""
    chain = tuple(x509.load_pem_x509_certificates(chain_pem.encode("utf-8")))
    return X509Client(prefix, name, chain, key)


def chain_pem_of(chain: list[x509.Certificate]) -> str:
    return "".join(cert.public_bytes(serialization.Encoding.PEM).decode("ascii") for cert in chain)


def _public_der(key: Any) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
