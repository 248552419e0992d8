"""An in-process stand-in for the payment processor, for local development and tests.

It keeps the processor's observable behaviour: customers are created on first checkout and
reused after, portal sessions need an existing customer, and ``fail_next`` makes the next call
fail the way an unreachable processor does.
"""

from __future__ import annotations

import secrets

from app.billing.adapter import BillingError, Checkout


class FakeBilling:
    def __init__(self, base_url: str = "https://billing.invalid") -> None:
        self.base_url = base_url
        self.page_origins = (base_url,)
        self.customers: dict[str, str] = {}
        self.checkouts: list[dict[str, str]] = []
        self.fail_next = False

    def _maybe_fail(self) -> None:
        if self.fail_next:
            self.fail_next = False
            raise BillingError("payment processor unavailable")

    def create_checkout(
        self, *, organization_id, organization_name, customer_id, plan, success_url, cancel_url
    ) -> Checkout:
        self._maybe_fail()
        if customer_id is None:
            customer_id = self.customers.setdefault(organization_id, f"cus_{secrets.token_hex(7)}")
        session_id = f"cs_{secrets.token_hex(12)}"
        self.checkouts.append(
            {"id": session_id, "customer": customer_id, "plan": plan, "success_url": success_url}
        )
        return Checkout(url=f"{self.base_url}/checkout/{session_id}", customer_id=customer_id)

    def create_portal(self, *, customer_id: str, return_url: str) -> str:
        self._maybe_fail()
        if customer_id not in self.customers.values():
            raise BillingError(f"No such customer: {customer_id}")
        return f"{self.base_url}/portal/bps_{secrets.token_hex(12)}"
