"""Events written in the transaction that makes the change (the transactional outbox).

``emit`` adds the event row to the caller's open transaction: if that transaction rolls back
the event was never there, and once it commits the event is stored and will be delivered,
whatever happens to the process next. After a commit that added events the relay job is
asked to run at once; if that request is lost (the process dies first, the queue is down) the
periodic sweep finds the events anyway.

The domain that changes a record does not know how the API shows it: the application factory
provides one renderer per kind of record (``provide_renderer``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app import jobs
from app.extensions import db
from app.webhooks.models import WebhookEndpoint, WebhookEvent

EVENT_TYPES = (
    "individual.requested",
    "individual.verified",
    "individual.failed",
    "individual.revoked",
    "policy_request.verified",
    "policy_request.failed",
    "policy_request.expired",
    "credential.offered",
    "credential.issued",
    "credential.revoked",
)
RELAY_JOB = "webhooks.relay"
DELIVER_JOB = "webhooks.deliver"
# Set on a session whose transaction added events: after its commit the relay is kicked.
_PENDING_KEY = "webhook_events_added"
# Deliveries to hand to the queue once the transaction that made them due commits.
_DELIVERIES_KEY = "webhook_deliveries_due"


class Rendered:
    """What an event carries about its record: its API shape without disclosed claims, and
    those claims apart (sent only to endpoints that opt in)."""

    __slots__ = ("claims", "data")

    def __init__(self, data: dict[str, Any], claims: Any = None) -> None:
        self.data = data
        self.claims = claims


Renderer = Callable[[Any], Rendered]
_renderers: dict[str, Renderer] = {}


def provide_renderer(kind: str, renderer: Renderer) -> None:
    """Called by the application factory: how records of ``kind`` (the part of an event type
    before the dot) are shown in events."""
    _renderers[kind] = renderer


def emit(
    event_type: str, record: Any, organization_id: uuid.UUID, subject_id: uuid.UUID
) -> WebhookEvent | None:
    """Add event ``event_type`` about ``record`` to the open transaction. Nothing is written
    when the organization has no enabled endpoint (one indexed read, so a deployment without
    webhooks pays next to nothing)."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown webhook event type {event_type!r}")
    if not _subscribed(organization_id):
        return None
    db.session.flush()  # the record as stored: its updated_at is set by the flush
    rendered = _renderers[event_type.partition(".")[0]](record)
    row = WebhookEvent(
        organization_id=organization_id,
        type=event_type,
        subject_id=subject_id,
        data=rendered.data,
        claims=rendered.claims,
    )
    db.session.add(row)
    db.session.info[_PENDING_KEY] = True
    return row


def _subscribed(organization_id: uuid.UUID) -> bool:
    """Whether any enabled endpoint may take an event; each endpoint's list of event types is
    read when the relay fans out (a JSON list is not portably queryable)."""
    return bool(
        db.session.scalar(
            select(
                exists().where(
                    WebhookEndpoint.organization_id == organization_id,
                    WebhookEndpoint.enabled.is_(True),
                )
            )
        )
    )


def deliver_after_commit(delivery_id: uuid.UUID) -> None:
    """Hand the delivery to the queue once the open transaction commits (before that, a worker
    would not see the change that made it due)."""
    db.session.info.setdefault(_DELIVERIES_KEY, []).append(str(delivery_id))


def _kick_relay(session: Session) -> None:
    kick = session.info.pop(_PENDING_KEY, False)
    due = session.info.pop(_DELIVERIES_KEY, [])
    # What was committed stays: if the queue cannot take a job, the periodic sweep hands it
    # over within a minute (the outage is logged once, not per request).
    if kick and not jobs.try_enqueue(RELAY_JOB):
        return
    for delivery_id in due:
        if not jobs.try_enqueue(DELIVER_JOB, delivery_id):
            return


def _forget(session: Session, *_: Any) -> None:
    session.info.pop(_PENDING_KEY, None)
    session.info.pop(_DELIVERIES_KEY, None)


def listen() -> None:
    """Kick the relay after every commit that added events (once per process)."""
    if not sa_event.contains(Session, "after_commit", _kick_relay):
        sa_event.listen(Session, "after_commit", _kick_relay)
        sa_event.listen(Session, "after_rollback", _forget)
