"""Getting events to endpoints: the relay, each delivery attempt, the sweep.

- The relay turns each event of the outbox into one delivery per enabled endpoint that takes
  its type. A conditional update marks the event dispatched, so of two relays running at once
  exactly one fans it out (and the unique (event, endpoint) pair backs that up).
- A delivery is attempted under a lease (a conditional update decides which worker holds it),
  with no database transaction open while the HTTP request is in flight. Deliveries of one
  subject to one endpoint go out in event order: a later one waits while an earlier one is
  pending. A 2xx delivers; 410 Gone disables the endpoint; anything else (another status, a
  refused address, a timeout) retries with exponential backoff and jitter, the first retry
  within a minute, until ``RETRY_WINDOW`` after the event. An attempt has a total deadline
  (``WEBHOOK_TIMEOUT``), however slowly the receiver dribbles its answer.
- Each attempt is logged with what was sent and what came back (``app.webhooks.exchange``:
  the first 4 KiB of each body, secrets redacted), for the organization to debug its
  receiver.
- Fairness: at most ``WEBHOOK_DELIVERIES_PER_ORGANIZATION`` deliveries of one organization
  are in flight at once (the lease refuses more), so an organization's slow endpoints hold
  that many delivery threads at most and other organizations' events go out meanwhile. A
  delivery refused for that reason is handed over again when one of its organization's
  deliveries settles (or by the sweep).
- The sweep (every minute) relays events whose relay request was lost, frees leases a crashed
  worker left behind, and hands due retries to the queue: nothing depends on an enqueue that
  never happened. Delivery is at least once: a worker killed after the receiver answered but
  before it recorded the answer sends the event again, with the same ``webhook-id``.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import and_, bindparam, exists, func, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased, joinedload
from standardwebhooks import Webhook

from app import clock, jobs
from app.extensions import db
from app.trust import Fetcher
from app.trust.errors import AddressRefused, ConnectionRefused, DeadlinePassed, FetchError
from app.trust.fetch import Answer
from app.webhooks import exchange, settings
from app.webhooks.models import (
    DeliveryState,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from app.webhooks.operations import signing_secrets
from app.webhooks.outbox import DELIVER_JOB

RETRY_WINDOW = timedelta(days=3)
FIRST_RETRY = timedelta(seconds=30)
LONGEST_WAIT = timedelta(hours=12)
# A worker holds a delivery this long: past the attempt's deadline (``_lease_length``), so
# only a dead worker's lease ever expires.
LEASE = timedelta(seconds=60)
RELAY_BATCH = 500
SWEEP_BATCH = 1000
_ERROR_LENGTH = 500

log = logging.getLogger(__name__)


def retry_delay(attempts: int, rand: float | None = None) -> timedelta:
    """Wait after the ``attempts``-th failed attempt: 30 s doubling each time, each stretched
    by a random 0-100 % so that retries after an outage do not arrive together, and never more
    than 12 hours (the first retry comes within a minute)."""
    base = min(FIRST_RETRY * (2 ** max(attempts - 1, 0)), LONGEST_WAIT)
    jitter = random.random() if rand is None else rand
    wait = base * (1 + jitter)
    return wait if wait < LONGEST_WAIT else LONGEST_WAIT - FIRST_RETRY * jitter


# -- the relay --------------------------------------------------------------------------------


def relay() -> list[uuid.UUID]:
    """Fan the outbox's undispatched events out into deliveries, oldest first; commits each
    event's fan-out and returns the deliveries made (to be enqueued)."""
    made: list[uuid.UUID] = []
    while True:
        sequences = list(
            db.session.scalars(
                select(WebhookEvent.sequence)
                .where(WebhookEvent.dispatched_at.is_(None))
                .order_by(WebhookEvent.sequence)
                .limit(RELAY_BATCH)
            )
        )
        db.session.commit()
        for sequence in sequences:
            made.extend(_dispatch(sequence))
        if len(sequences) < RELAY_BATCH:
            return made


