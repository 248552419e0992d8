"""An organization's event log read by position, and the leases that bound open streams.

Positions are given under the organization's counter lock just before each commit
(``app.webhooks.outbox``), so "the events after position N, in order" is exact: an event
that becomes visible later always has a higher position than every one visible now. A reader
resumes from the last position it saw and never skips or repeats one.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app import clock
from app.errors import ApiError, NotFound
from app.events.models import EventStream
from app.extensions import db
from app.verifications.models import Verification
from app.webhooks.models import EventCounter, WebhookEvent
from app.webhooks.outbox import EVENT_TYPES

# What streams carry: the events about individuals and policy requests (credentials are the
# issuer's side and go to webhooks only).
STREAM_TYPES = tuple(t for t in EVENT_TYPES if not t.startswith("credential."))
BATCH = 200


class TooManyStreams(ApiError):
    status = 429
    code = "TOO_MANY_STREAMS"


@dataclass(frozen=True)
class Filters:
    """What a stream asked for: the types (all of STREAM_TYPES when empty) and a
    verification (every one when None)."""

    types: tuple[str, ...] = ()
    verification_id: uuid.UUID | None = None


@dataclass(frozen=True)
class LoggedEvent:
    position: int
    type: str
    body: str


def verification_of(organization_id: uuid.UUID, verification_id: uuid.UUID) -> uuid.UUID:
    """A stream's verification filter: one of the organization's verifications (another's
    reads as missing, 400 NOT_FOUND)."""
    verification = db.session.get(Verification, verification_id)
    if verification is None or verification.organization_id != organization_id:
        raise NotFound()
    return verification.id


def latest_position(organization_id: uuid.UUID) -> int:
    """Where a stream opened without ``Last-Event-ID`` starts: after every event so far."""
    last = db.session.scalar(
        select(EventCounter.last_position).where(EventCounter.organization_id == organization_id)
    )
    return last or 0


def events_after(
    organization_id: uuid.UUID, after: int, filters: Filters, limit: int = BATCH
) -> list[LoggedEvent]:
    """The organization's events past ``after`` that the filters take, by position; without
    claims (a stream is like an endpoint that did not opt in)."""
    types: Sequence[str] = filters.types or STREAM_TYPES
    query = (
        select(WebhookEvent)
        .where(
            WebhookEvent.organization_id == organization_id,
            WebhookEvent.position > after,
            WebhookEvent.type.in_(types),
        )
        .order_by(WebhookEvent.position)
        .limit(limit)
    )
    if filters.verification_id is not None:
        query = query.where(WebhookEvent.verification_id == filters.verification_id)
    return [
        LoggedEvent(row.position, row.type, row.body())
        for row in db.session.scalars(query)
        if row.position is not None
    ]


# -- the bound on open streams ---------------------------------------------------------------


def open_stream(organization_id: uuid.UUID, most: int, lease: timedelta) -> uuid.UUID:
    """A lease for one more stream of the organization, or 429 TOO_MANY_STREAMS when ``most``
    are open. Counted under the organization's counter row lock (the same row its events are
    numbered under, for a moment), so two streams opening at once on different instances
    cannot both take the last place. The caller commits."""
    now = clock.now()
    _lock_counter(organization_id)
    db.session.execute(
        delete(EventStream).where(
            EventStream.organization_id == organization_id, EventStream.lease_until <= now
        )
    )
    open_now = db.session.scalar(
        select(func.count())
        .select_from(EventStream)
        .where(EventStream.organization_id == organization_id)
    )
    if (open_now or 0) >= most:
        raise TooManyStreams(
            f"This organization already has {most} event streams open "
            "(EVENTS_STREAMS_PER_ORGANIZATION); close one or try again later",
            limit=most,
        )
    stream = EventStream(organization_id=organization_id, opened_at=now, lease_until=now + lease)
    db.session.add(stream)
    db.session.flush()
    return stream.id


def renew_stream(stream_id: uuid.UUID, lease: timedelta) -> bool:
    """Extend the lease; False when it is gone (it ran out and another stream took its
    place), and then the stream should end. The caller commits."""
    renewed = db.session.execute(
        update(EventStream)
        .where(EventStream.id == stream_id)
        .values(lease_until=clock.now() + lease)
        .execution_options(synchronize_session=False)
    )
    return renewed.rowcount == 1


def close_stream(stream_id: uuid.UUID) -> None:
    db.session.execute(
        delete(EventStream)
        .where(EventStream.id == stream_id)
        .execution_options(synchronize_session=False)
    )


def _lock_counter(organization_id: uuid.UUID) -> None:
    dialect = postgresql if db.session.connection().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(EventCounter).values(
        organization_id=organization_id, last_position=0
    )
    db.session.execute(
        statement.on_conflict_do_update(
            index_elements=[EventCounter.organization_id],
            set_={"last_position": EventCounter.last_position},
        )
    )
