"""Paging through lists: ``?offset=`` (or ``?page=``) and ``?limit=`` the same way for the JSON
API and pages; the JSON API's lists also refuse a query parameter they do not know."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import request, url_for

from app.errors import InvalidRequest

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


PAGING_ARGS = ("offset", "limit", "page")
# Accepted on every JSON endpoint: the contract lets a backend send its key as ``?apikey=``.
ANYWHERE_ARGS = ("apikey",)
MAX_OFFSET = 10_000_000


def page_args() -> tuple[int, int]:
    """``?offset=`` (from 0) or ``?page=`` (from 1), and ``?limit=`` (1 to 100), as an
    (offset, limit) pair; giving both offset and page is refused, as they could disagree."""
    if "offset" in request.args and "page" in request.args:
        raise InvalidRequest("Give offset or page, not both")
    try:
        limit = int(request.args.get("limit", DEFAULT_LIMIT))
        if "offset" in request.args:
            offset = int(request.args["offset"])
            page = None
        else:
            page = int(request.args.get("page", 1))
            offset = None
    except ValueError:
        raise InvalidRequest("offset, page and limit must be whole numbers") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be between 1 and {MAX_LIMIT}")
    if offset is not None:
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidRequest(f"offset must be between 0 and {MAX_OFFSET}")
        return offset, limit
    assert page is not None
    if page < 1 or page > 100_000:
        raise InvalidRequest("page must be between 1 and 100000")
    return (page - 1) * limit, limit


def refuse_unknown_args(*known: str) -> None:
    """400 UNKNOWN_QUERY_PARAMETER for a query parameter the endpoint does not read: a
    misspelt filter silently ignored would answer a different question than the one asked."""
    unknown = sorted(set(request.args) - set(known) - set(ANYWHERE_ARGS))
    if unknown:
        takes = ", ".join(known) if known else "no query parameters"
        raise InvalidRequest(
            f"Unknown query parameter {', '.join(unknown)} (this endpoint takes {takes})",
            code="UNKNOWN_QUERY_PARAMETER",
        )


def list_args(*filters: str) -> tuple[int, int]:
    """A JSON list's (offset, limit), after refusing any parameter other than the paging
    ones and ``filters``."""
    refuse_unknown_args(*PAGING_ARGS, *filters)
    return page_args()


def listing(rows: list[Any], total: int, out: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """The JSON API's list shape: ``results`` and ``total``."""
    return {"results": [out(row) for row in rows], "total": total}


@dataclass(frozen=True)
class Pager:
    """Where a page of a list sits, and the links to its neighbours (None at the ends)."""

    page: int
    pages: int
    total: int
    previous_url: str | None
    next_url: str | None


def pager(endpoint: str, offset: int, limit: int, total: int, **values: Any) -> Pager:
    """The position of a page of ``total`` rows; ``values`` fill the endpoint's own arguments."""
    page = offset // limit + 1
    pages = max(1, math.ceil(total / limit))
    extra = {**values, "limit": limit} if "limit" in request.args else values
    previous_url = url_for(endpoint, page=page - 1, **extra) if page > 1 else None
    next_url = url_for(endpoint, page=page + 1, **extra) if offset + limit < total else None
    return Pager(page, pages, total, previous_url, next_url)
