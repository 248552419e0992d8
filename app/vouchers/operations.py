"""Plan vouchers: minted by operators, redeemed once by an organization."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.errors import CodeNotFound, Conflict, InvalidRequest
from app.extensions import db
from app.identity.models import User
from app.organizations.models import Organization, Plan
from app.tokens import hash_secret, new_secret
from app.vouchers.models import Voucher, VoucherRedemption

VOUCHER_PREFIX = "vv_"


def mint_vouchers(plan: Plan, days: int, count: int) -> list[str]:
    """New voucher codes, returned once; only their hashes are kept."""
    if plan == Plan.FREE:
        raise InvalidRequest("A voucher must grant a paid plan")
    if not 1 <= days <= 3660 or not 1 <= count <= 1000:
        raise InvalidRequest("days must be 1 to 3660 and count 1 to 1000")
    codes = []
    for _ in range(count):
        code, digest = new_secret(VOUCHER_PREFIX, 12)
        db.session.add(Voucher(code_hash=digest, plan=plan, days=days))
        codes.append(code)
    db.session.flush()
    return codes


def redeem_voucher(organization: Organization, user: User | None, code: str) -> Organization:
    """Put ``organization`` on the voucher's plan; exactly one redemption ever succeeds.

    The unique voucher_id on redemptions decides races, not a read-then-write check.
    """
    voucher = db.session.scalar(
        select(Voucher).where(Voucher.code_hash == hash_secret(code.strip()))
    )
    if voucher is None:
        raise CodeNotFound("No such voucher code")
    if db.session.scalar(
        select(VoucherRedemption.id).where(VoucherRedemption.voucher_id == voucher.id)
    ):
        raise Conflict("This voucher has already been redeemed", code="ALREADY_REDEEMED")
    if organization.effective_plan() != Plan.FREE:
        raise Conflict(f"{organization.name} is already on a paid plan", code="ALREADY_PAID")
    try:
        with db.session.begin_nested():
            db.session.add(
                VoucherRedemption(
                    voucher_id=voucher.id,
                    organization_id=organization.id,
                    redeemed_by_id=user.id if user else None,
                )
            )
    except IntegrityError:
        raise Conflict("This voucher has already been redeemed", code="ALREADY_REDEEMED") from None
    organization.plan = voucher.plan
    organization.plan_expires_at = clock.now() + timedelta(days=voucher.days)
    db.session.flush()
    return organization
