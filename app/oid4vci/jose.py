"""Signing compact JWS with ES256: the one signing routine of the issuer.

RFC 7518 §3.4 wants the signature as R || S, each 32 bytes; ``cryptography`` returns DER, so
it is converted here. JSON is written compactly, as every byte is signed and shipped.

Issuing is on the hot path of the credential endpoint (``make bench`` measures it against one
raw ES256 signature), so the encoders here are the lean forms of the standard library's: one
C call for base64url, one reused JSON encoder.
"""

from __future__ import annotations

import binascii
import functools
import json
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

_ECDSA_SHA256 = ec.ECDSA(hashes.SHA256())
URLSAFE = bytes.maketrans(b"+/", b"-_")  # standard base64 to base64url (RFC 4648 §5)
escape_string = json.encoder.encode_basestring  # a JSON string literal: JSONEncoder's C escaper


def _not_json(value: Any) -> Any:
    raise ValueError(f"{type(value).__name__} is not JSON")


# The C encoder json.dumps builds on every call, built once: compact separators, no ASCII
# escaping, NaN and Infinity refused (not JSON, RFC 8259 §6). No cycle check: claims come from
# parsed JSON, which cannot hold a cycle (one would end in RecursionError, not a hang).
_C_ENCODER = (
    json.encoder.c_make_encoder(None, _not_json, escape_string, None, ":", ",", False, False, False)
    if json.encoder.c_make_encoder is not None
    else None
)
_ENCODER = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_not_json
)


def b64url(raw: bytes) -> str:
    """RFC 7515 §2 base64url without padding, in one pass of the C encoder."""
    return binascii.b2a_base64(raw, newline=False).rstrip(b"=").translate(URLSAFE).decode("ascii")


def json_text(value: Any) -> str:
    """JSON with no whitespace (RFC 8259); NaN and Infinity refused, as they are not JSON."""
    if _C_ENCODER is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


def compact_json(value: Any) -> bytes:
    """``json_text`` as the UTF-8 bytes that get encoded and signed (RFC 8259 §8.1)."""
    return json_text(value).encode("utf-8")


def es256_signature(private_key: ec.EllipticCurvePrivateKey, data: bytes) -> bytes:
    """An ES256 signature of ``data`` as JWS wants it: R || S, 64 bytes.

    ``cryptography`` gives DER (SEQUENCE of two INTEGERs, X.690 §8.3); for P-256 every length
    fits one byte, so R and S are read in place: an INTEGER carries a leading zero byte when its
    top bit is set and drops leading zeros, hence the trim to and padding up to 32 bytes.
    Anything else in front goes through the general DER decoder.
    """
    der = private_key.sign(data, _ECDSA_SHA256)
    r_length = der[3]
    if der[0] != 0x30 or der[1] != len(der) - 2 or der[2] != 0x02 or der[4 + r_length] != 0x02:
        r, s = decode_dss_signature(der)
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    r = der[4 : 4 + r_length]
    s = der[6 + r_length :]
    return r[-32:].rjust(32, b"\0") + s[-32:].rjust(32, b"\0")


@functools.lru_cache(maxsize=256)
def _es256_header(typ: str, kid: str, x5c: tuple[str, ...] = ()) -> str:
    """The encoded header: the same for every token an issuer key signs of one type."""
    header: dict[str, Any] = {"alg": "ES256", "typ": typ, "kid": kid}
    if x5c:
        header["x5c"] = list(x5c)
    return b64url(compact_json(header))


def sign_es256_jwt(
    *,
    typ: str,
    kid: str,
    payload: dict[str, Any] | str,
    private_key: ec.EllipticCurvePrivateKey,
    x5c: tuple[str, ...] = (),
) -> str:
    """A compact JWS (RFC 7515 §7.1) with header ``{"alg": "ES256", "typ", "kid"}`` and, when
    given, the certificate chain ``x5c`` (§4.1.6); ``payload`` is the claims, or their JSON
    text already written."""
    if not isinstance(private_key.curve, ec.SECP256R1):
        raise ValueError("ES256 needs a P-256 key")
    raw = payload.encode("utf-8") if isinstance(payload, str) else compact_json(payload)
    signing_input = f"{_es256_header(typ, kid, tuple(x5c))}.{b64url(raw)}"
    signature = es256_signature(private_key, signing_input.encode("ascii"))
    return f"{signing_input}.{b64url(signature)}"
