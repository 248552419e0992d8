"""The plan: vouchers, checkout and the billing portal."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.web.payloads.base import (
    Body,
    Out,
)


class VoucherIn(Body):
    code: str = Field(min_length=1, max_length=200)


class CheckoutIn(Body):
    plan: Literal["PRO", "PREMIUM_PLUS"]
    return_url: str | None = Field(default=None, max_length=2000, pattern=r"^https?://")


class PortalIn(Body):
    return_url: str | None = Field(default=None, max_length=2000, pattern=r"^https?://")


class RedirectOut(Out):
    url: str
