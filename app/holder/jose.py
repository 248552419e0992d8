"""The JOSE pieces a holder needs, on ``cryptography`` alone: ES256 signatures (RFC 7515,
RFC 7518 §3.4), public JWKs (RFC 7517), and a compact JWE with ECDH-ES direct key agreement
(RFC 7516, RFC 7518 §4.6) for encrypted OpenID4VP responses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash

CURVE_NAME = "P-256"
COORDINATE_BYTES = 32
# RFC 7518 §5.3: content encryption key sizes of the AES-GCM encryptions a verifier may ask for.
ENC_KEY_BITS = {"A128GCM": 128, "A256GCM": 256}


class JoseError(ValueError):
    """Something a peer sent cannot be read as the JOSE object it claims to be."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_json(value: Any) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def b64url_decode(text: str) -> bytes:
    if not isinstance(text, str):
        raise JoseError("base64url value is not a string")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise JoseError("invalid base64url") from exc


def decode_segment(text: str) -> Any:
    """A JOSE header or JWT claims set: base64url of UTF-8 JSON."""
    try:
        return json.loads(b64url_decode(text))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JoseError("a JWT segment is not JSON") from exc


def sha256_b64url(text: str) -> str:
    return b64url(hashlib.sha256(text.encode("ascii")).digest())


def public_jwk(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) -> dict[str, str]:
    public = key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key
    numbers = public.public_numbers()
    return {
        "kty": "EC",
        "crv": CURVE_NAME,
        "x": b64url(numbers.x.to_bytes(COORDINATE_BYTES, "big")),
        "y": b64url(numbers.y.to_bytes(COORDINATE_BYTES, "big")),
    }


def private_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, str]:
    d = key.private_numbers().private_value.to_bytes(COORDINATE_BYTES, "big")
    return {**public_jwk(key), "d": b64url(d)}


def key_from_jwk(jwk: dict[str, Any]) -> ec.EllipticCurvePrivateKey:
    """The private P-256 key a wallet file keeps, checked to match its public coordinates."""
    if jwk.get("kty") != "EC" or jwk.get("crv") != CURVE_NAME or "d" not in jwk:
        raise JoseError("the key is not a private EC P-256 JWK")
    key = ec.derive_private_key(int.from_bytes(b64url_decode(jwk["d"]), "big"), ec.SECP256R1())
    if public_jwk(key) != {name: jwk.get(name) for name in ("kty", "crv", "x", "y")}:
        raise JoseError("the key's public coordinates do not match its private value")
    return key


def public_key_from_jwk(jwk: Any) -> ec.EllipticCurvePublicKey:
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != CURVE_NAME:
        raise JoseError("the key is not an EC P-256 JWK")
    x, y = b64url_decode(jwk.get("x", "")), b64url_decode(jwk.get("y", ""))
    if len(x) != COORDINATE_BYTES or len(y) != COORDINATE_BYTES:
        raise JoseError("the key's coordinates have the wrong length")
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()
    )
    try:
        return numbers.public_key()
    except ValueError as exc:
        raise JoseError("the key is not a point on P-256") from exc


def sign_es256(key: ec.EllipticCurvePrivateKey, header: dict[str, Any], claims: dict) -> str:
    """A compact JWS; ES256 signatures are R || S, 32 bytes each (RFC 7518 §3.4)."""
    signing_input = f"{b64url_json({**header, 'alg': 'ES256'})}.{b64url_json(claims)}"
    r, s = decode_dss_signature(key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
    signature = r.to_bytes(COORDINATE_BYTES, "big") + s.to_bytes(COORDINATE_BYTES, "big")
    return f"{signing_input}.{b64url(signature)}"


def verify_es256(token: str, key: ec.EllipticCurvePublicKey) -> None:
    """Raise ``JoseError`` unless ``token`` is a JWS signed by ``key`` with ES256."""
    parts = token.split(".")
    if len(parts) != 3:
        raise JoseError("not a compact JWS")
    if decode_segment(parts[0]).get("alg") != "ES256":
        raise JoseError("the JWS is not signed with ES256")
    signature = b64url_decode(parts[2])
    if len(signature) != 2 * COORDINATE_BYTES:
        raise JoseError("the ES256 signature has the wrong length")
    r = int.from_bytes(signature[:COORDINATE_BYTES], "big")
    s = int.from_bytes(signature[COORDINATE_BYTES:], "big")
    try:
        key.verify(
            encode_dss_signature(r, s),
            f"{parts[0]}.{parts[1]}".encode("ascii"),
            ec.ECDSA(hashes.SHA256()),
        )
    except InvalidSignature as exc:
        raise JoseError("the signature does not verify") from exc


def encrypt_ecdh_es(plaintext: bytes, recipient: dict[str, Any], enc: str) -> str:
    """A compact JWE to ``recipient`` (ECDH-ES direct agreement, RFC 7518 §4.6): a fresh
    ephemeral key, the Concat KDF over the shared secret, then AES-GCM with the encoded
    protected header as additional authenticated data (RFC 7516 §5.1)."""
    if enc not in ENC_KEY_BITS:
        raise JoseError(f"content encryption {enc!r} is not supported")
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    shared = ephemeral.exchange(ec.ECDH(), public_key_from_jwk(recipient))
    header: dict[str, Any] = {"alg": "ECDH-ES", "enc": enc, "epk": public_jwk(ephemeral)}
    if recipient.get("kid"):
        header["kid"] = recipient["kid"]
    bits = ENC_KEY_BITS[enc]
    # AlgorithmID is the enc value in direct agreement; apu and apv are empty.
    other_info = _prefixed(enc.encode("ascii")) + _prefixed(b"") + _prefixed(b"")
    other_info += bits.to_bytes(4, "big")
    cek = ConcatKDFHash(hashes.SHA256(), bits // 8, other_info).derive(shared)
    protected = b64url_json(header)
    iv = os.urandom(12)
    sealed = AESGCM(cek).encrypt(iv, plaintext, protected.encode("ascii"))
    ciphertext, tag = sealed[:-16], sealed[-16:]
    return f"{protected}..{b64url(iv)}.{b64url(ciphertext)}.{b64url(tag)}"


def _prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data
