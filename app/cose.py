"""COSE_Sign1 (RFC 9052 section 4.2), read and verified by hand with ``cbor2`` and
``cryptography``.

The few checks a verifier must make are explicit here rather than left to a library: the
algorithm comes from the protected header only and is one of ES256 (or its fully-specified
name ESP256, RFC 9864), ES384 and ES512 (RFC 9053 2.1; never an unsigned or MAC structure),
the key's curve fits the algorithm, and the signature is the fixed-length ``r || s`` COSE uses,
checked over the ``Sig_structure`` with the payload as signed (detached payloads are supplied
by the caller). No protocol knowledge: mdoc issuer and device signatures and status list CWTs
build on it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cbor2
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

ALG, X5CHAIN = 1, 33
SIGN1_TAG = 18
# RFC 9053 2.1: COSE algorithm -> (hash, curve, coordinate size in bytes). ESP256 (-9, RFC
# 9864) is ES256 named with its curve fixed; HAIP 1.0 lets an mdoc issuer use either.
ECDSA = {
    -7: (hashes.SHA256, ec.SECP256R1, 32),
    -9: (hashes.SHA256, ec.SECP256R1, 32),
    -35: (hashes.SHA384, ec.SECP384R1, 48),
    -36: (hashes.SHA512, ec.SECP521R1, 66),
}
ALG_NAMES = {-7: "ES256", -9: "ESP256", -35: "ES384", -36: "ES512"}
MAX_CERTIFICATES = 8


# A CBOR array of four and the text "Signature1": how every COSE_Sign1 Sig_structure starts.
SIG_STRUCTURE_PREFIX = b"\x84" + cbor2.dumps("Signature1")
DATA_ITEM_TAG = b"\xd8\x18"  # RFC 8949 3.4.5.1: tag 24, an encoded CBOR data item


def _head(major: int, length: int) -> bytes:
    """The shortest head (RFC 8949 3.1, 4.2.1) of a major type and argument, as cbor2 writes."""
    if length < 24:
        return bytes([major << 5 | length])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * size):
            return bytes([major << 5 | extra]) + length.to_bytes(size, "big")
    raise ValueError("CBOR lengths stop at 2**64")


def byte_string(value: bytes) -> bytes:
    """The CBOR encoding of a byte string, as ``cbor2.dumps(value)`` gives it."""
    return _head(2, len(value)) + value


def text_string(value: str) -> bytes:
    """The CBOR encoding of a text string, as ``cbor2.dumps(value)`` gives it."""
    encoded = value.encode("utf-8")
    return _head(3, len(encoded)) + encoded


def data_item(encoded: bytes) -> bytes:
    """``#6.24(bstr)`` around already encoded CBOR, as ``cbor2.dumps(CBORTag(24, encoded))``
    gives it: the verifiers build these for every digest and signature checked, and a
    ``cbor2`` encoder costs several microseconds to set up each time."""
    return DATA_ITEM_TAG + byte_string(encoded)


class CoseError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def loads(data: bytes, label: str) -> Any:
    """One whole CBOR data item; every failure, trailing bytes included, is a ``CoseError``
    naming what was read.

    cbor2 6 raises ``CBORDecodeError`` for all of it: a stray ``break``, a truncated item,
    nesting past its depth limit (400 containers) and a tagged value it cannot build (bad
    UTF-8, a malformed date or bignum, whose ``ValueError`` or ``TypeError`` it chains as the
    cause). The decoder stops at the end of the first item, so what remains is trailing."""
    stream = io.BytesIO(data)
    try:
        value = cbor2.CBORDecoder(stream).decode()
    except cbor2.CBORDecodeError:
        raise CoseError(f"{label} is not valid CBOR") from None
    if stream.tell() != len(data):
        raise CoseError(f"{label} is not valid CBOR")
    return value


@dataclass(frozen=True)
class Sign1:
    """A decoded COSE_Sign1 and what was signed: the protected header as its bytes too."""

    protected_bytes: bytes
    protected: Mapping[Any, Any]
    unprotected: Mapping[Any, Any]
    payload: bytes | None
    signature: bytes
    label: str

    @property
    def alg(self) -> int:
        """The algorithm from the protected header: an unprotected one could be swapped."""
        alg = self.protected.get(ALG)
        if alg not in ECDSA:
            shown = ALG_NAMES.get(alg, alg) if isinstance(alg, int) else repr(alg)
            raise CoseError(
                f"{self.label} is signed with algorithm {shown}; only ES256 (or ESP256), "
                "ES384 and ES512 are accepted"
            )
        return alg

    def verify(self, key: Any, detached_payload: bytes | None = None) -> None:
        """Check the signature with ``key`` (an EC public key), over the payload carried or,
        for a detached one, the payload given."""
        payload = self.payload if detached_payload is None else detached_payload
        if payload is None:
            raise CoseError(f"{self.label} has no payload to verify")
        hash_type, curve, size = ECDSA[self.alg]
        if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, curve):
            raise CoseError(f"{self.label}'s key does not fit its algorithm {ALG_NAMES[self.alg]}")
        if len(self.signature) != 2 * size:
            raise CoseError(f"{self.label} signature has the wrong length")
        r = int.from_bytes(self.signature[:size], "big")
        s = int.from_bytes(self.signature[size:], "big")
        # Sig_structure = ["Signature1", protected, external_aad (empty), payload] (RFC 9052
        # 4.4), written out: an encoder per signature cost more than the rest of this method.
        to_be_signed = (
            SIG_STRUCTURE_PREFIX
            + byte_string(self.protected_bytes)
            + b"\x40"
            + byte_string(payload)
        )
        try:
            key.verify(encode_dss_signature(r, s), to_be_signed, ec.ECDSA(hash_type()))
        except InvalidSignature:
            raise CoseError(f"{self.label} signature does not verify") from None


def read_sign1(value: bytes | Any, label: str) -> Sign1:
    """A COSE_Sign1 from its CBOR bytes or its already decoded array (tag 18 optional).

    cbor2 decodes what a tag it has no decoder for holds as immutable containers: a tagged
    COSE_Sign1 arrives as a tuple with its unprotected header a ``frozendict``, an untagged
    one as a list and a dict. Both are the same structure."""
    structure = loads(value, label) if isinstance(value, bytes) else value
    if isinstance(structure, cbor2.CBORTag):
        if structure.tag != SIGN1_TAG:
            raise CoseError(f"{label} is not a COSE_Sign1 (tag {structure.tag})")
        structure = structure.value
    if not isinstance(structure, list | tuple) or len(structure) != 4:
        raise CoseError(f"{label} is not a COSE_Sign1 array of four")
    protected_bytes, unprotected, payload, signature = structure
    if not isinstance(protected_bytes, bytes) or not isinstance(unprotected, Mapping):
        raise CoseError(f"{label} headers are malformed")
    if payload is not None and not isinstance(payload, bytes):
        raise CoseError(f"{label} payload is not a byte string")
    if not isinstance(signature, bytes):
        raise CoseError(f"{label} signature is not a byte string")
    protected = loads(protected_bytes, f"{label} protected header") if protected_bytes else {}
    if not isinstance(protected, dict):
        raise CoseError(f"{label} protected header is not a map")
    return Sign1(protected_bytes, protected, unprotected, payload, signature, label)


def x5chain(sign1: Sign1) -> list[x509.Certificate] | None:
    """RFC 9360 ``x5chain`` (label 33), leaf first, from either header; None when absent."""
    value = sign1.protected.get(X5CHAIN, sign1.unprotected.get(X5CHAIN))
    if value is None:
        return None
    items = [value] if isinstance(value, bytes) else value
    listed = isinstance(items, list | tuple) and all(isinstance(i, bytes) for i in items)
    if not listed or not items:
        raise CoseError(f"{sign1.label} x5chain is not a certificate or a list of them")
    if len(items) > MAX_CERTIFICATES:
        raise CoseError(f"{sign1.label} x5chain holds more than {MAX_CERTIFICATES} certificates")
    try:
        return [x509.load_der_x509_certificate(item) for item in items]
    except ValueError:
        raise CoseError(f"{sign1.label} x5chain holds a certificate that cannot be read") from None
