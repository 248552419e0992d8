"""The DIDComm settings of the running deployment, provided by the application factory (as
the webhook settings are), so the domain reads them without Flask."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# Binds the derived key to sealing DIDComm keys only (RFC 5869 §3.2 "info"): the same
# configured secret yields unrelated keys for issuer keys, webhook secrets and these.
_KEK_INFO = b"verity didcomm agent key encryption v1"
# Sending one message to a mediator, whole (connect, TLS, the answer), ends after this long.
SEND_TIMEOUT = 10.0
# A message is tried this many times, waiting longer each time (``jobs.deliver``).
SEND_ATTEMPTS = 5


@dataclass(frozen=True)
class DidcommSettings:
    # Where holders POST their messages: <PUBLIC_URL>/didcomm, named in each organization's DID.
    endpoint: str
    # The organization-facing base (<PUBLIC_URL>): invitations and the presentation's domain.
    base_url: str
    secret: str
    allow_private: bool
    timeout: float = SEND_TIMEOUT
    attempts: int = SEND_ATTEMPTS

    @cached_property
    def kek(self) -> bytes:
        """The AES-256 key an organization's DIDComm private keys are sealed under."""
        return key_encryption_key(self.secret)


def key_encryption_key(secret: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
    return hkdf.derive(secret.encode("utf-8"))


def from_config(config: Mapping[str, Any], base_url: str) -> DidcommSettings:
    """Sealed under the issuer key secret (or, in development, what is derived from
    ``SECRET_KEY``), as webhook secrets are, with a key of its own."""
    secret = config.get("ISSUER_KEY_SECRET") or f"derived from SECRET_KEY:{config['SECRET_KEY']}"
    return DidcommSettings(
        endpoint=f"{base_url}/didcomm",
        base_url=base_url,
        secret=secret,
        allow_private=bool(config.get("TRUST_ALLOW_PRIVATE")),
    )


_provider: Callable[[], DidcommSettings] | None = None


def provide(provider: Callable[[], DidcommSettings]) -> None:
    global _provider
    _provider = provider


def current() -> DidcommSettings:
    if _provider is None:
        raise RuntimeError("the DIDComm settings are wired by the application factory")
    return _provider()


_context: Callable[[str, str], Any] | None = None


def provide_context(factory: Callable[[str, str], Any]) -> None:
    """Called by the application factory: how a decision's trust context is built
    (``audience``, ``nonce``), the same as for OpenID4VP answers."""
    global _context
    _context = factory


def context() -> Callable[[str, str], Any]:
    if _context is None:
        raise RuntimeError("the DIDComm trust context is wired by the application factory")
    return _context
