"""Webhook signing secrets, sealed at rest with AES-256-GCM.

A signing secret must be read back to sign, so unlike API keys it cannot be stored as a hash;
it is sealed like the issuers' private keys, and a copy of the database alone signs nothing.
"""

from __future__ import annotations

import base64
import secrets

from app import sealing

SECRET_PREFIX = "whsec_"  # Standard Webhooks: the prefix marks a base64 signing secret
SECRET_BYTES = 32  # Standard Webhooks recommends 24 to 64 random bytes
_AAD = b"verity webhook signing secret v1"


class SealedSecretError(ValueError):
    """A sealed secret did not open: another key-encryption key, or damaged bytes."""


def new_secret() -> str:
    """``whsec_`` and 32 random bytes in base64, as Standard Webhooks libraries read it."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def seal(secret: str, kek: bytes) -> bytes:
    return sealing.seal(secret.encode("ascii"), kek, _AAD)


def open_sealed(sealed: bytes, kek: bytes) -> str:
    try:
        plain = sealing.open_sealed(sealed, kek, _AAD)
    except sealing.SealBroken as exc:
        raise SealedSecretError("The webhook secret does not open with this key") from exc
    return plain.decode("ascii")