def _dispatch(sequence: int) -> list[uuid.UUID]:
    now = clock.now()
    claimed = db.session.execute(
        update(WebhookEvent)
        .where(WebhookEvent.sequence == sequence, WebhookEvent.dispatched_at.is_(None))
        .values(dispatched_at=now)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:  # another relay has it
        db.session.rollback()
        return []
    event = db.session.get(WebhookEvent, sequence)
    assert event is not None
    endpoints = db.session.scalars(
        select(WebhookEndpoint).where(
            WebhookEndpoint.organization_id == event.organization_id,
            WebhookEndpoint.enabled.is_(True),
        )
    )
    deliveries = [
        WebhookDelivery(
            event_sequence=event.sequence,
            endpoint_id=endpoint.id,
            subject_id=event.subject_id,
            state=DeliveryState.PENDING,
            next_attempt_at=now,
            created_at=now,
        )
        for endpoint in endpoints
        if endpoint.receives(event.type)
    ]
    db.session.add_all(deliveries)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return []
    return [delivery.id for delivery in deliveries]


# -- one attempt ------------------------------------------------------------------------------


def _first_in_line() -> Any:
    """No earlier event of the same subject is still to go to the same endpoint: neither a
    pending delivery, nor an event the relay has not fanned out yet (two relays at once may
    commit out of order, so an earlier event's delivery may not exist yet)."""
    earlier = aliased(WebhookDelivery)
    return and_(
        ~exists().where(
            earlier.endpoint_id == WebhookDelivery.endpoint_id,
            earlier.subject_id == WebhookDelivery.subject_id,
            earlier.event_sequence < WebhookDelivery.event_sequence,
            earlier.state == DeliveryState.PENDING,
        ),
        ~exists().where(
            WebhookEvent.subject_id == WebhookDelivery.subject_id,
            WebhookEvent.sequence < WebhookDelivery.event_sequence,
            WebhookEvent.dispatched_at.is_(None),
        ),
    )


def _organization_has_room() -> Any:
    """Fewer than ``per_organization`` deliveries of the delivery's organization hold a live
    lease (counted under ``_lock_organization``, so two leases at once cannot both pass)."""
    busy = aliased(WebhookDelivery)
    busy_endpoint = aliased(WebhookEndpoint)
    own_endpoint = aliased(WebhookEndpoint)
    organization = (
        select(own_endpoint.organization_id)
        .where(own_endpoint.id == WebhookDelivery.endpoint_id)
        .correlate(WebhookDelivery)  # the delivery being leased, two subqueries out
        .scalar_subquery()
    )
    in_flight = (
        select(func.count())
        .select_from(busy)
        .join(busy_endpoint, busy_endpoint.id == busy.endpoint_id)
        .where(
            busy_endpoint.organization_id == organization,
            busy.state == DeliveryState.PENDING,
            busy.leased_until > bindparam("now"),
        )
        .scalar_subquery()
    )
    return in_flight < bindparam("per_organization")


@cache
def _lease_statement() -> Any:
    """Built once: the statement is the same for every delivery, only its parameters vary."""
    now = bindparam("now")
    return (
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == bindparam("delivery_id"),
            WebhookDelivery.state == DeliveryState.PENDING,
            or_(WebhookDelivery.next_attempt_at.is_(None), WebhookDelivery.next_attempt_at <= now),
            or_(WebhookDelivery.leased_until.is_(None), WebhookDelivery.leased_until <= now),
            _first_in_line(),
            _organization_has_room(),
        )
        .values(leased_until=bindparam("until"))
        .execution_options(synchronize_session=False)
    )


def _lock_organization(delivery_id: uuid.UUID) -> None:
    """On PostgreSQL, leases of one organization are taken one at a time (a transaction-
    scoped advisory lock), so the count of its deliveries in flight is never read stale.
    SQLite runs one write at a time anyway."""
    if db.session.get_bind().dialect.name != "postgresql":
        return
    organization_id = db.session.scalar(
        select(WebhookEndpoint.organization_id)
        .join(WebhookDelivery, WebhookDelivery.endpoint_id == WebhookEndpoint.id)
        .where(WebhookDelivery.id == delivery_id)
    )
    if organization_id is not None:
        db.session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
            {"key": f"webhook-deliveries:{organization_id}"},
        )


