"""Plan vouchers minted by operators and redeemed once by an organization."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.models_base import IdMixin
from app.organizations.models import Plan


class Voucher(IdMixin, db.Model):
    __tablename__ = "vouchers"

    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    plan: Mapped[Plan] = mapped_column(
        Enum(Plan, native_enum=False, length=20, validate_strings=True)
    )
    days: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(default=clock.now)


class VoucherRedemption(IdMixin, db.Model):
    """The unique key on voucher_id is what makes a voucher single-use under concurrency."""

    __tablename__ = "voucher_redemptions"

    voucher_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("vouchers.id", ondelete="CASCADE"), unique=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    redeemed_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    redeemed_at: Mapped[datetime] = mapped_column(default=clock.now)
