"""AES-256-GCM sealing of what Verity must read back (private keys, signing secrets, uploads).

One layout for every sealed value: a random 96-bit nonce, then the ciphertext and its tag. A
fresh nonce per seal keeps GCM safe under one long-lived key-encryption key; the associated
data names what is sealed, so a value sealed as one kind never opens as another. Each caller
keeps its own error, so a failure still says which secret did not open.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12  # NIST SP 800-38D §8.2
TAG_BYTES = 16


class SealBroken(ValueError):
    """Another key-encryption key, other associated data, or damaged bytes."""


def seal(plain: bytes, kek: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(kek).encrypt(nonce, plain, aad)


def open_sealed(sealed: bytes, kek: bytes, aad: bytes) -> bytes:
    """What ``seal`` sealed; GCM authenticates, so a wrong key is detected, never misread."""
    if len(sealed) < NONCE_BYTES + TAG_BYTES:
        raise SealBroken("too short to be sealed")
    try:
        return AESGCM(kek).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], aad)
    except (InvalidTag, ValueError) as exc:
        raise SealBroken("does not open with this key") from exc
