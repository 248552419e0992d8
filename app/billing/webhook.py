"""Stripe webhook signatures: how a completed payment reaches the service.

Stripe signs ``"<timestamp>.<raw body>"`` with the endpoint's secret (HMAC-SHA256) and sends
``Stripe-Signature: t=<timestamp>,v1=<hex>[,v1=...]``. The timestamp bounds replays.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from app import json_input

TOLERANCE_SECONDS = 300


class SignatureError(Exception):
    """The event was not signed by the configured endpoint secret, or is too old."""


def sign(payload: bytes, secret: str, timestamp: int) -> str:
    """The header value Stripe would send (used by tests and the local fake)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def verified_event(payload: bytes, header: str, secret: str, now: int) -> dict[str, Any]:
    """The event in ``payload`` if ``header`` carries a valid, fresh signature."""
    parts = [item.split("=", 1) for item in header.split(",") if "=" in item]
    timestamps = [value for key, value in parts if key.strip() == "t"]
    signatures = [value for key, value in parts if key.strip() == "v1"]
    # isascii: str.isdigit() also accepts digits like "²" that int() refuses.
    if len(timestamps) != 1 or not _is_number(timestamps[0]) or not signatures:
        raise SignatureError("Malformed Stripe-Signature header")
    timestamp = int(timestamps[0])
    if abs(now - timestamp) > TOLERANCE_SECONDS:
        raise SignatureError("Stripe-Signature timestamp is outside the tolerance")
    expected = sign(payload, secret, timestamp).split("v1=", 1)[1]
    # Compared as bytes: compare_digest refuses non-ASCII str, and the header is the sender's.
    wanted = expected.encode()
    if not any(hmac.compare_digest(wanted, c.encode("utf-8", "replace")) for c in signatures):
        raise SignatureError("Stripe-Signature does not match")
    try:
        # The one reader of bodies (app.json_input): the same depth rule as every endpoint.
        event = json_input.loads(payload)
    except json_input.JsonInputError as exc:
        raise SignatureError(f"Event body is not JSON this service reads: {exc}") from exc
    if not isinstance(event, dict):
        raise SignatureError("Event body is not a JSON object")
    return event
