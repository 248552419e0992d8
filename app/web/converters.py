"""Path variables the database can hold.

Werkzeug's ``int`` converter takes any run of digits: ``/status-lists/9223372036854775808``
reached the query and failed there (``OverflowError`` from SQLite's driver,
``NumericValueOutOfRange`` from PostgreSQL), a 500 with a traceback per request. Every integer
column here is a SQL ``INTEGER`` (32 bits on PostgreSQL), so a number beyond it names nothing:
the route does not match and the answer is the 404 of an unknown address.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.routing import BaseConverter, IntegerConverter, Map

# The largest SQL INTEGER (PostgreSQL ``integer``, and within SQLite's 64-bit range).
MAX_DATABASE_INTEGER = 2**31 - 1


class DatabaseIntegerConverter(IntegerConverter):
    """``<int:...>`` bounded to what an INTEGER column holds.

    ASCII digits only, and at most as many as the bound has: ``\\d`` also matches other
    scripts' digits, and ``int()`` refuses (ValueError, not a mismatch) a string of more than
    4,300 digits.
    """

    regex = rf"[0-9]{{1,{len(str(MAX_DATABASE_INTEGER))}}}"

    def __init__(self, map: Map, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", MAX_DATABASE_INTEGER)
        super().__init__(map, *args, **kwargs)


class RecordIdConverter(BaseConverter):
    """``<record:...>``: one record's ID beside a collection's own word.

    ``/verifications/<verification_id>`` and ``/verifications/individuals`` share a prefix, and
    a variable segment matches any word: ``PUT /verifications/individuals`` reached the
    verification rule and answered its 401 ("Missing session token") instead of the 405 (with
    ``Allow: POST``) of the address it names. The collection's word is no ID, so the variable
    refuses it; any other text still reaches the view, which answers 400 for a non-UUID.
    """

    regex = r"(?!individuals(?:/|$))[^/]+"


def register_converters(app: Flask) -> None:
    """Before any blueprint: rules pick their converter when they are added."""
    app.url_map.converters["int"] = DatabaseIntegerConverter
    app.url_map.converters["record"] = RecordIdConverter
