"""Encrypted responses (OpenID4VP 1.0 §8.3): the verifier's key per request, and decryption.

Each presentation request gets its own P-256 key pair, published in the Request Object's
``client_metadata.jwks`` (§5.1). The private key is never stored: it is derived with HKDF
(RFC 5869) from the deployment's secret and the request ID, so any instance can decrypt a
response to any request and a database dump holds nothing that decrypts one. Rotating the
secret makes the keys of outstanding requests unusable, which for requests that live minutes is
the same as letting them expire.

Decryption is written here on ``cryptography`` rather than taken from a JOSE library, so that
exactly one algorithm is accepted (``ECDH-ES`` with ``A128GCM`` or ``A256GCM``) and every check
RFC 7516 asks of a recipient is visible, and so that the tests can encrypt with an independent
JOSE implementation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.sdjwt.encoding import b64url_decode, b64url_encode, decode_json_object, parse_json
from app.sdjwt.errors import SdJwtError

ALG = "ECDH-ES"
# RFC 7518 §5.3: content encryption key sizes; the IV is 96 bits and the tag 128 bits.
ENC_KEY_BITS = {"A128GCM": 128, "A256GCM": 256}
ENC_VALUES = tuple(ENC_KEY_BITS)
IV_BYTES = 12
TAG_BYTES = 16

CURVE = ec.SECP256R1()
CURVE_NAME = "P-256"
COORDINATE_BYTES = 32
# The order n of P-256 (FIPS 186-5 / SP 800-186 §3.2.1.3).
ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
# FIPS 186-5 Appendix A.2.1: 64 bits beyond the order's size make the reduction unbiased.
SEED_BYTES = COORDINATE_BYTES + 8
KEY_INFO = b"verity oid4vp response encryption key v1:"
# The key a request offers over the Digital Credentials API (``dc_api.jwt``) is derived under a
# label of its own: the same presentation request's ``direct_post.jwt`` link never shares it.
DC_API_KEY_INFO = b"verity oid4vp dc_api response encryption key v1:"


def derive_p256_key(secret: bytes, info: bytes) -> ec.EllipticCurvePrivateKey:
    """A P-256 key of its own for each ``info``: HKDF-SHA256 output reduced to a scalar in
    [1, n-1]. Every instance derives the same key; none is ever stored."""
    seed = HKDF(algorithm=hashes.SHA256(), length=SEED_BYTES, salt=None, info=info).derive(secret)
    scalar = int.from_bytes(seed, "big") % (ORDER - 1) + 1
    return ec.derive_private_key(scalar, CURVE)


class ResponseError(Exception):
    """An encrypted response was refused. ``reason`` never echoes what the sender sent."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ResponseEncryption:
    """The verifier's side of §8.3 for a deployment: keys derived from ``secret``."""

    secret: bytes = field(repr=False)
    # What the keys are derived under: ``KEY_INFO`` for direct_post.jwt, ``DC_API_KEY_INFO``
    # for dc_api.jwt.
    label: bytes = KEY_INFO

    def private_key(self, request_id: str) -> ec.EllipticCurvePrivateKey:
        """The request's key: see ``derive_p256_key``."""
        return derive_p256_key(self.secret, self.label + request_id.encode("ascii"))

    def public_jwk(self, request_id: str) -> dict[str, Any]:
        """The JWK for ``client_metadata.jwks``: §8.3 requires ``alg``, §5.1 a ``kid``."""
        jwk = _ec_public_jwk(self.private_key(request_id).public_key())
        return {**jwk, "kid": thumbprint(jwk), "use": "enc", "alg": ALG}

    def decrypt(self, request_id: str, compact: str) -> dict[str, Any]:
        """The Authorization Response parameters a JWE sent to this request's key carries."""
        plaintext = decrypt_compact(compact, self.private_key(request_id))
        try:
            payload = parse_json(plaintext, "Response payload")
        except SdJwtError as exc:
            raise ResponseError(exc.reason) from None
        if not isinstance(payload, dict):
            raise ResponseError("The encrypted response does not carry a JSON object")
        return payload


def decrypt_compact(compact: str, key: ec.EllipticCurvePrivateKey) -> bytes:
    """Decrypt a compact JWE (RFC 7516 §5.2) made with ECDH-ES direct key agreement.

    Hostile input must end in a refusal, never a crash: anything unforeseen is refused too.
    """
    try:
        return _decrypt_compact(compact, key)
    except ResponseError:
        raise
    except Exception as exc:
        raise ResponseError("The encrypted response could not be read") from exc


