"""``c_nonce`` values that prove themselves, so the Nonce Endpoint writes nothing.

OpenID4VCI 1.0 §7 leaves the nonce's form to the issuer. The endpoint is unauthenticated, so a
nonce kept as a row per call let anyone grow a table as fast as they could post. A nonce here
is ``base64url(expiry || 16 random bytes || MAC)``: the MAC (HMAC-SHA256 under a server key,
over the issuer's identifier too) says this issuer made it and when it lapses; nothing is
stored until a Credential Request spends it, and only to refuse it a second time (that
request needs an access token, so spent nonces grow only with real issuance).
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import os

from app.oid4vci.jose import b64url

_EXPIRY_BYTES = 8
_RANDOM_BYTES = 16  # 128 bits: no two nonces alike
_MAC_BYTES = 16  # HMAC-SHA256 truncated to 128 bits (RFC 2104 §5 allows half the output)
_LENGTH = _EXPIRY_BYTES + _RANDOM_BYTES + _MAC_BYTES
_LABEL = b"verity c_nonce v1"


def _mac(key: bytes, issuer: bytes, body: bytes) -> bytes:
    message = _LABEL + len(issuer).to_bytes(2, "big") + issuer + body
    return hmac.new(key, message, hashlib.sha256).digest()[:_MAC_BYTES]


def mint_nonce(key: bytes, issuer: bytes, expires_at: int) -> str:
    """A fresh nonce of ``issuer`` (its identifier's bytes), good until ``expires_at``."""
    body = expires_at.to_bytes(_EXPIRY_BYTES, "big") + os.urandom(_RANDOM_BYTES)
    return b64url(body + _mac(key, issuer, body))


def nonce_expiry(key: bytes, issuer: bytes, nonce: str) -> int | None:
    """When ``nonce`` lapses, if ``issuer`` made it under ``key``; None for anything else."""
    if not isinstance(nonce, str) or len(nonce) != (_LENGTH * 8 + 5) // 6:
        return None
    try:
        raw = binascii.a2b_base64(nonce.translate(_FROM_URLSAFE) + "==")
    except (binascii.Error, ValueError):
        return None
    # One spelling per nonce: base64 leaves spare bits in the last character, and a nonce is
    # spent by its text, so another spelling of the same bytes must not pass as unused.
    if len(raw) != _LENGTH or b64url(raw) != nonce:
        return None
    body, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
    if not hmac.compare_digest(mac, _mac(key, issuer, body)):
        return None
    return int.from_bytes(body[:_EXPIRY_BYTES], "big")


_FROM_URLSAFE = str.maketrans("-_", "+/")
