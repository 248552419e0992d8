"""Values read by the type of the schema attribute they belong to.

Clients send condition values as they have them, often as text (``"17"``, ``"true"``,
``"2000-01-31"``), and wallets disclose claims the same way. Both sides are read here by one
set of rules, so that a condition and a claim are compared as numbers, booleans, dates,
addresses or text, never by how they happened to be written.

No Flask and no database: ``read`` raises ``Unreadable`` with a sentence the caller puts in
its own error.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

TYPES = ("TEXT", "NUMBER", "BOOLEAN", "URL", "DATETIME", "EMAIL")

# A JSON number written as text, with an optional sign and surrounding spaces; nothing Python
# alone would take ("1_000", "inf", "nan", "0x10").
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_MAX_DIGITS = 100
# RFC 3339 full-date, and date-time (offset optional: none is read as UTC; a space may stand
# for the T, as RFC 3339 §5.6 allows).
_FULL_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?"
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


class Unreadable(ValueError):
    """A value that cannot be read as the type asked for; the message says what it needs."""


def read(value: Any, kind: str) -> Any:
    """``value`` as ``kind`` reads it: int or float, bool, ``date`` or aware ``datetime``,
    normalized URL, case-folded e-mail address, or text. Raises ``Unreadable``."""
    reader = _READERS.get(kind, _text)
    return reader(value)


def readable(value: Any, kind: str) -> bool:
    try:
        read(value, kind)
    except Unreadable:
        return False
    return True


def stored(value: Any) -> Any:
    """A read value as JSON keeps it: dates and date-times as RFC 3339 text."""
    if isinstance(value, date):
        return value.isoformat()
    return value


def _number(value: Any) -> int | float:
    if isinstance(value, bool):
        raise Unreadable("a number (true and false are not numbers)")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unreadable("a finite number")
        return value
    if isinstance(value, str):
        text = value.strip()
        if len(text) <= _MAX_DIGITS and _NUMBER.fullmatch(text):
            if re.fullmatch(r"[+-]?\d+", text):
                return int(text)
            number = float(text)
            if math.isfinite(number):
                return number
    raise Unreadable('a number, such as 17 or "17.5"')


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise Unreadable('true or false (or the text "true" or "false")')


def _datetime(value: Any) -> date | datetime:
    """A full-date stays a date; a date-time becomes an aware datetime (no offset: UTC)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            if _FULL_DATE.fullmatch(text):
                return date.fromisoformat(text)
            if _DATE_TIME.fullmatch(text):
                moment = datetime.fromisoformat(text.replace("z", "Z"))
                return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        except ValueError:
            pass
    raise Unreadable('a date ("2000-01-31") or a date-time ("2000-01-31T12:00:00Z")')


def _url(value: Any) -> str:
    """Scheme and host are case-insensitive (RFC 3986 §6.2.2.1); the rest is kept as sent."""
    if isinstance(value, str) and not re.search(r"\s", value):
        try:
            parts = urlsplit(value)
        except ValueError:  # an unclosed IPv6 bracket, say
            parts = None
        if parts is not None and parts.scheme and parts.netloc:
            return urlunsplit(parts._replace(scheme=parts.scheme.lower(), netloc=_host(parts)))
    raise Unreadable("an absolute URL, such as https://example.com/")


def _host(parts: Any) -> str:
    userinfo, _, host = parts.netloc.rpartition("@")
    return f"{userinfo}@{host.lower()}" if userinfo else host.lower()


def _email(value: Any) -> str:
    """Addresses are compared ignoring case: people write them both ways."""
    if isinstance(value, str) and _EMAIL.fullmatch(value.strip()):
        return value.strip().casefold()
    raise Unreadable("an e-mail address, such as erika@example.com")


def _text(value: Any) -> str:
    """Text as sent; a number or a boolean as JSON writes it (17 reads as "17")."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float) and not (
        isinstance(value, float) and not math.isfinite(value)
    ):
        return json.dumps(value)
    raise Unreadable("text, a number or true/false")


_READERS = {
    "NUMBER": _number,
    "BOOLEAN": _boolean,
    "DATETIME": _datetime,
    "URL": _url,
    "EMAIL": _email,
    "TEXT": _text,
}


def compare(left: Any, right: Any) -> int:
    """-1, 0 or 1 for two values read as the same type.

    Dates against date-times: when either side is a full-date, both are compared as dates
    (the date-time's own calendar day, in its own offset), since a day says nothing finer.
    Two date-times are compared as instants.
    """
    one_is_a_day = not (isinstance(left, datetime) and isinstance(right, datetime))
    if isinstance(left, date) and isinstance(right, date) and one_is_a_day:
        left, right = day(left), day(right)
    return (left > right) - (left < right)


def day(value: date) -> date:
    """The calendar day of a date or date-time (in its own offset)."""
    return value.date() if isinstance(value, datetime) else value


def guess_order_type(value: Any) -> str | None:
    """For an attribute without a declared order (text, or a path below an attribute), what
    BIGGER and SMALLER compare by: a number, or a date, as the value reads."""
    for kind in ("NUMBER", "DATETIME"):
        if readable(value, kind):
            return kind
    return None


def guess_type(value: Any, operator: str) -> str:
    """The type of a condition stored before conditions carried one, from its value alone:
    what those conditions were compared by."""
    if operator == "AGE_AT_LEAST":
        return "DATETIME"
    sample = value[0] if isinstance(value, list) and value else value
    if isinstance(sample, bool):
        return "BOOLEAN"
    if isinstance(sample, int | float):
        return "NUMBER"
    if operator in ("BIGGER", "SMALLER") and isinstance(sample, str):
        return "DATETIME" if readable(sample[:10], "DATETIME") else "TEXT"
    return "TEXT"