def _lease_length() -> timedelta:
    return max(LEASE, timedelta(seconds=settings.current().timeout + 30))


def _take_lease(delivery_id: uuid.UUID, now: datetime) -> bool:
    """Lease the delivery to this worker: one conditional update, whose row count says
    whether it is pending, due, free, first in line for its subject, and whether its
    organization has room for one more delivery in flight."""
    _lock_organization(delivery_id)
    taken = db.session.execute(
        _lease_statement(),
        {
            "delivery_id": delivery_id,
            "now": now,
            "until": now + _lease_length(),
            "per_organization": settings.current().per_organization,
        },
    )
    db.session.commit()
    return taken.rowcount == 1


def body_of(event: WebhookEvent, endpoint: WebhookEndpoint) -> str:
    """``{"type", "timestamp", "data"}``; ``data`` carries the claims only for endpoints that
    opted in."""
    return event.body(include_claims=endpoint.include_claims)


def signed_headers(webhook_id: str, body: str, secrets: list[str]) -> dict[str, str]:
    """Standard Webhooks headers, signed by the ``standardwebhooks`` library with each secret
    (several ``v1,`` signatures while a rotation overlaps). The timestamp is the wall clock of
    the attempt: receivers refuse signatures older than a few minutes."""
    sent_at = datetime.fromtimestamp(int(time.time()), tz=UTC)
    signatures = [
        Webhook(secret).sign(msg_id=webhook_id, timestamp=sent_at, data=body) for secret in secrets
    ]
    return {
        "content-type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": " ".join(signatures),
    }


@dataclass(frozen=True)
class _Leased:
    """What one attempt needs, read in one query before the request goes out."""

    delivery_id: uuid.UUID
    endpoint_id: uuid.UUID
    organization_id: uuid.UUID
    subject_id: uuid.UUID
    event_sequence: int
    event_created_at: datetime
    attempt_count: int
    enabled: bool
    url: str
    body: str
    headers: dict[str, str]
    carries_claims: bool


def _read_leased(delivery_id: uuid.UUID) -> _Leased:
    delivery = db.session.scalars(
        select(WebhookDelivery)
        .where(WebhookDelivery.id == delivery_id)
        .options(joinedload(WebhookDelivery.endpoint), joinedload(WebhookDelivery.event))
    ).one()
    endpoint, event = delivery.endpoint, delivery.event
    body = body_of(event, endpoint) if endpoint.enabled else ""
    headers = (
        signed_headers(event.webhook_id, body, signing_secrets(endpoint))
        if endpoint.enabled
        else {}
    )
    leased = _Leased(
        delivery_id=delivery.id,
        endpoint_id=endpoint.id,
        organization_id=endpoint.organization_id,
        subject_id=delivery.subject_id,
        event_sequence=delivery.event_sequence,
        event_created_at=event.created_at,
        attempt_count=delivery.attempt_count,
        enabled=endpoint.enabled,
        url=endpoint.url,
        body=body,
        headers=headers,
        carries_claims=endpoint.include_claims and event.claims is not None,
    )
    db.session.commit()  # no transaction stays open while the receiver answers
    return leased


