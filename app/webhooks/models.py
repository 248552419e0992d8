"""Webhook endpoints, the event outbox, and each endpoint's deliveries with their attempts.

An event row is written in the transaction that makes the change it reports, so a rollback
takes the event with it and a commit can never lose it. A relay job later fans each event
out into one delivery per subscribed endpoint; a delivery is retried until it succeeds, the
endpoint refuses it for good, or its retry window closes.
"""

from __future__ import annotations

import enum
import json
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Enum,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.extensions import db
from app.models_base import IdMixin, TimestampMixin

# SQLite numbers rows only through an INTEGER PRIMARY KEY; PostgreSQL gets a bigint identity.
SEQUENCE = BigInteger().with_variant(Integer(), "sqlite")


class DeliveryState(enum.StrEnum):
    """PENDING until the endpoint answers 2xx (DELIVERED) or the delivery gives up (FAILED:
    the retry window closed, or the endpoint answered 410 Gone and was disabled)."""

    PENDING = "PENDING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"


class WebhookEndpoint(IdMixin, TimestampMixin, db.Model):
    """Where an organization wants events sent, and the secret deliveries are signed with.

    The signing secret must be usable to sign, so it is stored sealed (AES-GCM, like issuer
    keys), never in clear. After a rotation the previous secret also signs until
    ``previous_secret_expires_at``, so receivers can switch without losing a delivery.
    """

    __tablename__ = "webhook_endpoints"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2000))
    description: Mapped[str] = mapped_column(Text, default="")
    # Event types this endpoint receives; empty means every type.
    events: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Disclosed claims go only to endpoints that opt in.
    include_claims: Mapped[bool] = mapped_column(default=False)
    sealed_secret: Mapped[bytes] = mapped_column(LargeBinary)
    previous_sealed_secret: Mapped[bytes | None] = mapped_column(LargeBinary)
    previous_secret_expires_at: Mapped[datetime | None]
    enabled: Mapped[bool] = mapped_column(default=True)
    # Why the service disabled it (a 410 Gone answer), for the people who see the list.
    disabled_reason: Mapped[str | None] = mapped_column(String(500))
    disabled_at: Mapped[datetime | None]

    def receives(self, event_type: str) -> bool:
        return not self.events or event_type in self.events


class WebhookEvent(db.Model):
    """One event in the outbox: what happened, to which subject, as the API shows it then.

    ``sequence`` orders events (deliveries of one subject to one endpoint go out in this
    order); ``id`` is the event's identity, sent as ``webhook-id`` on every attempt.
    ``position`` is the event's place in its organization's log, what event streams resume
    from (``Last-Event-ID``): assigned just before the commit, under the organization's
    ``EventCounter`` row lock (``app.webhooks.outbox``), so positions become visible in the
    order they were given and a reader that saw one has seen every lower one.
    """

    __tablename__ = "webhook_events"
    __table_args__ = (
        # The relay's scan: events not yet fanned out, oldest first.
        Index("ix_webhook_events_dispatched_at_sequence", "dispatched_at", "sequence"),
        # A policy request lapses once: two sweeps at once cannot both report it.
        Index(
            "uq_webhook_events_policy_request_expired",
            "subject_id",
            unique=True,
            sqlite_where=text("type = 'policy_request.expired'"),
            postgresql_where=text("type = 'policy_request.expired'"),
        ),
        # A stream's read: the organization's events after a position, in order.
        Index(
            "uq_webhook_events_organization_id_position",
            "organization_id",
            "position",
            unique=True,
        ),
    )

    sequence: Mapped[int] = mapped_column(SEQUENCE, primary_key=True, autoincrement=True)
    id: Mapped[uuid.UUID] = mapped_column(unique=True, default=uuid.uuid4)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    # Null for a test delivery (``webhook.test``), which is in no stream.
    position: Mapped[int | None] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(50))
    # The verification of the individual or policy request, for streams that filter by it.
    verification_id: Mapped[uuid.UUID | None]
    # The record the event is about (an individual, policy request or credential).
    subject_id: Mapped[uuid.UUID]
    # The record as the API returns it, without disclosed claims.
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Disclosed claims, for endpoints that opt in; erased with the subject's claims.
    claims: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    # Set once the relay made its deliveries.
    dispatched_at: Mapped[datetime | None]

    @property
    def webhook_id(self) -> str:
        """Standard Webhooks ``webhook-id``: the same on every attempt of this event."""
        return f"msg_{self.id.hex}"

    def body(self, include_claims: bool = False) -> str:
        """The Standard Webhooks body, ``{"type", "timestamp", "data"}``, as compact JSON (one
        line); ``data`` carries the disclosed claims only when asked."""
        data = dict(self.data)
        if include_claims and self.claims is not None:
            data["claims"] = self.claims
        return json.dumps(
            {"type": self.type, "timestamp": self.created_at.isoformat(), "data": data},
            separators=(",", ":"),
        )


