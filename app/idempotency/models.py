"""One row per (organization, Idempotency-Key): the request's fingerprint and its answer."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.models_base import IdMixin


class IdempotentRequest(IdMixin, db.Model):
    """The first answer to a keyed create, kept until ``expires_at``.

    The row is inserted in the create's own transaction, before the create runs: a second
    request with the same key meets the unique constraint and waits for the first to commit
    (PostgreSQL's unique index, SQLite's write lock), then replays its answer. The answer may
    hold a secret shown once (a tx_code, a policy request token), so it is stored sealed.
    """

    __tablename__ = "idempotent_requests"
    __table_args__ = (
        UniqueConstraint("scope", "key"),
        Index("ix_idempotent_requests_expires_at", "expires_at"),
    )

    # The organization the key belongs to (keys of two organizations never meet).
    scope: Mapped[str] = mapped_column(String(64))
    key: Mapped[str] = mapped_column(String(255))
    # SHA-256 of the method, the path and the body, as hex.
    fingerprint: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None]
    sealed_body: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    expires_at: Mapped[datetime]
