"""``GET /events``: the organization's events, pushed as Server-Sent Events, for backends
that cannot receive webhooks.

A stream is served where it cannot hold a synchronous worker: by the event stream server
(``gunicorn.events.conf.py``, threads, ``make run`` and ``deploy/cluster.py`` start it beside
the web server, nginx routes ``/events`` to it). A synchronous worker refuses to hold one
(421 ``EVENTS_NOT_SERVED_HERE``): two idle streams would take every page's worker.

Between reads a stream holds no database connection and no transaction: each look for new
events, each lease renewal, is a short transaction of its own in a fresh application context.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import timedelta

from flask import Blueprint, Flask, Response, current_app, request

from app.api.common import documented, parse_id, refuse_unknown_args
from app.errors import ApiError, InvalidRequest
from app.events import operations, sse
from app.events.operations import Filters
from app.extensions import db
from app.web.access import acting_organization_id, require_apikey

bp = Blueprint("events", __name__)

# A client that lost its connection comes back after this long (the SSE "retry" field).
RECONNECT_MILLISECONDS = 1000
# A lease outlives this many missed heartbeats: a stream whose process died frees its place.
LEASE_HEARTBEATS = 3


class NotServedHere(ApiError):
    status = 421
    code = "EVENTS_NOT_SERVED_HERE"


@bp.get("/events")
@require_apikey
@documented(
    "The organization's individual and policy request events as they happen "
    "(text/event-stream): each event's id is its position in the log; reconnect with "
    "Last-Event-ID to get every event after it",
    responses={200: None},
    query={
        "type": "Event types to receive, comma-separated (default: every individual.* and "
        "policy_request.* type)",
        "verification_id": "Only events about this verification's individuals and policy requests",
        "last_event_id": "Where to resume when the Last-Event-ID header cannot be sent",
    },
    headers={"Last-Event-ID": "The id of the last event received: the stream resumes after it"},
    errors={
        421: "Reached a synchronous web server, which does not hold streams (code "
        "EVENTS_NOT_SERVED_HERE): connect to the event stream server",
        429: "The organization has EVENTS_STREAMS_PER_ORGANIZATION streams open (code "
        "TOO_MANY_STREAMS)",
    },
    stream="Server-Sent Events: `id` (the position), `event` (the type) and `data` (the "
    "Standard Webhooks body, `{type, timestamp, data}`), and `: heartbeat` comments",
    tags=("events",),
)
def stream_events():
    """Filters and the resume point are checked before the stream's place is taken."""
    refuse_unknown_args("type", "verification_id", "last_event_id")
    if _synchronous_server():
        raise NotServedHere(
            "Event streams are served by the event stream server, not this synchronous one: "
            "route /events to it (deploy/nginx/verity.conf) or connect to its port"
        )
    organization_id = acting_organization_id()
    filters = Filters(_types(), _verification(organization_id))
    after = _resume_point(organization_id)
    config = current_app.config
    heartbeat = max(float(config["EVENTS_HEARTBEAT_SECONDS"]), 0.05)
    lease = timedelta(seconds=heartbeat * LEASE_HEARTBEATS)
    stream_id = operations.open_stream(
        organization_id, int(config["EVENTS_STREAMS_PER_ORGANIZATION"]), lease
    )
    db.session.commit()
    body = _stream(
        current_app._get_current_object(),  # type: ignore[attr-defined]
        stream_id,
        organization_id,
        after,
        filters,
        heartbeat,
        max(float(config["EVENTS_POLL_SECONDS"]), 0.01),
        lease,
        float(config["EVENTS_STREAM_SECONDS"]),
    )
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _synchronous_server() -> bool:
    """gunicorn's sync workers say they are single-threaded; the event stream server's
    threads, a development server or a test client do not hold a page's worker."""
    software = request.environ.get("SERVER_SOFTWARE", "")
    return software.startswith("gunicorn") and not request.environ.get("wsgi.multithread")


def _types() -> tuple[str, ...]:
    raw = request.args.get("type")
    if raw is None:
        return ()
    types = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = sorted(set(types) - set(operations.STREAM_TYPES))
    if unknown or not types:
        raise InvalidRequest(
            f"Unknown event types: {', '.join(unknown) or raw!r} "
            f"(streams carry: {', '.join(operations.STREAM_TYPES)})"
        )
    return types


def _verification(organization_id: uuid.UUID) -> uuid.UUID | None:
    raw = request.args.get("verification_id")
    if raw is None:
        return None
    return operations.verification_of(organization_id, parse_id(raw))


def _resume_point(organization_id: uuid.UUID) -> int:
    raw = request.headers.get("Last-Event-ID")
    if raw is None:
        raw = request.args.get("last_event_id")
    try:
        seen = sse.parse_last_event_id(raw)
    except ValueError as exc:
        raise InvalidRequest(str(exc), code="INVALID_LAST_EVENT_ID") from None
    return operations.latest_position(organization_id) if seen is None else seen


def _stream(
    app: Flask,
    stream_id: uuid.UUID,
    organization_id: uuid.UUID,
    after: int,
    filters: Filters,
    heartbeat: float,
    poll: float,
    lease: timedelta,
    lifetime: float,
) -> Iterator[bytes]:
    """Events as they are committed, and a heartbeat every ``heartbeat`` seconds (each renews
    the stream's lease); ends after ``lifetime`` seconds or when the lease is lost (the client
    reconnects). Writing to a client that left raises in the server, which closes this
    generator and frees the lease."""
    try:
        yield sse.retry(RECONNECT_MILLISECONDS)
        next_heartbeat = time.monotonic() + heartbeat
        ends = time.monotonic() + lifetime
        while time.monotonic() < ends:
            with app.app_context():
                events = operations.events_after(organization_id, after, filters)
                db.session.commit()
            for event in events:
                after = event.position
                yield sse.event(event.position, event.type, event.body)
            if len(events) == operations.BATCH:
                continue
            if time.monotonic() >= next_heartbeat:
                with app.app_context():
                    kept = operations.renew_stream(stream_id, lease)
                    db.session.commit()
                if not kept:
                    return
                yield sse.heartbeat()
                next_heartbeat = time.monotonic() + heartbeat
            time.sleep(min(poll, max(next_heartbeat - time.monotonic(), 0)))
    finally:
        with app.app_context():
            operations.close_stream(stream_id)
            db.session.commit()
