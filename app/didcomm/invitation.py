"""Out-of-band 2.0 invitations (DIDComm Messaging v2 §9.5.1) and their ``_oob`` URLs.

The Identus SDK 7 reads ``_oob`` with the multiformats *standard* base64 decoder
(``src/edge-agent/didcomm/ParseInvitation.ts`` ``tryDecodeB64``), which refuses the base64url
characters ``-`` and ``_``, while ``+`` turns into a space in a query string and ``/`` is not
safe in every scanner. The spec (§9.5.1) says base64url; the SDK cannot read that whenever
those characters appear. So the value here is standard base64 (padded) of a JSON text written
so that standard base64 never produces ``+`` or ``/``, and the URL holds only
``[A-Za-z0-9=]``, which both decoders read identically.

Why escaping suffices: in base64 each 3-byte group yields four 6-bit values; for ASCII bytes
(< 0x80) only the last one can reach 62 (``+``) or 63 (``/``), and only when the third byte's
low six bits are ``111110`` or ``111111``: the bytes ``>`` (0x3E), ``?`` (0x3F), ``~`` (0x7E)
and DEL (0x7F). JSON is written ASCII-only and those four characters, which can occur only
inside strings, are written as ``\\u00XX`` escapes. Nothing else changes: the text parses to
the same invitation.

The SDK requires ``type``, ``id``, ``from`` and ``body.accept`` (a list of non-empty
strings), and refuses an invitation past ``expires_time`` (seconds since the epoch)
(``ParseOOBInvitation.ts``, ``OutOfBandInvitation.ts``).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

from app.didcomm.encoding import read_json
from app.didcomm.errors import InvitationError

TYPE = "https://didcomm.org/out-of-band/2.0/invitation"
CONNECT_GOAL_CODE = "org.hyperledger.identus.connect"
_ESCAPES = {">": "\\u003e", "?": "\\u003f", "~": "\\u007e", "\x7f": "\\u007f"}
# The most a QR code holds as bytes (version 40, error correction L, ISO/IEC 18004 Table 7):
# what a person's page and the invitation page draw the link as.
QR_CAPACITY = 2953
_OOB_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789=")


def make(
    from_did: str,
    *,
    goal_code: str = CONNECT_GOAL_CODE,
    goal: str,
    expires_time: int | None = None,
    invitation_id: str | None = None,
) -> dict[str, Any]:
    """An OOB 2.0 invitation from ``from_did`` accepting ``didcomm/v2``."""
    invitation: dict[str, Any] = {
        "id": invitation_id or str(uuid.uuid4()),
        "type": TYPE,
        "from": from_did,
        "body": {"goal_code": goal_code, "goal": goal, "accept": ["didcomm/v2"]},
    }
    if expires_time is not None:
        invitation["expires_time"] = int(expires_time)
    return invitation


def encode(invitation: dict[str, Any]) -> str:
    """The ``_oob`` value: standard base64 of the invitation's escaped JSON (see module)."""
    text = json.dumps(invitation, separators=(",", ":"), ensure_ascii=True)
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return base64.b64encode(text.encode("ascii")).decode("ascii")


def oob_url(base_url: str, invitation: dict[str, Any], *, max_length: int | None = None) -> str:
    """``<base_url>?_oob=<value>`` (``&`` if the base already has a query).

    With ``max_length`` (:data:`QR_CAPACITY` for a link drawn as a QR code), a URL that would
    be longer gets the invitation's ``goal`` cut short (ending in an ellipsis) until it fits:
    the goal is only words for the person, and a name in a non-Latin script costs six bytes a
    character once escaped. An invitation that cannot fit even without its goal is left whole.
    """
    separator = "&" if urlsplit(base_url).query else "?"
    url = f"{base_url}{separator}_oob={encode(invitation)}"
    goal = invitation.get("body", {}).get("goal")
    if max_length is None or len(url) <= max_length or not isinstance(goal, str) or not goal:
        return url

    def with_goal(kept: int) -> str:
        shortened = goal[:kept].rstrip() + "\u2026" if kept else ""
        body = {**invitation["body"], "goal": shortened}
        return f"{base_url}{separator}_oob={encode({**invitation, 'body': body})}"

    low, high = 0, len(goal) - 1  # the longest kept prefix that fits, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if len(with_goal(middle)) <= max_length:
            low = middle
        else:
            high = middle - 1
    return with_goal(low)


def decode(value: str) -> dict[str, Any]:
    """The invitation in an ``_oob`` value: standard base64 (or base64url), padding optional."""
    stripped = value.strip().rstrip("=")
    try:
        raw = base64.b64decode(
            stripped.replace("-", "+").replace("_", "/") + "=" * (-len(stripped) % 4),
            validate=True,
        )
    except (binascii.Error, ValueError):
        raise InvitationError("The _oob value is not base64-encoded JSON.") from None
    invitation = read_json(raw, InvitationError, "The _oob value")
    if not isinstance(invitation, dict) or invitation.get("type") != TYPE:
        raise InvitationError("The _oob value is not an out-of-band 2.0 invitation.")
    for field in ("id", "from"):
        if not isinstance(invitation.get(field), str) or not invitation[field]:
            raise InvitationError(f"The invitation has no {field}.")
    body = invitation.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("accept"), list):
        raise InvitationError("The invitation body has no accept list.")
    return invitation


def parse_oob(url: str) -> dict[str, Any]:
    """The invitation carried by an ``_oob`` URL (for our tests and the holder CLI)."""
    values = parse_qs(urlsplit(url).query).get("_oob")
    if not values:
        raise InvitationError("The URL has no _oob parameter.")
    return decode(values[0])


def is_safe(value: str) -> bool:
    """Whether an ``_oob`` value uses only ``[A-Za-z0-9=]`` (what the SDK reads)."""
    return set(value) <= _OOB_ALPHABET
