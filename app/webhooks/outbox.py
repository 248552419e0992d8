"""Events written in the transaction that makes the change (the transactional outbox).

``emit`` adds the event row to the caller's open transaction: if that transaction rolls back
the event was never there, and once it commits the event is stored and will be delivered,
whatever happens to the process next. After a commit that added events the relay job is
asked to run at once; if that request is lost (the process dies first, the queue is down) the
periodic sweep finds the events anyway.

Every organization's events are written, whoever reads them: webhook endpoints (the relay
fans an event out to none when the organization has none) and event streams
(``app.events``), which read the log by position. Just before a transaction that added events
commits, its events are numbered in their organization's log (``_number_events``) under the
organization's counter row lock, which the commit releases: a transaction numbering the same
organization's events waits until then, so positions become visible in order and a stream
reading "after position N" never skips one that commits late.

The domain that changes a record does not know how the API shows it: the application factory
provides one renderer per kind of record (``provide_renderer``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app import jobs
from app.extensions import db
from app.webhooks.models import EventCounter, WebhookEvent

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
# The events this transaction added, numbered in their organizations' logs before it commits.
_UNNUMBERED_KEY = "webhook_events_unnumbered"


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
) -> WebhookEvent:
    """Add event ``event_type`` about ``record`` to the open transaction; it is numbered in
    the organization's log when the transaction commits."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown webhook event type {event_type!r}")
    db.session.flush()  # the record as stored: its updated_at is set by the flush
    rendered = _renderers[event_type.partition(".")[0]](record)
    row = WebhookEvent(
        organization_id=organization_id,
        type=event_type,
        verification_id=getattr(record, "verification_id", None),
        subject_id=subject_id,
        data=rendered.data,
        claims=rendered.claims,
    )
    db.session.add(row)
    db.session.info[_PENDING_KEY] = True
    db.session.info.setdefault(_UNNUMBERED_KEY, []).append(row)
    return row


def _number_events(session: Session) -> None:
    """Give the transaction's events their positions, last thing before the commit.

    The counter row of each organization is taken (created on its first event) by one
    upsert, which holds its lock until the commit; organizations are taken in one order, so
    two transactions cannot wait for each other. Everything else is flushed first, so the
    lock is the transaction's last: whoever holds it waits for nothing but its commit."""
    rows = [
        row
        for row in session.info.pop(_UNNUMBERED_KEY, [])
        if row in session and row.position is None
    ]
    if not rows:
        return
    session.flush()
    by_organization: dict[uuid.UUID, list[WebhookEvent]] = {}
    for row in sorted(rows, key=lambda row: row.sequence):
        by_organization.setdefault(row.organization_id, []).append(row)
    for organization_id in sorted(by_organization):
        events = by_organization[organization_id]
        last = session.execute(_take_positions(session, organization_id, len(events))).scalar_one()
        for offset, row in enumerate(events):
            row.position = last - len(events) + 1 + offset
    session.flush()


def _take_positions(session: Session, organization_id: uuid.UUID, count: int) -> Any:
    dialect = postgresql if session.connection().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(EventCounter).values(
        organization_id=organization_id, last_position=count
    )
    return statement.on_conflict_do_update(
        index_elements=[EventCounter.organization_id],
        set_={"last_position": EventCounter.last_position + count},
    ).returning(EventCounter.last_position)


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
    session.info.pop(_UNNUMBERED_KEY, None)


def listen() -> None:
    """Number the events of every commit that added some, then kick the relay (once per
    process)."""
    if not sa_event.contains(Session, "after_commit", _kick_relay):
        sa_event.listen(Session, "before_commit", _number_events)
        sa_event.listen(Session, "after_commit", _kick_relay)
        sa_event.listen(Session, "after_rollback", _forget)
