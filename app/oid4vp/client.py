"""How this verifier identifies itself to wallets: OpenID4VP 1.0 §5.9 Client Identifier Prefixes.

Three prefixes are spoken. ``redirect_uri:`` (§5.9.3) needs nothing configured: the client ID
is the response URI itself and the request cannot be signed, since a wallet would have no
trusted key to check it with. The two ``x509_*`` prefixes (§5.9.3) are for deployments holding a
certificate, and every Request Object is then a JWS carrying the chain in ``x5c`` so that the
wallet can check it against its trust anchors: under ``x509_san_dns:`` the client ID is a DNS
name from the leaf's subjectAltName, under ``x509_hash:`` it is the SHA-256 hash of the leaf
itself (the prefix the OpenID4VC High Assurance Interoperability Profile asks for).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any, Protocol
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from app.sdjwt.encoding import b64url_encode

# RFC 9101 §4 and OpenID4VP 1.0 §5: Request Objects are typed, so that no other JWT signed
# with the same key can be passed off as one.
REQUEST_OBJECT_TYPE = "oauth-authz-req+jwt"

# RFC 7518 §3.4: the ECDSA algorithm follows from the curve; the coordinate size fixes the
# length of R and S in the signature.
EC_ALGORITHMS: dict[str, tuple[str, hashes.HashAlgorithm, int]] = {
    "secp256r1": ("ES256", hashes.SHA256(), 32),
    "secp384r1": ("ES384", hashes.SHA384(), 48),
    "secp521r1": ("ES512", hashes.SHA512(), 66),
}


class ClientConfigError(ValueError):
    """The configured certificate or key cannot identify this verifier; says what to fix."""


# The Client Identifier Prefixes a deployment can be configured with (§5.9.3).
REDIRECT_URI = "redirect_uri"
X509_SAN_DNS = "x509_san_dns"
X509_HASH = "x509_hash"
X509_PREFIXES = (X509_SAN_DNS, X509_HASH)
PREFIXES = (REDIRECT_URI, *X509_PREFIXES)


class ClientIdentity(Protocol):
    """A Client Identifier Prefix: the client ID it gives, and how it secures Request Objects."""

    @property
    def prefix(self) -> str: ...

    @property
    def signed(self) -> bool: ...

    @property
    def signing_alg(self) -> str | None: ...

    def client_id(self, response_uri: str) -> str: ...

    def request_object(self, claims: dict[str, Any]) -> str: ...


@dataclass(frozen=True)
class RedirectUriClient:
    """``redirect_uri:``: unsigned requests, the client ID is the response URI (§5.9.3)."""

    prefix = REDIRECT_URI
    signed = False
    signing_alg = None

    def client_id(self, response_uri: str) -> str:
        # With direct_post the "redirect URI" this prefix names is the response URI (§5.9.3).
        return f"redirect_uri:{response_uri}"

    def request_object(self, claims: dict[str, Any]) -> str:
        """An unsecured JWT (RFC 7519 §6): ``alg`` ``none`` and an empty signature."""
        header = {"alg": "none", "typ": REQUEST_OBJECT_TYPE}
        return f"{_b64_json(header)}.{_b64_json(claims)}."


@dataclass(frozen=True)
class X509Client:
    """``x509_san_dns:`` or ``x509_hash:``: requests signed by the key of the chain's leaf.

    ``name`` is the part after the prefix: the DNS name the leaf and the response URI share
    (``x509_san_dns``), or the leaf's hash (``x509_hash``).
    """

    prefix: str
    name: str
    chain: tuple[x509.Certificate, ...]
    key: ec.EllipticCurvePrivateKey = field(repr=False)
    signed = True

    @property
    def signing_alg(self) -> str:
        return EC_ALGORITHMS[self.key.curve.name][0]

    def client_id(self, response_uri: str) -> str:
        # Under x509_san_dns the response URI's host must be this name (§5.9.3);
        # load_x509_client made sure the deployment's public address is, so the argument is not
        # needed here.
        return f"{self.prefix}:{self.name}"

    def request_object(self, claims: dict[str, Any]) -> str:
        """A JWS (RFC 7515) with the chain in ``x5c``, leaf first (RFC 7515 §4.1.6)."""
        alg, digest, size = EC_ALGORITHMS[self.key.curve.name]
        header = {"alg": alg, "typ": REQUEST_OBJECT_TYPE, "x5c": self.x5c()}
        signing_input = f"{_b64_json(header)}.{_b64_json(claims)}"
        der = self.key.sign(signing_input.encode("ascii"), ec.ECDSA(digest))
        r, s = decode_dss_signature(der)
        signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
        return f"{signing_input}.{b64url_encode(signature)}"

    def x5c(self) -> list[str]:
        """RFC 7515 §4.1.6: standard (not URL-safe) base64 of each certificate's DER."""
        return [
            base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode("ascii")
            for cert in self.chain
        ]


