"""Stripe through its HTTP API, with ``requests`` rather than the vendor SDK.

Three calls are all the service needs (create a customer, a Checkout Session, a billing portal
session), so a thin client keeps the dependency surface small and lets the tests run this very
code against a local fake of the same endpoints.

Every failure (unreachable, timed out, non-2xx, an error body) becomes a ``BillingError``
carrying Stripe's own message, which operations turn into 502 UPSTREAM_FAILED. The secret key
never appears in those messages or in the logs.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from typing import Any

import requests

from app.billing.adapter import BillingError, Checkout

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10.0

# Stripe echoes a partly masked key in some messages ("Invalid API Key provided: sk_test_***1234");
# clients see processor messages, so anything shaped like a key is masked entirely.
_KEY_PATTERN = re.compile(r"\b(?:sk|rk|pk)_(?:test|live)_[A-Za-z0-9*]+")

_PRICE_SETTINGS = {"PRO": "STRIPE_PRICE_PRO", "PREMIUM_PLUS": "STRIPE_PRICE_PREMIUM_PLUS"}


def _redact(message: str) -> str:
    return _KEY_PATTERN.sub("[redacted key]", message)


class StripeBilling:
    """The ``BillingProvider`` for Stripe: subscriptions through hosted Checkout and the portal."""

    page_origins = ("https://checkout.stripe.com", "https://billing.stripe.com")

    def __init__(
        self,
        api_key: str,
        prices: Mapping[str, str],
        *,
        api_base: str = "https://api.stripe.com",
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self._api_key = api_key
        self.prices = dict(prices)
        self.api_base = api_base.rstrip("/")
        self.timeout = timeout

    def __repr__(self) -> str:
        # Keeps the key out of debug output and tracebacks that render locals.
        return f"StripeBilling(api_base={self.api_base!r})"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> StripeBilling:
        """Fail at startup, not on a customer's first purchase, when a setting is missing."""
        required = ["STRIPE_API_KEY", *_PRICE_SETTINGS.values()]
        missing = [name for name in required if not config.get(name)]
        if missing:
            raise RuntimeError(f"BILLING_PROVIDER=stripe needs {', '.join(missing)} to be set")
        if str(config["STRIPE_API_KEY"]).startswith("pk_"):
            raise RuntimeError(
                "STRIPE_API_KEY must be a secret key (sk_...), not a publishable one"
            )
        return cls(
            config["STRIPE_API_KEY"],
            {plan: config[setting] for plan, setting in _PRICE_SETTINGS.items()},
            api_base=config.get("STRIPE_API_BASE") or "https://api.stripe.com",
        )

    def create_checkout(
        self,
        *,
        organization_id: str,
        organization_name: str,
        customer_id: str | None,
        plan: str,
        success_url: str,
        cancel_url: str,
    ) -> Checkout:
        """Create the customer on first purchase, so later purchases and the portal share it."""
        price = self.prices[plan]
        if customer_id is None:
            customer_id = self._create_customer(organization_id, organization_name)
        session = self._post(
            "/v1/checkout/sessions",
            {
                "mode": "subscription",
                "customer": customer_id,
                "line_items[0][price]": price,
                "line_items[0][quantity]": "1",
                "success_url": success_url,
                "cancel_url": cancel_url,
                "client_reference_id": organization_id,
                "metadata[plan]": plan,
            },
        )
        return Checkout(url=_field(session, "url"), customer_id=customer_id)

    def create_portal(self, *, customer_id: str, return_url: str) -> str:
        session = self._post(
            "/v1/billing_portal/sessions", {"customer": customer_id, "return_url": return_url}
        )
        return _field(session, "url")

    def _create_customer(self, organization_id: str, organization_name: str) -> str:
        # The organization id in metadata lets an operator match Stripe records to ours.
        customer = self._post(
            "/v1/customers",
            {"name": organization_name, "metadata[organization_id]": organization_id},
        )
        return _field(customer, "id")

    def _post(self, path: str, form: dict[str, str]) -> dict[str, Any]:
        """POST a form and return the object, or raise BillingError with Stripe's message.

        A fresh idempotency key per call means a transport-level resend of the same request can
        never create a second object. ``requests.post`` opens and closes its own session, so no
        pooled socket outlives the call.
        """
        try:
            response = requests.post(
                self.api_base + path,
                data=form,
                headers={
                    "Authorization": f"Bearer {self._api_key}",
                    "Idempotency-Key": str(uuid.uuid4()),
                },
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            log.warning("stripe %s unreachable: %s", path, type(exc).__name__)
            raise BillingError(f"Stripe could not be reached ({type(exc).__name__})") from None
        return _parse(path, response)


def _parse(path: str, response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        log.warning("stripe %s answered %s without JSON", path, response.status_code)
        raise BillingError(f"Stripe answered {response.status_code} without a JSON body")
    error = body.get("error")
    if response.ok and error is None:
        return body
    message = error.get("message") if isinstance(error, dict) else None
    message = _redact(str(message or f"Stripe answered {response.status_code}"))
    log.warning(
        "stripe %s failed: status=%s request_id=%s message=%s",
        path,
        response.status_code,
        response.headers.get("Request-Id", "-"),
        message,
    )
    raise BillingError(message)


def _field(obj: dict[str, Any], name: str) -> str:
    """A field we rely on; its absence is an upstream fault (502), not a bug of ours (500)."""
    value = obj.get(name)
    if not isinstance(value, str) or not value:
        raise BillingError(f"Stripe's {obj.get('object', 'response')} has no {name}")
    return value
