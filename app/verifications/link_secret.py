"""The per-verification link secret behind ``customer_sig``, sealed at rest (AES-256-GCM).

With ``anonymous_open: "signed"`` an open without the integration key must carry
``customer_sig``: base64url without padding of HMAC-SHA256, keyed with the link secret's
UTF-8 bytes as shown, over the customer ID's UTF-8 bytes. The organization's backend makes it
(for a link it hands a customer), so only customer IDs it signed can be opened by anyone else.
The secret must be read back to check a signature, so unlike an integration key it cannot be
stored as a hash; it is sealed like the webhook signing secrets, under a key of its own
derived from ``ISSUER_KEY_SECRET`` (moved by ``flask keys reseal``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app import sealing

SECRET_PREFIX = "vls_"  # says what a pasted secret is
_KEK_INFO = b"verity no-code link secret encryption v1"  # RFC 5869 §3.2: a key of its own
_AAD = b"verity no-code link secret v1"


class SealedLinkSecretError(ValueError):
    """A sealed link secret did not open: another key-encryption key, or damaged bytes."""


_configured: list[Callable[[], str]] = []


def provide(provider: Callable[[], str]) -> None:
    """Where the running application's ``ISSUER_KEY_SECRET`` (or what stands in for it) is
    read; the application factory says, so this module knows nothing of Flask."""
    _configured[:] = [provider]


def current_kek() -> bytes:
    """The key link secrets are sealed under now."""
    if not _configured:
        raise RuntimeError("the link secret's key is wired by the application factory")
    return key_encryption_key(_configured[0]())


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def key_encryption_key(configured_secret: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
    return hkdf.derive(configured_secret.encode("utf-8"))


def seal(secret: str, kek: bytes) -> bytes:
    return sealing.seal(secret.encode("utf-8"), kek, _AAD)


def open_sealed(sealed: bytes, kek: bytes) -> str:
    try:
        plain = sealing.open_sealed(sealed, kek, _AAD)
    except sealing.SealBroken as exc:
        raise SealedLinkSecretError("The link secret does not open with this key") from exc
    return plain.decode("utf-8")


def customer_sig(secret: str, customer_id: str) -> str:
    """What the backend sends: base64url (no padding) of HMAC-SHA256(secret, customer_id)."""
    mac = hmac.new(secret.encode("utf-8"), customer_id.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def signature_holds(secret: str, customer_id: str, signature: str | None) -> bool:
    """Compared in constant time; a missing signature never holds."""
    if not signature:
        return False
    return hmac.compare_digest(
        customer_sig(secret, customer_id).encode("ascii"), signature.strip().encode("utf-8")
    )
