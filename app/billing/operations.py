"""Plan purchases through the configured payment processor."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app import clock
from app.billing.adapter import BillingError, BillingProvider
from app.billing.webhook import SignatureError, verified_event
from app.errors import Conflict, InvalidRequest, NotConfigured, UpstreamFailed
from app.extensions import db
from app.organizations.models import Organization, Plan


def _require(provider: BillingProvider | None) -> BillingProvider:
    if provider is None:
        raise NotConfigured("Billing is not configured on this deployment")
    return provider


def start_checkout(
    provider: BillingProvider | None, organization: Organization, plan: Plan, return_url: str
) -> str:
    provider = _require(provider)
    if plan == Plan.FREE:
        raise InvalidRequest("Choose a paid plan to check out")
    if organization.effective_plan() != Plan.FREE:
        raise Conflict(f"{organization.name} is already on a paid plan", code="ALREADY_PAID")
    try:
        checkout = provider.create_checkout(
            organization_id=str(organization.id),
            organization_name=organization.name,
            customer_id=organization.billing_customer_id,
            plan=plan.value,
            success_url=return_url,
            cancel_url=return_url,
        )
    except BillingError as exc:
        raise UpstreamFailed(f"The payment processor failed: {exc}") from exc
    organization.billing_customer_id = checkout.customer_id
    db.session.flush()
    return checkout.url


def open_portal(
    provider: BillingProvider | None, organization: Organization, return_url: str
) -> str:
    provider = _require(provider)
    if not organization.billing_customer_id:
        raise Conflict(f"{organization.name} has no billing account yet", code="NO_BILLING_ACCOUNT")
    try:
        return provider.create_portal(
            customer_id=organization.billing_customer_id, return_url=return_url
        )
    except BillingError as exc:
        raise UpstreamFailed(f"The payment processor failed: {exc}") from exc


def handle_webhook(secret: str, payload: bytes, signature: str) -> str | None:
    """Apply a processor event to the organization it names; return what changed, if anything.

    A completed checkout puts the organization on the plan it bought; a cancelled subscription
    puts it back on FREE. Both are idempotent, because the processor delivers at least once.
    """
    if not secret:
        raise NotConfigured("Billing webhooks are not configured on this deployment")
    try:
        event = verified_event(payload, signature, secret, int(clock.now().timestamp()))
    except SignatureError as exc:
        raise InvalidRequest(str(exc), code="INVALID_SIGNATURE") from exc
    kind = event.get("type")
    data = (event.get("data") or {}).get("object") or {}
    if kind == "checkout.session.completed":
        return _plan_bought(data)
    if kind == "customer.subscription.deleted":
        return _plan_cancelled(data)
    return None


def _plan_bought(session: dict[str, Any]) -> str | None:
    try:
        organization = db.session.get(
            Organization, uuid.UUID(str(session.get("client_reference_id")))
        )
        plan = Plan((session.get("metadata") or {}).get("plan", ""))
    except ValueError:
        return None
    if organization is None or plan == Plan.FREE:
        return None
    organization.plan = plan
    organization.plan_expires_at = None
    organization.billing_customer_id = session.get("customer") or organization.billing_customer_id
    db.session.flush()
    return f"{organization.id} -> {plan.value}"


def _plan_cancelled(subscription: dict[str, Any]) -> str | None:
    customer = subscription.get("customer")
    organization = (
        db.session.scalar(select(Organization).where(Organization.billing_customer_id == customer))
        if customer
        else None
    )
    if organization is None:
        return None
    organization.plan = Plan.FREE
    organization.plan_expires_at = None
    db.session.flush()
    return f"{organization.id} -> FREE"