def x509_hash(cert: x509.Certificate) -> str:
    """§5.9.3: base64url (no padding) of the SHA-256 hash of the certificate's DER encoding."""
    return b64url_encode(cert.fingerprint(hashes.SHA256()))


def load_x509_client(
    chain_pem: bytes,
    key: bytes | ec.EllipticCurvePrivateKey,
    public_url: str,
    now: datetime,
    prefix: str = X509_SAN_DNS,
) -> X509Client:
    """Check a PEM chain (leaf first) and its leaf's private key, once, at start-up.

    Everything a wallet would refuse later is refused here with a message saying what to fix:
    a key that is not the leaf's, a chain out of order, a leaf outside its validity, and, under
    ``x509_san_dns``, a leaf with no dNSName equal to the host wallets post responses to
    (§5.9.3: without a trust list entry, the wallet requires the FQDN of the response URI to be
    the client ID's name). ``x509_hash`` names the leaf itself, so any host will do.
    ``key`` is a PEM private key, or a key object (one kept in a PKCS#11 token).
    """
    if prefix not in X509_PREFIXES:
        raise ClientConfigError(f"{prefix!r} is not a certificate-based client identifier prefix")
    chain = _certificates(chain_pem)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        key = _private_key(key)
    elif key.curve.name not in EC_ALGORITHMS:
        raise ClientConfigError("the private key must be an EC key on P-256, P-384 or P-521")
    leaf = chain[0]
    if _public_der(key.public_key()) != _public_der(leaf.public_key()):
        raise ClientConfigError("the private key does not belong to the first (leaf) certificate")
    _check_order(chain)
    if not leaf.not_valid_before_utc <= now <= leaf.not_valid_after_utc:
        raise ClientConfigError(
            f"the leaf certificate is valid from {leaf.not_valid_before_utc.isoformat()} "
            f"to {leaf.not_valid_after_utc.isoformat()}, not now"
        )
    name = _dns_name_for(leaf, public_url) if prefix == X509_SAN_DNS else x509_hash(leaf)
    return X509Client(prefix, name, tuple(chain), key)


def _certificates(pem: bytes) -> list[x509.Certificate]:
    try:
        chain = x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        raise ClientConfigError(
            f"the certificate file holds no readable PEM chain ({exc})"
        ) from None
    return chain


def _private_key(pem: bytes) -> ec.EllipticCurvePrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ClientConfigError(
            f"the key file holds no readable unencrypted PEM private key ({exc})"
        ) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name not in EC_ALGORITHMS:
        raise ClientConfigError("the private key must be an EC key on P-256, P-384 or P-521")
    return key


def _public_der(key: Any) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _check_order(chain: list[x509.Certificate]) -> None:
    """Each certificate must be issued by the next (RFC 7515 §4.1.6 orders ``x5c`` so)."""
    for position, (child, parent) in enumerate(pairwise(chain), start=1):
        try:
            child.verify_directly_issued_by(parent)
        except (ValueError, TypeError, InvalidSignature):
            raise ClientConfigError(
                f"certificate {position} of the chain is not issued by certificate {position + 1}"
                " (the chain must be leaf first, then each issuer)"
            ) from None


def _dns_name_for(leaf: x509.Certificate, public_url: str) -> str:
    host = (urlsplit(public_url).hostname or "").lower()
    if not host:
        raise ClientConfigError(
            "signed requests need the deployment's public URL, whose host the leaf must name"
        )
    try:
        san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        raise ClientConfigError("the leaf certificate has no subjectAltName extension") from None
    names = [name.lower().rstrip(".") for name in san.get_values_for_type(x509.DNSName)]
    # An exact name only: the client ID is one DNS name, and a wildcard entry is not a name.
    if host not in names:
        listed = ", ".join(names) or "none"
        raise ClientConfigError(
            f"the leaf certificate has no DNS subjectAltName {host!r} (the public URL's host); "
            f"it names: {listed}"
        )
    return host


def _b64_json(value: dict[str, Any]) -> str:
    return b64url_encode(json.dumps(value, separators=(",", ":")).encode())
