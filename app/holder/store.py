"""The wallet file: the holder's P-256 key and the credentials it received, as JSON.

The file holds a private key, so it is only ever written with mode 0600 (created that way, not
narrowed afterwards), and written whole to a temporary file that replaces the old one, so an
interrupted write never leaves half a wallet.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from app.holder.jose import JoseError, key_from_jwk, private_jwk, public_jwk

DEFAULT_PATH = Path(__file__).resolve().parent.parent.parent / "instance" / "holder-wallet.json"
FILE_MODE = 0o600
VERSION = 1


class WalletError(Exception):
    """The wallet file cannot be used; the message says why."""


@dataclass
class Wallet:
    path: Path
    key: ec.EllipticCurvePrivateKey
    credentials: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, path: Path | str | None = None) -> Wallet:
        """The wallet at ``path``, created with a new key when the file does not exist yet."""
        path = Path(path) if path else DEFAULT_PATH
        if not path.exists():
            wallet = cls(path, ec.generate_private_key(ec.SECP256R1()))
            wallet.save()
            return wallet
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            key = key_from_jwk(document["key"])
            credentials = list(document.get("credentials", []))
        except (OSError, ValueError, KeyError, TypeError, JoseError) as exc:
            raise WalletError(f"{path} is not a readable wallet file: {exc}") from None
        return cls(path, key, credentials)

    @property
    def jwk(self) -> dict[str, str]:
        """The public key credentials are bound to (``cnf.jwk``)."""
        return public_jwk(self.key)

    def add(self, entry: dict[str, Any]) -> dict[str, Any]:
        stored = {"id": secrets.token_hex(8), "received_at": int(time.time()), **entry}
        self.credentials.append(stored)
        self.save()
        return stored

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "version": VERSION,
            "key": private_jwk(self.key),
            "credentials": self.credentials,
        }
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(document, handle, indent=2)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
