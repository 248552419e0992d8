"""Small helpers the blueprints share: bodies, IDs, pages, links and route documentation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import jsonify, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from pydantic import BaseModel
from werkzeug.routing import BaseConverter

from app import json_input
from app.errors import InvalidRequest, UnsupportedMediaType
from app.web.access import acting_organization
from app.web.documentation import documented
from app.web.paging import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    list_args,
    listing,
    page_args,
    refuse_unknown_args,
)
from app.web.requests import base_url, parse_id

# Identifiers, addresses and paging are the web kit's, shared with the dashboard's pages;
# they are re-exported here for the JSON API's blueprints.
__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "PAGING_QUERY",
    "AnyTextConverter",
    "base_url",
    "deleted",
    "documented",
    "json_response",
    "list_args",
    "listing",
    "page_args",
    "parse_body",
    "parse_id",
    "refuse_unknown_args",
    "register_any_text",
]

# How a paged list's query parameters read in /openapi.json.
PAGING_QUERY = {
    "offset": "Rows to skip, from 0 (or give page)",
    "limit": f"1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})",
    "page": "Page, from 1 (an alternative to offset; not both)",
}

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])


class AnyTextConverter(BaseConverter):
    """A path variable that is any text, slashes included (leading, doubled or trailing).

    A ``customer_id`` is the client's own string; whatever opening accepted, the lookup must
    reach, percent-encoded (``%2F`` for ``/``). The rule using it sets ``merge_slashes=False``.
    """

    regex = ".+"
    part_isolating = False


def register_any_text(state: BlueprintSetupState) -> None:
    """Make ``<anytext:...>`` known before the blueprint's rules are added."""
    state.app.url_map.converters.setdefault("anytext", AnyTextConverter)


def parse_body(model: type[M]) -> M:
    """The JSON body validated by ``model``.

    A body must be declared JSON (``application/json`` or ``application/*+json``; no
    Content-Type is read as JSON too): anything else, ``text/plain`` and form encodings among
    them, is a 415, so a cross-site page cannot post a body without a CORS preflight. Bad JSON
    of any shape (malformed, nested too deep, NUL or a lone surrogate in a text) is a 400
    INVALID_REQUEST.
    """
    raw = request.get_data(cache=True)
    if not raw:
        return model.model_validate({})
    mimetype = request.mimetype
    if mimetype and mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType(
            f"Send the body as JSON with Content-Type: application/json (got {mimetype!r})"
        )
    try:
        data = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        raise InvalidRequest(f"Request body must be valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidRequest("Request body must be a JSON object")
    return model.model_validate(data)


def json_response(body: Any, status: int = 200) -> ResponseReturnValue:
    return jsonify(body), status


def deleted(delete: Callable[[Any, Any], object], record_id: str) -> tuple[str, int]:
    """A DELETE of one of the acting organization's records by its ID, the same for each kind
    of record: 204 once ``delete(organization, id)`` has removed it. An ID that is no UUID, or
    names nothing of the organization's, is refused by ``parse_id`` and ``delete`` (400)."""
    delete(acting_organization(), parse_id(record_id))
    return "", 204
