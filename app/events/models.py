"""The open event streams of each organization, as leases in the database.

A stream holds a lease while it is open and renews it with every heartbeat; closing the
stream deletes it, and a stream whose process died leaves a lease that runs out. Counting the
live leases bounds an organization's open streams across every worker and instance.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.models_base import IdMixin


class EventStream(IdMixin, db.Model):
    """One open stream of an organization's events."""

    __tablename__ = "event_streams"
    __table_args__ = (
        Index("ix_event_streams_organization_id_lease_until", "organization_id", "lease_until"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    opened_at: Mapped[datetime] = mapped_column(default=clock.now)
    lease_until: Mapped[datetime]
