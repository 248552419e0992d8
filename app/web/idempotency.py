"""``Idempotency-Key`` on the JSON creates: the same key and body within 24 hours answer what
the first request answered, with ``Idempotent-Replayed: true``."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import current_app, request

from app import clock
from app.idempotency import operations
from app.web.access import acting_organization_id

F = TypeVar("F", bound=Callable[..., Any])
HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"


def acting_scope() -> str | None:
    return str(acting_organization_id())


def idempotent(scope: Callable[[], str | None] = acting_scope) -> Callable[[F], F]:
    """Honour ``Idempotency-Key`` on a create; ``scope`` names whose keys it shares (the
    acting organization; None runs the view unkeyed, e.g. an unknown verification's 400).

    Only answers below 400 are kept: a refused request changes nothing, so its retry runs
    again, as a client fixing its request expects.
    """

    def decorate(view: F) -> F:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            raw_key = request.headers.get(HEADER)
            if raw_key is None:
                return view(*args, **kwargs)
            key = operations.checked_key(raw_key)
            owner = scope()
            if owner is None:
                return view(*args, **kwargs)
            secret = current_app.config["SECRET_KEY"]
            asked = operations.fingerprint(
                request.method, request.path, request.get_data(cache=True)
            )
            started = operations.begin(owner, key, asked, clock.now(), secret)
            if isinstance(started, operations.Replay):
                replay = current_app.response_class(
                    started.body, status=started.status_code, mimetype="application/json"
                )
                replay.headers[REPLAYED] = "true"
                return replay
            response = current_app.make_response(view(*args, **kwargs))
            if response.status_code < 400:
                operations.finish(started, response.status_code, response.get_data(), secret)
            return response

        wrapper.idempotent = True  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
