"""An issuer's signing key: made, published, and kept encrypted at rest.

Each organization signs with its own P-256 key (ES256 is the one algorithm every wallet and
verifier of SD-JWT VCs supports). The private half is stored only sealed with AES-GCM under a
key-encryption key derived from a server secret, so a copy of the database alone signs nothing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app import sealing
from app.sdjwt.encoding import b64url_encode

# RFC 7638 §3.2: the required members of each key type, the only ones the thumbprint covers.
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "OKP": ("crv", "kty", "x"),
    "RSA": ("e", "kty", "n"),
}
# Binds the derived key and every sealed blob to this one use, so neither can be replayed as
# something else (RFC 5869 §3.2 "info"; the AES-GCM associated data).
_KEK_INFO = b"verity issuer signing key encryption v1"
_SEAL_AAD = b"verity issuer signing key v1"
_COORDINATE_BYTES = 32  # RFC 7518 §6.2.1.2: P-256 coordinates are 32 bytes


class SealedKeyError(ValueError):
    """A sealed key could not be opened: another key-encryption key, or damaged bytes."""


def generate_signing_key() -> ec.EllipticCurvePrivateKey:
    """A fresh P-256 key for ES256 (RFC 7518 §3.4)."""
    return ec.generate_private_key(ec.SECP256R1())


def public_jwk(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) -> dict[str, Any]:
    """The public JWK of a P-256 key as published in the issuer's JWKS, with ``kid`` its
    RFC 7638 thumbprint so a verifier can find it from a credential header."""
    public = key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key
    if not isinstance(public.curve, ec.SECP256R1):
        raise ValueError("Issuer keys are P-256 keys")
    numbers = public.public_numbers()
    jwk = {
        "kty": "EC",
        "crv": "P-256",
        "x": b64url_encode(numbers.x.to_bytes(_COORDINATE_BYTES, "big")),
        "y": b64url_encode(numbers.y.to_bytes(_COORDINATE_BYTES, "big")),
    }
    return {**jwk, "kid": jwk_thumbprint(jwk), "alg": "ES256", "use": "sig"}


def public_members(jwk: dict[str, Any]) -> dict[str, Any]:
    """The members that make the public key (RFC 7638 §3.2's required ones) and nothing else.

    A holder key is signed into every credential as ``cnf.jwk``, and a wallet's JWK may carry
    anything besides (``x5u``, ``x5c``, ``alg``, ``use``, ``key_ops``, ``kid``, members of its
    own): none of it is the key, and all of it would be published in the credential. ``kid``
    goes too: it is the wallet's label, of any length, and the key is already named by itself
    (its thumbprint). Raises ``ValueError`` for a key type with no definition.
    """
    members = _THUMBPRINT_MEMBERS.get(jwk.get("kty")) if isinstance(jwk, dict) else None
    if members is None:
        raise ValueError("Key type is not EC, OKP or RSA")
    return {name: jwk[name] for name in ("kty", *sorted(members)) if name in jwk}


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint: the required members only, in lexicographic order,
    with no whitespace, hashed and base64url-encoded."""
    members = _THUMBPRINT_MEMBERS.get(jwk.get("kty")) if isinstance(jwk, dict) else None
    if members is None:
        raise ValueError("Key type has no thumbprint definition")
    if any(not isinstance(jwk.get(name), str) for name in members):
        raise ValueError("Key is missing a member its thumbprint needs")
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"))
    return b64url_encode(hashlib.sha256(canonical.encode("utf-8")).digest())


def key_encryption_key(secret: str) -> bytes:
    """Derive the 32-byte AES key that seals issuer keys from a configured secret (HKDF-SHA256,
    RFC 5869), so the secret itself never touches the ciphertext and can be of any form."""
    if not secret:
        raise ValueError("The key-encryption secret is empty")
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
    return hkdf.derive(secret.encode("utf-8"))


def seal_private_key(key: ec.EllipticCurvePrivateKey, kek: bytes) -> bytes:
    """Encrypt the private key (PKCS #8 DER) with AES-256-GCM: a random 96-bit nonce, then the
    ciphertext and its tag. A fresh nonce per seal keeps GCM safe under one long-lived KEK."""
    plain = key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return sealing.seal(plain, kek, _SEAL_AAD)


def open_private_key(sealed: bytes, kek: bytes) -> ec.EllipticCurvePrivateKey:
    """Decrypt what ``seal_private_key`` made; raises ``SealedKeyError`` for another KEK or
    damaged bytes (GCM authenticates, so a wrong key is detected, never silently misread)."""
    if len(sealed) <= sealing.NONCE_BYTES + sealing.TAG_BYTES:
        raise SealedKeyError("Sealed key is too short")
    try:
        plain = sealing.open_sealed(sealed, kek, _SEAL_AAD)
    except sealing.SealBroken as exc:
        raise SealedKeyError("Sealed key does not open with this key-encryption key") from exc
    key = serialization.load_der_private_key(plain, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise SealedKeyError("Sealed key is not an EC private key")
    return key