def deliver(delivery_id: uuid.UUID) -> list[uuid.UUID]:
    """Attempt one delivery if it is due, free and first in line; returns the deliveries to
    enqueue next (the next event of the same subject once this one is settled, and the
    organization's next delivery waiting for room)."""
    now = clock.now()
    if not _take_lease(delivery_id, now):
        return []
    leased = _read_leased(delivery_id)
    if not leased.enabled:
        _record(leased, DeliveryState.FAILED, last_error="The endpoint is disabled")
        return _next_of(leased)

    fetcher = _fetcher()
    payload = leased.body.encode("utf-8")
    sent = _sent(fetcher, leased, payload)
    started = time.monotonic()
    answer: Answer | None = None
    error: str | None = None
    try:
        answer = fetcher.post(leased.url, payload, leased.headers, body_limit=exchange.KEPT_BYTES)
    except FetchError as exc:
        error = failure_text(exc, leased.url)[:_ERROR_LENGTH]
    except Exception as exc:
        # An error no rule foresaw (a URL the HTTP library refuses to even send, say) is still
        # a failed attempt: recorded with its reason and the lease freed like any other, so
        # it never holds one of the organization's delivery slots.
        log.warning("Webhook delivery %s failed unexpectedly", leased.delivery_id, exc_info=True)
        error = unexpected_failure_text(exc, leased.url)[:_ERROR_LENGTH]
    status_code = answer.status if answer is not None else None
    db.session.add(
        WebhookAttempt(
            delivery_id=leased.delivery_id,
            started_at=now,
            duration_ms=int((time.monotonic() - started) * 1000),
            status_code=status_code,
            error=error,
            **sent,
            **_answered(answer),
        )
    )
    outcome = {"attempt_count": leased.attempt_count + 1, "last_status_code": status_code}
    if status_code is not None and 200 <= status_code < 300:
        _record(leased, DeliveryState.DELIVERED, **outcome, last_error=None)
        return _next_of(leased)
    if status_code == 410:
        gone = "The endpoint answered 410 Gone"
        db.session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id == leased.endpoint_id)
            .values(enabled=False, disabled_at=clock.now(), disabled_reason=gone)
            .execution_options(synchronize_session=False)
        )
        _record(leased, DeliveryState.FAILED, **outcome, last_error=gone)
        return _next_of(leased)
    retry_at = clock.now() + retry_delay(leased.attempt_count + 1)
    if retry_at > leased.event_created_at + RETRY_WINDOW:
        _record(leased, DeliveryState.FAILED, **outcome, last_error=error)
        return _next_of(leased)
    _record(leased, DeliveryState.PENDING, **outcome, last_error=error, next_attempt_at=retry_at)
    _enqueue_delivery(leased.delivery_id, delay=(retry_at - clock.now()).total_seconds())
    return _waiting_in(leased.organization_id)


def failure_text(exc: FetchError, url: str = "") -> str:
    """What failed, as the organization's delivery log shows it: never the address the
    endpoint's host resolved to (that would tell whoever registers a hostname where it leads
    inside the deployment's network), and the endpoint's URL only with its query redacted."""
    if isinstance(exc, DeadlinePassed):
        return f"No answer within {exc.seconds:g} s"
    if isinstance(exc, ConnectionRefused):
        return f"Connection refused by {exc.host}"
    if isinstance(exc, AddressRefused):
        return f"Refused to deliver to {exc.host}: it resolves to {exc.problem}"
    return exc.reason.replace(url, exchange.redact_url(url)) if url else exc.reason


def unexpected_failure_text(exc: Exception, url: str = "") -> str:
    """An error outside the fetcher's own as the delivery log shows it: the kind of error and
    what it says, the endpoint's URL with its query redacted."""
    text = f"The delivery could not be sent: {type(exc).__name__}: {exc}"
    return text.replace(url, exchange.redact_url(url)) if url else text


def _sent(fetcher: Fetcher, leased: _Leased, payload: bytes) -> dict[str, Any]:
    """The attempt's request as the log keeps it: every header the fetcher sends (the
    caller's own, should the URL be one the fetcher or its HTTP library refuses before
    sending; the attempt itself then says why)."""
    try:
        headers = fetcher.post_headers(leased.url, payload, leased.headers)
    except Exception:  # only the log's headers depend on it
        headers = dict(leased.headers)
    body = exchange.keep_body(payload)
    return {
        "request_method": "POST",
        "request_url": exchange.redact_url(leased.url),
        "request_headers": exchange.keep_headers(headers).headers,
        "request_body": body.text,
        "request_body_cut": body.cut,
        "request_carries_claims": leased.carries_claims,
    }


def _answered(answer: Answer | None) -> dict[str, Any]:
    """The answer as the log keeps it; nothing when there was none (the error says why)."""
    if answer is None:
        return {}
    headers = exchange.keep_headers(answer.headers)
    body = exchange.keep_body(answer.body, answer.body_cut)
    return {
        "response_headers": headers.headers,
        "response_headers_cut": headers.cut,
        "response_body": body.text,
        "response_body_cut": body.cut,
    }


