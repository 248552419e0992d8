"""Small helpers the blueprints share: bodies, IDs, pages, links and route documentation."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, jsonify, request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel

from app.errors import InvalidRequest, NotFound

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def documented(
    summary: str,
    *,
    body: type[BaseModel] | None = None,
    responses: dict[int, type[BaseModel] | None] | None = None,
    query: dict[str, str] | None = None,
    tags: tuple[str, ...] = (),
) -> Callable[[F], F]:
    """Attach what /openapi.json says of a route, next to the route itself."""

    def decorate(view: F) -> F:
        view.openapi = {  # type: ignore[attr-defined]
            "summary": summary,
            "body": body,
            "responses": responses or {200: None},
            "query": query or {},
            "tags": tags,
        }
        return view

    return decorate


def parse_body(model: type[M]) -> M:
    """The JSON body validated by ``model``; anything else is a 400 INVALID_REQUEST."""
    data = request.get_json(silent=True, force=True) if request.content_length != 0 else None
    if data is None and (request.content_length or request.data):
        raise InvalidRequest("Request body must be valid JSON")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidRequest("Request body must be a JSON object")
    return model.model_validate(data)


def parse_id(value: str | None) -> uuid.UUID:
    """A path or body identifier; one that is not a UUID cannot exist (INTERFACE.md 7)."""
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        raise NotFound() from None


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
    return {"results": [out(row) for row in rows], "total": total}


def base_url() -> str:
    return current_app.config["PUBLIC_URL"] or request.host_url.rstrip("/")


def json_response(body: Any, status: int = 200) -> ResponseReturnValue:
    return jsonify(body), status
