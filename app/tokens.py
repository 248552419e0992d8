"""Random secrets that are shown once and stored only as a SHA-256 hash.

A short readable prefix says what a leaked string is (``vk_`` integration key, ``vs_`` session
token...), which makes secret scanners and support tickets useful.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def hash_secret(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def new_secret(prefix: str, nbytes: int = 32) -> tuple[str, str]:
    """Return ``(secret, hash)``; only the hash may be stored."""
    value = f"{prefix}{secrets.token_urlsafe(nbytes)}"
    return value, hash_secret(value)


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
