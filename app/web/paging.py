"""Paging through lists: ``?page=`` and ``?limit=`` the same way for the JSON API and pages."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import request, url_for

from app.errors import InvalidRequest

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def page_args() -> tuple[int, int]:
    """``?page=`` (from 1) and ``?limit=`` (1 to 100) as an (offset, limit) pair."""
    try:
        page = int(request.args.get("page", 1))
        limit = int(request.args.get("limit", DEFAULT_LIMIT))
    except ValueError:
        raise InvalidRequest("page and limit must be whole numbers") from None
    if page < 1 or page > 100_000 or not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"page must be at least 1 and limit between 1 and {MAX_LIMIT}")
    return (page - 1) * limit, limit


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
