"""People who sign in to the dashboard, and the tokens that prove it."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.extensions import db
from app.models_base import IdMixin, TimestampMixin


class User(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "users"

    email: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    # The identity provider's subject, once the user has signed in through it.
    oidc_subject: Mapped[str | None] = mapped_column(String(255), unique=True)


class SessionToken(IdMixin, db.Model):
    __tablename__ = "session_tokens"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(lazy="joined")


class LoginAttempt(IdMixin, db.Model):
    """One browser redirect to the identity provider, kept in the database (not process memory)
    so that the callback may land on any instance."""

    __tablename__ = "login_attempts"

    state: Mapped[str] = mapped_column(String(100), unique=True)
    nonce: Mapped[str] = mapped_column(String(100))
    code_verifier: Mapped[str] = mapped_column(String(128))
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    return_to: Mapped[str | None] = mapped_column(String(2000))
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
