"""The text/event-stream wire format (WHATWG HTML, "Server-sent events"): no database here.

An event is ``id``, ``event`` and one ``data`` line (the JSON body is written on one line, so
it needs no splitting); a comment line keeps an idle connection alive through proxies; the
``retry`` field tells the client how soon to reconnect.
"""

from __future__ import annotations

# Larger than any position a log reaches, smaller than what a BIGINT column holds.
MAX_POSITION = 2**63 - 1


def event(position: int, event_type: str, body: str) -> bytes:
    """One event; ``body`` must be a single line (compact JSON is)."""
    if "\n" in body or "\r" in body:
        raise ValueError("an event's data must be one line")
    return f"id: {position}\nevent: {event_type}\ndata: {body}\n\n".encode()


def heartbeat() -> bytes:
    """A comment: clients ignore it, proxies see traffic."""
    return b": heartbeat\n\n"


def retry(milliseconds: int) -> bytes:
    """How long a client waits before reconnecting, opening the stream at once (the headers
    and a first line go out before any event)."""
    return f"retry: {milliseconds}\n\n".encode()


def parse_last_event_id(value: str | None) -> int | None:
    """The position a reconnecting client saw last: a decimal number, or None when absent.
    Anything else is ValueError."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not text.isascii() or not text.isdigit() or int(text) > MAX_POSITION:
        raise ValueError(f"Last-Event-ID must be an event's id (a number): {value!r}")
    return int(text)
