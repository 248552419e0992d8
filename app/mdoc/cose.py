"""COSE_Sign1 (RFC 9052 4.2, 4.4) and EC2 COSE_Key (RFC 9053 7.1), as ISO 18013-5 uses them.

No COSE library is used: an mdoc needs one structure (COSE_Sign1), three algorithms (ES256,
ES384, ES512) and one key type (EC2), so the checks are few and are written out here where
they can be read, with ``cryptography`` doing the ECDSA.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import cbor2
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from app.mdoc.errors import MdocError

# RFC 9052 3.1 header labels.
ALG = 1
X5CHAIN = 33  # RFC 9360 2

# RFC 9053 2.1: the ECDSA algorithms and their hashes. Nothing else is accepted.
ECDSA_HASHES: dict[int, type[hashes.HashAlgorithm]] = {
    -7: hashes.SHA256,  # ES256
    -35: hashes.SHA384,  # ES384
    -36: hashes.SHA512,  # ES512
}

# RFC 9053 7.1: EC2 key parameters and the curves ISO 18013-5 9.1.5 allows among them.
KTY, KTY_EC2, CRV, X, Y = 1, 2, -1, -2, -3
MAX_DEPTH = 32
CURVES: dict[int, ec.EllipticCurve] = {1: ec.SECP256R1(), 2: ec.SECP384R1(), 3: ec.SECP521R1()}


def decode_cbor(raw: bytes, what: str) -> Any:
    """Decode exactly one CBOR item: duplicate map keys and trailing bytes are refused."""
    stream = io.BytesIO(raw)
    try:
        decoder = cbor2.CBORDecoder(stream, allow_duplicate_keys=False, max_depth=MAX_DEPTH)
        value = decoder.decode()
    except (cbor2.CBORError, ValueError, TypeError, OverflowError, RecursionError):
        raise MdocError(f"{what} is not valid CBOR") from None
    if stream.tell() != len(raw):
        raise MdocError(f"{what} has trailing bytes after its CBOR")
    return value


@dataclass(frozen=True)
class Sign1:
    """A COSE_Sign1 as received: the protected header stays the exact bytes it was signed as."""

    protected_bytes: bytes
    protected: dict[Any, Any]
    unprotected: dict[Any, Any]
    payload: bytes | None
    signature: bytes

    def header(self, label: int) -> Any:
        """A header parameter from either bucket; protected wins (RFC 9052 3)."""
        if label in self.protected:
            return self.protected[label]
        return self.unprotected.get(label)


def parse_sign1(value: Any, what: str) -> Sign1:
    """Read the four-element COSE_Sign1 array (tag 18 optional, as ISO 18013-5 sends it untagged)."""
    if isinstance(value, cbor2.CBORTag) and value.tag == 18:
        value = value.value
    if not isinstance(value, list) or len(value) != 4:
        raise MdocError(f"{what} is not a COSE_Sign1 structure")
    protected_bytes, unprotected, payload, signature = value
    if not isinstance(protected_bytes, bytes) or not isinstance(unprotected, dict):
        raise MdocError(f"{what} has malformed headers")
    if not (payload is None or isinstance(payload, bytes)) or not isinstance(signature, bytes):
        raise MdocError(f"{what} has a malformed payload or signature")
    protected = decode_cbor(protected_bytes, what) if protected_bytes else {}
    if not isinstance(protected, dict):
        raise MdocError(f"{what} has a malformed protected header")
    return Sign1(protected_bytes, protected, unprotected, payload, signature)


def verify_sign1(
    sign1: Sign1, key: ec.EllipticCurvePublicKey, what: str, detached: bytes | None = None
) -> None:
    """RFC 9052 4.4: verify over Sig_structure ["Signature1", protected, b"", payload].

    The algorithm must be in the protected header (a signature must cover its own algorithm)
    and be ES256, ES384 or ES512; the signature is raw r || s (RFC 9053 2.1), not DER.
    """
    alg = sign1.protected.get(ALG)
    if alg not in ECDSA_HASHES or isinstance(alg, bool):
        raise MdocError(f"{what} algorithm is not ES256, ES384 or ES512")
    payload = sign1.payload if detached is None else detached
    if payload is None:
        raise MdocError(f"{what} has no payload")
    if detached is not None and sign1.payload is not None:
        raise MdocError(f"{what} must have a detached payload")
    to_be_signed = cbor2.dumps(["Signature1", sign1.protected_bytes, b"", payload])
    size = (key.curve.key_size + 7) // 8
    if len(sign1.signature) != 2 * size:
        raise MdocError(f"{what} does not verify")
    r = int.from_bytes(sign1.signature[:size], "big")
    s = int.from_bytes(sign1.signature[size:], "big")
    try:
        key.verify(encode_dss_signature(r, s), to_be_signed, ec.ECDSA(ECDSA_HASHES[alg]()))
    except InvalidSignature:
        raise MdocError(f"{what} does not verify") from None


def ec2_public_key(cose_key: Any) -> ec.EllipticCurvePublicKey:
    """An EC2 COSE_Key (uncompressed x and y) on P-256, P-384 or P-521."""
    if not isinstance(cose_key, dict) or cose_key.get(KTY) != KTY_EC2:
        raise MdocError("Device key is not an EC2 COSE key")
    curve = CURVES.get(cose_key.get(CRV)) if not isinstance(cose_key.get(CRV), bool) else None
    x, y = cose_key.get(X), cose_key.get(Y)
    if curve is None:
        raise MdocError("Device key curve is not P-256, P-384 or P-521")
    size = (curve.key_size + 7) // 8
    if not isinstance(x, bytes) or not isinstance(y, bytes) or len(x) != size or len(y) != size:
        raise MdocError("Device key coordinates are malformed")
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(curve, b"\x04" + x + y)
    except ValueError:
        raise MdocError("Device key is not a point on its curve") from None
