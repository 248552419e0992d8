"""Small encodings the DID methods share: base58btc, multibase, base64url without padding,
and the one JSON reader for everything the DIDComm code parses from outside."""

from __future__ import annotations

import base64
import re
from typing import Any

from app import json_input
from app.didcomm.errors import DidcommError

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}
_B64URL = re.compile(r"[A-Za-z0-9_-]*=*")


def b58encode(data: bytes) -> str:
    """Bitcoin base58 (what multibase ``z`` means); leading zero bytes become ``1``."""
    number = int.from_bytes(data, "big")
    out = []
    while number:
        number, rem = divmod(number, 58)
        out.append(_B58[rem])
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + "".join(reversed(out))


def b58decode(text: str) -> bytes:
    """Inverse of :func:`b58encode`; raises ``ValueError`` on a character outside the alphabet."""
    number = 0
    for char in text:
        if char not in _B58_INDEX:
            raise ValueError(f"{char!r} is not a base58 character")
        number = number * 58 + _B58_INDEX[char]
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    zeros = len(text) - len(text.lstrip("1"))
    return b"\0" * zeros + body


def b64url(data: bytes) -> str:
    """base64url without padding (JOSE, did:peer:2 services, did:prism long form)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url, padding optional; raises ``ValueError`` on anything else."""
    # One regular expression over the text: a check per character in Python cost a sixth of
    # opening a DIDComm presentation (bench/didcomm.py), and admitted non-ASCII letters.
    if not _B64URL.fullmatch(text):
        raise ValueError("not base64url")
    stripped = text.rstrip("=")
    return base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))


def read_json(raw: bytes | str, error: type[DidcommError], what: str) -> Any:
    """JSON from outside (a message, a JWE header, a DID's service, an invitation, a JWS),
    read by the service's one bounded reader (``app.json_input``): nesting past its depth
    raises ``error`` with the reason, instead of a ``RecursionError`` in whatever walks it
    later (``copy.deepcopy`` of a DID document, the abbreviations' expansion)."""
    try:
        return json_input.loads(raw, what)
    except json_input.JsonInputError as exc:
        raise error(str(exc)) from None
