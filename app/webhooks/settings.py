"""The webhook settings of the running deployment, provided by the application factory (as
the issuing settings are), so the domain reads them without Flask."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# Binds the derived key to sealing webhook secrets only (RFC 5869 §3.2 "info"), so the same
# configured secret yields unrelated keys for issuer keys and for webhook secrets.
_KEK_INFO = b"verity webhook signing secret encryption v1"
# Each delivery attempt, whole (connect, TLS, the answer's headers), ends after this long.
DELIVERY_TIMEOUT = 10.0
# Deliveries of one organization in flight at once, whatever its endpoints: the other
# delivery threads stay free for other organizations.
DELIVERIES_PER_ORGANIZATION = 2


@dataclass(frozen=True)
class WebhookSettings:
    secret: str
    allow_private: bool
    timeout: float = DELIVERY_TIMEOUT
    per_organization: int = DELIVERIES_PER_ORGANIZATION

    @cached_property
    def kek(self) -> bytes:
        """The AES-256 key webhook signing secrets are sealed under."""
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
        return hkdf.derive(self.secret.encode("utf-8"))


def from_config(config: Mapping[str, Any]) -> WebhookSettings:
    """Sealed under the issuer key secret (or, in development, what is derived from
    ``SECRET_KEY``), with a key of its own."""
    secret = config.get("ISSUER_KEY_SECRET") or f"derived from SECRET_KEY:{config['SECRET_KEY']}"
    return WebhookSettings(
        secret=secret,
        allow_private=bool(config.get("TRUST_ALLOW_PRIVATE")),
        timeout=float(config.get("WEBHOOK_TIMEOUT") or DELIVERY_TIMEOUT),
        per_organization=max(
            int(config.get("WEBHOOK_DELIVERIES_PER_ORGANIZATION") or DELIVERIES_PER_ORGANIZATION),
            1,
        ),
    )


_provider: Callable[[], WebhookSettings] | None = None


def provide(provider: Callable[[], WebhookSettings]) -> None:
    global _provider
    _provider = provider


def current() -> WebhookSettings:
    if _provider is None:
        raise RuntimeError("the webhook settings are wired by the application factory")
    return _provider()