def _record(leased: _Leased, state: DeliveryState, **values: Any) -> None:
    """Write the attempt's outcome and free the lease, in one statement. A delivery deleted
    meanwhile (with its endpoint) is simply not there to update."""
    if state == DeliveryState.DELIVERED:
        values["delivered_at"] = clock.now()
    if state != DeliveryState.PENDING:
        values["next_attempt_at"] = None
    try:
        db.session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == leased.delivery_id)
            .values(state=state, leased_until=None, **values)
            .execution_options(synchronize_session=False)
        )
        db.session.commit()
    except IntegrityError:  # the attempt's delivery is gone: nothing to record
        db.session.rollback()


def _fetcher() -> Fetcher:
    current = settings.current()
    return Fetcher(timeout=current.timeout, allow_private=current.allow_private, cache_ttl=0)


def _next_of(leased: _Leased) -> list[uuid.UUID]:
    """The endpoint's next pending delivery of the same subject, now free to go, and the
    organization's next delivery that waits for room."""
    following = db.session.scalar(
        select(WebhookDelivery.id)
        .where(
            WebhookDelivery.endpoint_id == leased.endpoint_id,
            WebhookDelivery.subject_id == leased.subject_id,
            WebhookDelivery.event_sequence > leased.event_sequence,
            WebhookDelivery.state == DeliveryState.PENDING,
        )
        .order_by(WebhookDelivery.event_sequence)
        .limit(1)
    )
    db.session.commit()
    following_ids = [following] if following is not None else []
    return list(dict.fromkeys([*following_ids, *_waiting_in(leased.organization_id)]))


def _waiting_in(organization_id: uuid.UUID) -> list[uuid.UUID]:
    """The organization's oldest delivery that is due, free and first in line: one that a
    lease may have refused while the organization had no room (now there is)."""
    now = clock.now()
    waiting = db.session.scalar(
        select(WebhookDelivery.id)
        .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
        .where(
            WebhookEndpoint.organization_id == organization_id,
            WebhookDelivery.state == DeliveryState.PENDING,
            or_(WebhookDelivery.next_attempt_at.is_(None), WebhookDelivery.next_attempt_at <= now),
            or_(WebhookDelivery.leased_until.is_(None), WebhookDelivery.leased_until <= now),
            _first_in_line(),
        )
        .order_by(WebhookDelivery.event_sequence)
        .limit(1)
    )
    db.session.commit()
    return [waiting] if waiting is not None else []


def _enqueue_delivery(delivery_id: uuid.UUID, delay: float | None = None) -> None:
    # If the queue cannot take it, the sweep hands it over (the outage is logged once).
    jobs.try_enqueue(DELIVER_JOB, str(delivery_id), delay=delay if delay and delay > 0 else None)


def enqueue_deliveries(delivery_ids: list[uuid.UUID]) -> None:
    for delivery_id in delivery_ids:
        _enqueue_delivery(delivery_id)


# -- the sweep --------------------------------------------------------------------------------


def sweep() -> list[uuid.UUID]:
    """Relay what the outbox still holds, free expired leases, and return every due delivery
    that is first in line for its subject (to be enqueued)."""
    made = relay()
    now = clock.now()
    db.session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.state == DeliveryState.PENDING,
            WebhookDelivery.leased_until.is_not(None),
            WebhookDelivery.leased_until <= now,
        )
        .values(leased_until=None)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
    due = db.session.scalars(
        select(WebhookDelivery.id)
        .where(
            WebhookDelivery.state == DeliveryState.PENDING,
            WebhookDelivery.leased_until.is_(None),
            or_(WebhookDelivery.next_attempt_at.is_(None), WebhookDelivery.next_attempt_at <= now),
            _first_in_line(),
        )
        .order_by(WebhookDelivery.event_sequence)
        .limit(SWEEP_BATCH)
    ).all()
    db.session.commit()
    return list(dict.fromkeys([*made, *due]))
