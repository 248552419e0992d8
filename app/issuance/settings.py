"""The issuing settings of the running deployment, read like the database session is.

The domain modules stay free of Flask: the application factory says where the running
application's settings are (``provide``), and the domain reads lifetimes and the
key-encryption secret through ``current()`` (see README "Configuration").
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from app.hardware_keys import TokenSettings
from app.oid4vci.keys import key_encryption_key

# At least 131,072 entries per list (Token Status List §13.2: herd privacy);
# a new list is started once half of one is used, so a random free index is found in a few
# draws at most.
STATUS_LIST_SIZE = 131_072
STATUS_LIST_FILL = STATUS_LIST_SIZE // 2


@dataclass(frozen=True)
class IssuingSettings:
    secret: str = field(repr=False)
    offer_seconds: int
    access_token_seconds: int
    nonce_seconds: int
    status_list_ttl: int
    status_list_valid_seconds: int
    par_seconds: int = 300
    authorization_code_seconds: int = 60
    dpop_required: bool = False
    batch_size: int = 10
    max_copies: int = 50
    # "pkcs11": new issuer keys are made in ``token``, which also holds keys made before.
    key_store: str = "database"
    token: TokenSettings | None = None
    country: str = "UT"
    # ``PUBLIC_URL``: where issuer identifiers and status lists are reached, for code that
    # runs outside a request (the DIDComm jobs).
    public_url: str = ""

    @cached_property
    def kek(self) -> bytes:
        """The AES-256 key that seals issuer private keys."""
        return key_encryption_key(self.secret)

    @cached_property
    def code_key(self) -> bytes:
        """A key of its own (derived from the KEK) for the offer codes' HMACs."""
        return hmac.new(self.kek, b"verity offer codes v1", hashlib.sha256).digest()

    @cached_property
    def nonce_key(self) -> bytes:
        """A key of its own for the MACs that make a c_nonce (``app.oid4vci.nonce``)."""
        return hmac.new(self.kek, b"verity c_nonces v1", hashlib.sha256).digest()

    @cached_property
    def dpop_nonce_key(self) -> bytes:
        """The key of the stateless DPoP nonces (RFC 9449 §8), shared by every worker."""
        return hmac.new(self.kek, b"verity dpop nonces v1", hashlib.sha256).digest()


def from_config(config: Mapping[str, Any]) -> IssuingSettings:
    """Without ``ISSUER_KEY_SECRET`` the secret is derived from ``SECRET_KEY``; production
    refuses to start that way (``app.config``)."""
    secret = config.get("ISSUER_KEY_SECRET") or f"derived from SECRET_KEY:{config['SECRET_KEY']}"
    return IssuingSettings(
        secret=secret,
        offer_seconds=config["CREDENTIAL_OFFER_SECONDS"],
        access_token_seconds=config["ISSUER_ACCESS_TOKEN_SECONDS"],
        nonce_seconds=config["ISSUER_NONCE_SECONDS"],
        status_list_ttl=config["STATUS_LIST_TTL_SECONDS"],
        status_list_valid_seconds=config["STATUS_LIST_VALID_SECONDS"],
        par_seconds=config.get("ISSUER_PAR_SECONDS", 300),
        authorization_code_seconds=config.get("ISSUER_AUTHORIZATION_CODE_SECONDS", 60),
        dpop_required=dpop_required(config.get("ISSUER_DPOP") or "accepted"),
        batch_size=batch_size(config.get("ISSUER_BATCH_SIZE", 10)),
        max_copies=max(int(config.get("ISSUER_MAX_COPIES", 50)), 1),
        key_store=config.get("KEY_STORE") or "database",
        token=token_settings(config) if config.get("PKCS11_MODULE") else None,
        country=country_code(config.get("ISSUER_COUNTRY") or "UT"),
        public_url=(config.get("PUBLIC_URL") or "").rstrip("/"),
    )


def country_code(value: str) -> str:
    """``ISSUER_COUNTRY``: two capital letters (ISO 3166-1 alpha-2), as Annex B asks."""
    if len(value) != 2 or not value.isascii() or not value.isalpha() or not value.isupper():
        raise ValueError(f"ISSUER_COUNTRY must be two capital letters, not {value!r}")
    return value


def dpop_required(value: str) -> bool:
    """``ISSUER_DPOP``: "accepted" (the default) or "required"; anything else is a mistake."""
    if value not in ("accepted", "required"):
        raise ValueError(f"ISSUER_DPOP must be 'accepted' or 'required', not {value!r}")
    return value == "required"


def batch_size(value: int) -> int:
    """``ISSUER_BATCH_SIZE``: OpenID4VCI 1.0 §12.2.4 wants a batch size of 2 or more."""
    if int(value) < 2:
        raise ValueError(f"ISSUER_BATCH_SIZE must be 2 or more, not {value!r}")
    return int(value)


def token_settings(config: Mapping[str, Any]) -> TokenSettings:
    """The PKCS#11 token the configuration names (issuer keys, or a request-signing key)."""
    return TokenSettings(
        module=config.get("PKCS11_MODULE") or "",
        token_label=config.get("PKCS11_TOKEN_LABEL") or "",
        pin=config.get("PKCS11_PIN") or "",
    )


_provider: Callable[[], IssuingSettings] | None = None


def provide(provider: Callable[[], IssuingSettings]) -> None:
    """Called by the application factory: where the running application keeps its settings."""
    global _provider
    _provider = provider


def current() -> IssuingSettings:
    if _provider is None:
        raise RuntimeError("the issuing settings are wired by the application factory")
    return _provider()