def _decrypt_compact(compact: str, key: ec.EllipticCurvePrivateKey) -> bytes:
    parts = compact.split(".") if isinstance(compact, str) else []
    if len(parts) != 5:
        raise ResponseError("The response is not a compact JWE")
    header_b64, encrypted_key_b64, iv_b64, ciphertext_b64, tag_b64 = parts
    try:
        header = decode_json_object(header_b64, "Response header")
        enc = _check_header(header)
        # RFC 7516 §5.2 step 10: with direct key agreement the encrypted key is empty.
        if encrypted_key_b64:
            raise ResponseError("An ECDH-ES response must not carry an encrypted key")
        iv = b64url_decode(iv_b64, "Response IV")
        ciphertext = b64url_decode(ciphertext_b64, "Response ciphertext")
        tag = b64url_decode(tag_b64, "Response tag")
        sender = _sender_key(header.get("epk"))
        party_u = _party_info(header, "apu")
        party_v = _party_info(header, "apv")
    except SdJwtError as exc:
        raise ResponseError(exc.reason) from None
    if len(iv) != IV_BYTES or len(tag) != TAG_BYTES:
        raise ResponseError("The response's IV or tag has the wrong length")
    cek = agreed_key(key.exchange(ec.ECDH(), sender), enc, party_u, party_v)
    try:
        # RFC 7516 §5.2 steps 14-16: the additional authenticated data is the encoded header.
        return AESGCM(cek).decrypt(iv, ciphertext + tag, header_b64.encode("ascii"))
    except InvalidTag:
        raise ResponseError("The response could not be decrypted with this request's key") from None


def _check_header(header: dict[str, Any]) -> str:
    """One algorithm (§8.3) and nothing this recipient would have to understand to read it.

    ``kid`` is only a hint: a request has exactly one key, so a response naming it differently
    or not at all is decrypted with that key, and the authentication tag decides (RFC 7516
    §4.1.6 makes ``kid`` optional; §8.3 asks wallets to send it, and some do not). Header
    parameters this recipient does not know are ignored (RFC 7516 §4), except ``crit``
    (§4.1.13: extensions it would have to understand) and ``zip`` (§4.1.3: compressed
    plaintext, which RFC 8725 §3.6 advises against and this recipient does not inflate).
    """
    if header.get("alg") != ALG:
        raise ResponseError(f"The response must be encrypted with {ALG}")
    enc = header.get("enc")
    if enc not in ENC_KEY_BITS:
        raise ResponseError(f"The response must be encrypted with {' or '.join(ENC_VALUES)}")
    if "crit" in header:
        raise ResponseError("The response header names extensions (crit) this verifier refuses")
    if "zip" in header:
        raise ResponseError("The response is compressed (zip), which this verifier refuses")
    return enc


def _sender_key(epk: Any) -> ec.EllipticCurvePublicKey:
    """The ephemeral public key (RFC 7518 §4.6.1.1), on our curve and a valid point on it.

    Checking the point is what stops invalid-curve attacks on the static-looking key.
    """
    if not isinstance(epk, dict) or epk.get("kty") != "EC" or epk.get("crv") != CURVE_NAME:
        raise ResponseError(f"The response's ephemeral key is not an EC {CURVE_NAME} key")
    if "d" in epk:
        raise ResponseError("The response's ephemeral key contains private key material")
    x = b64url_decode(epk.get("x", ""), "Ephemeral key x")
    y = b64url_decode(epk.get("y", ""), "Ephemeral key y")
    if len(x) != COORDINATE_BYTES or len(y) != COORDINATE_BYTES:
        raise ResponseError("The response's ephemeral key has the wrong length for its curve")
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(x, "big"), int.from_bytes(y, "big"), CURVE
    )
    try:
        return numbers.public_key()
    except ValueError:
        raise ResponseError("The response's ephemeral key is not a point on its curve") from None


def _party_info(header: dict[str, Any], name: str) -> bytes:
    """``apu`` / ``apv`` (RFC 7518 §4.6.1.2-3), base64url; absent means empty."""
    if name not in header:
        return b""
    value = header[name]
    if not isinstance(value, str):
        raise ResponseError("The response's key agreement parameters are not strings")
    return b64url_decode(value, "Key agreement parameter") if value else b""


def agreed_key(shared: bytes, enc: str, party_u: bytes, party_v: bytes) -> bytes:
    """The content encryption key, by the Concat KDF of RFC 7518 §4.6.2 (direct agreement).

    AlgorithmID is the ``enc`` value; each field is prefixed with its 32-bit length, and
    SuppPubInfo is the key length in bits.
    """
    bits = ENC_KEY_BITS[enc]
    other_info = (
        _length_prefixed(enc.encode("ascii"))
        + _length_prefixed(party_u)
        + _length_prefixed(party_v)
        + bits.to_bytes(4, "big")
    )
    return ConcatKDFHash(hashes.SHA256(), bits // 8, other_info).derive(shared)


def _length_prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _ec_public_jwk(key: ec.EllipticCurvePublicKey) -> dict[str, str]:
    numbers = key.public_numbers()
    return {
        "kty": "EC",
        "crv": CURVE_NAME,
        "x": b64url_encode(numbers.x.to_bytes(COORDINATE_BYTES, "big")),
        "y": b64url_encode(numbers.y.to_bytes(COORDINATE_BYTES, "big")),
    }


def thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638 §3: SHA-256 of the required members, sorted, without whitespace."""
    required = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    canonical = json.dumps(required, separators=(",", ":"), sort_keys=True)
    return b64url_encode(hashlib.sha256(canonical.encode("utf-8")).digest())
