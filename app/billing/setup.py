"""Choose the payment processor adapter from configuration."""

from __future__ import annotations

from typing import Any

from app.billing.adapter import BillingProvider
from app.billing.fake import FakeBilling


def billing_provider(config: dict[str, Any]) -> BillingProvider | None:
    """None (billing answers 503) unless BILLING_PROVIDER names an adapter."""
    name = config.get("BILLING_PROVIDER", "")
    if name == "fake":
        return FakeBilling()
    if name == "stripe":
        from app.billing.stripe import StripeBilling

        return StripeBilling.from_config(config)
    return None
