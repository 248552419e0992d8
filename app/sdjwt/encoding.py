"""Strict base64url and JSON decoding for JOSE and SD-JWT parts.

Lenient decoders are how two parties end up reading different bytes out of the same token, so
everything here refuses what the specifications do not allow rather than repairing it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from app.sdjwt.errors import SdJwtError

# RFC 7515 §2 and RFC 9901 §4 (ABNF): base64url without padding, line breaks or whitespace.
BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
# By length modulo 4: the bits of the last character that encode nothing, and so must be zero
# in the canonical spelling (RFC 4648 §3.5); a remainder of 1 cannot occur in base64 at all.
UNUSED_BITS: dict[int, int | None] = {0: 0, 1: None, 2: 0b1111, 3: 0b11}
_STANDARD = bytes.maketrans(b"-_", b"+/")


def b64url_encode(raw: bytes) -> str:
    """Encode as RFC 7515 §2 base64url, without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str, what: str) -> bytes:
    """Decode base64url, refusing padding, foreign characters and non-canonical encodings.

    Non-canonical input (stray bits in the last character) decodes to the same bytes as the
    canonical form; accepting it would let one signed value travel under several spellings.
    """
    if not isinstance(text, str) or not BASE64URL.fullmatch(text):
        raise SdJwtError(f"{what} is not base64url encoded")
    unused_bits = UNUSED_BITS[len(text) % 4]
    if unused_bits is None or ALPHABET.index(text[-1]) & unused_bits:
        raise SdJwtError(f"{what} is not base64url encoded")
    return binascii.a2b_base64((text + "=" * (-len(text) % 4)).encode("ascii").translate(_STANDARD))


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # RFC 7515 §4 and RFC 7519 §4: a JSON object with duplicate member names must either be
    # rejected or read as its last value; parsers disagree on the latter, so we reject.
    result: dict[str, Any] = {}
    for name, value in pairs:
        if name in result:
            raise ValueError("duplicate member name")
        result[name] = value
    return result


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (RFC 8259 §6); Python's parser accepts them by default.
    raise ValueError(f"{name} is not JSON")


_STRICT_JSON = json.JSONDecoder(
    object_pairs_hook=_object_without_duplicates, parse_constant=_no_constant
)


def parse_json(raw: bytes, what: str) -> Any:
    """Parse UTF-8 JSON strictly (no duplicate names, no NaN), wrapping every failure."""
    try:
        return _STRICT_JSON.decode(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SdJwtError(f"{what} is not valid JSON") from exc


def decode_json_object(text: str, what: str) -> dict[str, Any]:
    """Decode a base64url JSON object, such as a JOSE header or a JWT claims set."""
    value = parse_json(b64url_decode(text, what), what)
    if not isinstance(value, dict):
        raise SdJwtError(f"{what} is not a JSON object")
    return value