class EventCounter(db.Model):
    """The last position given in an organization's event log. Its row is locked from the
    moment a transaction numbers its events until that transaction ends, which orders the
    commits of one organization's events by position."""

    __tablename__ = "event_counters"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    last_position: Mapped[int] = mapped_column(BigInteger, default=0)


class WebhookDelivery(IdMixin, db.Model):
    """One event for one endpoint: retried with backoff until delivered or given up."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        # Two relays fanning out one event at once meet here.
        UniqueConstraint("event_sequence", "endpoint_id"),
        # The sweep's scan: pending deliveries that are due.
        Index("ix_webhook_deliveries_state_next_attempt_at", "state", "next_attempt_at"),
        # An endpoint's deliveries of one subject, in event order.
        Index(
            "ix_webhook_deliveries_endpoint_id_subject_id_event_sequence",
            "endpoint_id",
            "subject_id",
            "event_sequence",
        ),
    )

    event_sequence: Mapped[int] = mapped_column(
        SEQUENCE, ForeignKey("webhook_events.sequence", ondelete="CASCADE")
    )
    endpoint_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE")
    )
    subject_id: Mapped[uuid.UUID]
    state: Mapped[DeliveryState] = mapped_column(
        Enum(
            DeliveryState,
            native_enum=False,
            length=20,
            validate_strings=True,
            name="webhook_delivery_state",
        ),
        default=DeliveryState.PENDING,
    )
    attempt_count: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None]
    # A worker holds the delivery while it sends; a lease left by a crashed worker expires.
    leased_until: Mapped[datetime | None]
    last_status_code: Mapped[int | None]
    last_error: Mapped[str | None] = mapped_column(String(500))
    delivered_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=clock.now)

    event: Mapped[WebhookEvent] = relationship()
    endpoint: Mapped[WebhookEndpoint] = relationship()


class WebhookAttempt(IdMixin, db.Model):
    """One try at a delivery: when, what was sent, and what came back (status code, headers
    and the start of the body, or the network error), kept as ``app.webhooks.exchange``
    describes. It goes with its delivery, and so with the event (an erasure deletes the
    events about the person); a body that carried claims loses them with the record's.

    The request and response columns are empty for attempts made before they were kept.
    """

    __tablename__ = "webhook_attempts"

    delivery_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    started_at: Mapped[datetime]
    duration_ms: Mapped[int] = mapped_column(default=0)
    status_code: Mapped[int | None]
    error: Mapped[str | None] = mapped_column(String(500))
    request_method: Mapped[str | None] = mapped_column(String(10))
    request_url: Mapped[str | None] = mapped_column(Text)
    request_headers: Mapped[dict[str, str] | None] = mapped_column(JSON)
    request_body: Mapped[str | None] = mapped_column(Text)
    request_body_cut: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The body held disclosed claims: erased (``request_body`` null) with the record's.
    request_carries_claims: Mapped[bool] = mapped_column(default=False, server_default=false())
    response_headers: Mapped[dict[str, str] | None] = mapped_column(JSON)
    response_headers_cut: Mapped[bool] = mapped_column(default=False, server_default=false())
    response_body: Mapped[str | None] = mapped_column(Text)
    response_body_cut: Mapped[bool] = mapped_column(default=False, server_default=false())
