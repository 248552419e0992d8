"""What /openapi.json says of a route, written next to the route itself (``documented``):
shared by the JSON API's blueprints and the person's pages that are documented there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

F = TypeVar("F", bound=Callable[..., Any])


def documented(
    summary: str,
    *,
    body: type[BaseModel] | None = None,
    responses: dict[int, type[BaseModel] | None] | None = None,
    query: dict[str, str] | None = None,
    tags: tuple[str, ...] = (),
    headers: dict[str, str] | None = None,
    errors: dict[int, str] | None = None,
    page: bool = False,
    stream: str | None = None,
) -> Callable[[F], F]:
    """Attach what /openapi.json says of a route, next to the route itself: ``headers`` are
    optional request headers, ``errors`` the statuses the route answers beyond those its
    authentication gives, ``page`` marks a route for people, whose answers are HTML, and
    ``stream`` describes a 200 answer that is a text/event-stream."""

    def decorate(view: F) -> F:
        view.openapi = {  # type: ignore[attr-defined]
            "summary": summary,
            "body": body,
            "responses": responses or {200: None},
            "query": query or {},
            "tags": tags,
            "headers": headers or {},
            "errors": errors or {},
            "page": page,
            "stream": stream,
        }
        return view

    return decorate
