"""One-time values (a tx_code, a new integration key, a webhook secret) carried from a form's
POST to the page it redirects to, sealed inside the session cookie.

Post/Redirect/Get keeps a reload from posting again, but the value exists in clear only in
the POST. Flask's session cookie is signed, not encrypted, so the value is sealed (AES-GCM
under a key derived from ``SECRET_KEY``) before it rides there, expires after a few minutes,
and is removed by the page that shows it: a reload of that page shows it no more. It never
travels in the URL, where logs and browser history would keep it.
"""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app, session

_SESSION_KEY = "shown_once"
_KEK_INFO = b"verity one-time values in the session v1"
_NONCE_BYTES = 12  # NIST SP 800-38D §8.2
# Long enough for the redirect and a slow page load, short enough that a cookie copied later
# opens nothing.
LIFETIME_SECONDS = 300


def _key() -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
    return hkdf.derive(str(current_app.config["SECRET_KEY"]).encode("utf-8"))


def keep_for_next_page(
    page: str, *, lifetime_seconds: float = LIFETIME_SECONDS, **values: Any
) -> None:
    """Seal ``values`` for the next GET of ``page`` (a label such as the credential's ID)."""
    until = time.time() + lifetime_seconds
    plain = json.dumps({"page": page, "until": until, "values": values})
    nonce = os.urandom(_NONCE_BYTES)
    sealed = nonce + AESGCM(_key()).encrypt(nonce, plain.encode("utf-8"), page.encode("utf-8"))
    session[_SESSION_KEY] = base64.urlsafe_b64encode(sealed).decode("ascii")


def take(page: str) -> dict[str, Any]:
    """The values kept for ``page``, removed from the session; empty when there are none,
    they expired, or they were kept for another page."""
    raw = session.get(_SESSION_KEY)
    if raw is None:
        return {}
    try:
        sealed = base64.urlsafe_b64decode(raw)
        plain = AESGCM(_key()).decrypt(
            sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], page.encode("utf-8")
        )
    except (InvalidTag, ValueError):
        return {}  # kept for another page: left for it
    session.pop(_SESSION_KEY, None)
    kept = json.loads(plain)
    if kept["page"] != page or kept["until"] < time.time():
        return {}
    return dict(kept["values"])
