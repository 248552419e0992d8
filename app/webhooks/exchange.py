"""What one delivery attempt sent and what it was answered, as the delivery log keeps it.

The log is shown to every member of the organization, in the dashboard and the API, so it
keeps what helps someone debug a receiver and nothing that works as a credential:

- Bodies: the first ``KEPT_BYTES`` (4 KiB) of each, marked as cut when there was more. They
  are stored as text (UTF-8; bytes that are not read as U+FFFD, and a character split by the
  cut is left out).
- The URL: every query value is replaced by ``[redacted]`` (names stay). A receiver may
  authenticate deliveries by a token in the query, and which parameter carries one cannot be
  told from the outside.
- Headers, both ways: the value of an authentication or session header (``Authorization``,
  ``Proxy-Authorization``, ``Cookie``, ``Set-Cookie``) or of any header whose name speaks of
  a secret, token, password or API key is replaced by ``[redacted]``. The Standard Webhooks
  headers stay whole: ``webhook-signature`` is an HMAC of this one body, which the receiver
  checks and which cannot be turned back into the signing secret or reused for another body.
- Headers are kept up to ``KEPT_BYTES`` in all, in the order received; any past that are
  left out and the headers marked as cut.
- Errors name the host, never the address it resolved to (``delivery.failure_text``).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

KEPT_BYTES = 4096
REDACTED = "[redacted]"

_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie"}
_SECRET_WORDS = ("secret", "token", "password", "passwd", "api-key", "apikey", "api_key")


def redact_url(url: str) -> str:
    """``url`` with each query value replaced by ``[redacted]``; a URL that cannot be read
    keeps only its scheme and host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(name, REDACTED) for name, _ in pairs], safe="[]")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in _SECRET_HEADERS or any(word in lowered for word in _SECRET_WORDS)


@dataclass(frozen=True)
class KeptHeaders:
    headers: dict[str, str]
    cut: bool


def keep_headers(headers: Mapping[str, str]) -> KeptHeaders:
    """The headers with secret values redacted, up to ``KEPT_BYTES`` of names and values."""
    kept: dict[str, str] = {}
    size = 0
    for name, value in headers.items():
        shown = REDACTED if is_secret_header(name) else _text(value)
        size += len(name.encode()) + len(shown.encode())
        if size > KEPT_BYTES:
            return KeptHeaders(kept, True)
        kept[_text(name)] = shown
    return KeptHeaders(kept, False)


@dataclass(frozen=True)
class KeptBody:
    text: str
    cut: bool


def keep_body(body: bytes, cut: bool = False) -> KeptBody:
    """The first ``KEPT_BYTES`` of ``body`` as text; ``cut`` when there was more (already
    known to be cut when the caller read only the start of it)."""
    cut = cut or len(body) > KEPT_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # Not final when cut: the bytes of a character the cut split are left out.
    text = decoder.decode(body[:KEPT_BYTES], final=not cut)
    return KeptBody(_text(text), cut)


def _text(value: str) -> str:
    """PostgreSQL text holds no NUL character; it reads as U+FFFD like other bytes that are
    not text."""
    return value.replace("\x00", "\ufffd")
