"""The payment processor seen through a small interface, so that the service never depends on
one vendor's SDK and tests run against a faithful local fake."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class BillingError(Exception):
    """The processor failed or refused; surfaced to clients as 502 UPSTREAM_FAILED."""


@dataclass(frozen=True)
class Checkout:
    url: str
    customer_id: str


class BillingProvider(Protocol):
    # Where the processor's hosted checkout and portal pages live: the dashboard's CSP
    # form-action names them so a form may hand the browser over, and names nothing else.
    page_origins: tuple[str, ...]

    def create_checkout(
        self,
        *,
        organization_id: str,
        organization_name: str,
        customer_id: str | None,
        plan: str,
        success_url: str,
        cancel_url: str,
    ) -> Checkout: ...

    def create_portal(self, *, customer_id: str, return_url: str) -> str: ...
