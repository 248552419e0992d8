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
# Sending one message to a mediator, whole (connect, TLS, the answer), ends after this long
# (``DIDCOMM_SEND_TIMEOUT``).
SEND_TIMEOUT = 10.0
# A message is tried this many times, waiting longer each time (``jobs.deliver``).
SEND_ATTEMPTS = 5
# A destination that never answered (no connection, or no status line before the deadline)
# is given up on sooner: a message to it is tried this many times, and while the host has not
# answered since, each attempt ends after ``SILENT_TIMEOUT`` seconds. A mediator that is up
# answers within a second; a tarpit a stranger names should cost little.
SILENT_ATTEMPTS = 2
SILENT_TIMEOUT = 3.0
# Sends to one host in flight at once, per worker process (``DIDCOMM_SENDS_PER_HOST``): one
# slow host never holds every DIDComm thread.
SENDS_PER_HOST = 2
# DIDComm jobs that may wait in the queue (``DIDCOMM_QUEUE_LIMIT``): past it the door answers
# 503 with ``Retry-After`` instead of queueing more than the worker can work off.
QUEUE_LIMIT = 1000
# Seconds a client refused by the queue bound is asked to wait.
BUSY_RETRY_AFTER = 30


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
    silent_timeout: float = SILENT_TIMEOUT
    silent_attempts: int = SILENT_ATTEMPTS
    sends_per_host: int = SENDS_PER_HOST
    queue_limit: int = QUEUE_LIMIT

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
        timeout=float(config.get("DIDCOMM_SEND_TIMEOUT") or SEND_TIMEOUT),
        silent_timeout=min(SILENT_TIMEOUT, float(config.get("DIDCOMM_SEND_TIMEOUT") or 1e9)),
        sends_per_host=max(int(config.get("DIDCOMM_SENDS_PER_HOST") or SENDS_PER_HOST), 1),
        queue_limit=int(config.get("DIDCOMM_QUEUE_LIMIT") or QUEUE_LIMIT),
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
