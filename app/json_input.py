"""JSON from outside, read defensively: bounded depth, no NUL, no lone surrogates.

Python's parser recurses once per nesting level, so a body of a few thousand ``[`` raises
``RecursionError`` (a 500) instead of ``ValueError``; and even a body it can parse may be too
deep for the code that walks it later. Text that no engine can store is refused here too:
PostgreSQL rejects NUL in ``text`` and ``jsonb``, and a lone surrogate (``"\\ud800"``) cannot be
encoded as UTF-8 by any driver. Refusing both at the door keeps every engine alike.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Deeper than any document this service reads (a DCQL query or a schema is a few levels).
MAX_DEPTH = 64
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class JsonInputError(ValueError):
    """The input is not JSON this service accepts; the message says why, in plain words."""


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (RFC 8259 §6); Python's parser accepts them by default.
    raise JsonInputError(f"{name} is not a JSON number")


def loads(raw: str | bytes, what: str = "Body") -> Any:
    """Parse ``raw``; raise ``JsonInputError`` for anything a client could have got wrong.
    ``what`` names the text in the reason (``Body is not valid JSON``)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise JsonInputError(f"JSON is nested deeper than {MAX_DEPTH} levels") from None
    except JsonInputError:
        raise
    except (UnicodeDecodeError, ValueError):
        raise JsonInputError(f"{what} is not valid JSON") from None
    check_value(value)
    return value


def check_value(value: Any) -> None:
    """Refuse structures deeper than ``MAX_DEPTH`` and text no database can store.

    Iterative on purpose: the check itself must not be the recursion it guards against.
    """
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            check_text(item)
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise JsonInputError(f"JSON is nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, dict):
                pending.extend((key, depth) for key in item)
                pending.extend((child, depth + 1) for child in item.values())
            else:
                pending.extend((child, depth + 1) for child in item)


def check_text(text: str) -> None:
    if UNSTORABLE.search(text):
        if "\x00" in text:
            raise JsonInputError("Text must not contain NUL characters")
        raise JsonInputError("Text must be valid Unicode (a lone surrogate is not)")
