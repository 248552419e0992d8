"""Google Wallet's verifier registrar: leaf certificates that carry a relying party's metadata.

Google Wallet answers Digital Credentials API requests signed (``openid4vp-v1-signed``) by a
certificate from Google's own CA or from a verifier registrar's CA it trusts, whose leaf
binds the relying party's display information. Google's "Verifier Registrar Onboarding Guide"
gives the profile: an X.509 v3 certificate on a P-256 key, with a globally unique subject
name and the non-critical extension 1.3.6.1.4.1.11129.10.1, whose value is an ASN.1 OCTET
STRING holding the SHA-256 of ``RelyingPartyMetadataBytes`` = ``#6.24(bstr .cbor
RelyingPartyMetadata)``, a map of ``schema_version`` ("v1") and ``display``
(``display_name``, ``logo_uri``, ``privacy_policy_uri``). The request carries those bytes,
base64url-encoded, as ``client_metadata.gw_rp_metadata_bytes``, so the wallet can check them
against the certificate and show them. No database here.

Only ``cbor2.dumps`` and ``CBORTag`` are used, which every supported cbor2 release has.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import cbor2
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.oid4vp.client import X509_HASH, X509Client, x509_hash
from app.trust.x5c import key_usage, self_signed

RP_METADATA_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.10.1")
SCHEMA_VERSION = "v1"
# RFC 8949 §3.4.5.1: tag 24, an embedded CBOR data item.
ENCODED_CBOR = 24
# DER OCTET STRING of a 32-byte SHA-256 (X.690 §8.7): tag 0x04, length 0x20.
OCTET_STRING_32 = b"\x04\x20"
LEAF_LIFETIME = timedelta(days=90)
# A leaf is issued again this long before it ends, so no request is signed by one about to.
RENEW_BEFORE = timedelta(days=7)
MAX_NAME = 64


class RegistrarError(ValueError):
    """The registrar CA cannot issue as configured; the message names what to change."""


@dataclass(frozen=True)
class DisplayInfo:
    """Google's ``DisplayInfo``: every member is required (a ``tstr``)."""

    display_name: str
    logo_uri: str
    privacy_policy_uri: str


def metadata_bytes(display: DisplayInfo) -> bytes:
    """``RelyingPartyMetadataBytes``: the metadata map encoded, wrapped as tag 24 of a bstr."""
    metadata = {
        "schema_version": SCHEMA_VERSION,
        "display": {
            "display_name": display.display_name,
            "logo_uri": display.logo_uri,
            "privacy_policy_uri": display.privacy_policy_uri,
        },
    }
    return cbor2.dumps(cbor2.CBORTag(ENCODED_CBOR, cbor2.dumps(metadata)))


def metadata_b64(data: bytes) -> str:
    """``gw_rp_metadata_bytes``: the bytes base64url-encoded without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def metadata_extension(data: bytes) -> x509.UnrecognizedExtension:
    """The extension's value: a DER OCTET STRING of SHA-256(RelyingPartyMetadataBytes)."""
    return x509.UnrecognizedExtension(
        RP_METADATA_OID, OCTET_STRING_32 + hashlib.sha256(data).digest()
    )


@dataclass(frozen=True)
class RegistrarCA:
    """The registrar's issuing CA: its key and its chain (the CA first, then its issuers)."""

    key: ec.EllipticCurvePrivateKey
    chain: tuple[x509.Certificate, ...]

    @property
    def certificate(self) -> x509.Certificate:
        return self.chain[0]

    def x5c_tail(self) -> tuple[x509.Certificate, ...]:
        """What follows the leaf in ``x5c``: the CAs, without a self-signed root (the wallet
        holds the root; RFC 7515 §4.1.6 lets it be left out)."""
        return tuple(cert for cert in self.chain if not self_signed(cert))

    def issue(
        self,
        organization_id: uuid.UUID,
        organization_name: str,
        public_key: ec.EllipticCurvePublicKey,
        data: bytes,
        now: datetime,
    ) -> x509.Certificate:
        """A leaf for one organization's key, binding its metadata ``data``.

        The subject is unique across the registrar's leaves, as Google asks: the name the
        organization goes by and its identifier here (serialNumber).
        """
        name = (organization_name.strip() or str(organization_id))[:MAX_NAME]
        ca = self.certificate
        not_after = min(now + LEAF_LIFETIME, ca.not_valid_after_utc)
        return (
            x509.CertificateBuilder()
            .subject_name(
                x509.Name(
                    [
                        x509.NameAttribute(NameOID.ORGANIZATION_NAME, name),
                        x509.NameAttribute(NameOID.COMMON_NAME, name),
                        x509.NameAttribute(NameOID.SERIAL_NUMBER, str(organization_id)),
                    ]
                )
            )
            .issuer_name(ca.subject)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                key_usage(cert_sign=False),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.public_key()),  # type: ignore[arg-type]
                critical=False,
            )
            .add_extension(metadata_extension(data), critical=False)
            .sign(self.key, hashes.SHA256())
        )


def read_registrar(
    key: ec.EllipticCurvePrivateKey, chain: list[x509.Certificate], now: datetime
) -> RegistrarCA:
    """The registrar CA, once its chain and key can issue leaves a wallet will follow."""
    if not chain:
        raise RegistrarError("GOOGLE_REGISTRAR_CHAIN_FILE holds no PEM certificate")
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise RegistrarError("GOOGLE_REGISTRAR_KEY_FILE must be a P-256 key (Google asks for it)")
    ca = chain[0]
    if ca.public_key() != key.public_key():
        raise RegistrarError(
            "GOOGLE_REGISTRAR_KEY_FILE is not the key of GOOGLE_REGISTRAR_CHAIN_FILE's first "
            "certificate (the registrar CA comes first, then its issuers)"
        )
    try:
        constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        constraints = None
    if constraints is None or not constraints.ca:
        raise RegistrarError(
            "GOOGLE_REGISTRAR_CHAIN_FILE's first certificate is not a CA (basicConstraints "
            "cA=TRUE): it cannot issue leaves"
        )
    if not ca.not_valid_before_utc <= now <= ca.not_valid_after_utc:
        raise RegistrarError(
            f"The registrar CA is valid from {ca.not_valid_before_utc:%Y-%m-%d} to "
            f"{ca.not_valid_after_utc:%Y-%m-%d}, not now"
        )
    return RegistrarCA(key, tuple(chain))


def leaf_client(
    leaf: x509.Certificate, registrar: RegistrarCA, key: ec.EllipticCurvePrivateKey
) -> X509Client:
    """The signer of an organization's DC API requests to Google Wallet: ``x509_hash`` of the
    leaf, with the leaf and the registrar's CAs in ``x5c``."""
    return X509Client(X509_HASH, x509_hash(leaf), (leaf, *registrar.x5c_tail()), key)


def needs_new_leaf(
    leaf: x509.Certificate | None,
    data: bytes | None,
    wanted: bytes,
    registrar: RegistrarCA,
    now: datetime,
) -> bool:
    """Whether the leaf held no longer serves: none yet, other metadata, ending soon, or
    issued by another CA than the one configured now (its x5c would not link)."""
    if leaf is None or data != wanted or leaf.not_valid_after_utc - RENEW_BEFORE <= now:
        return True
    try:
        leaf.verify_directly_issued_by(registrar.certificate)
    except (ValueError, TypeError, InvalidSignature):
        return True
    return False
