"""The dashboard's plan page: what the acting organization is on, vouchers and billing.

A voucher is redeemed with the same operation as ``POST /vouchers/exchange`` and counts
against the same per-IP budget (app/throttle.py wraps both endpoints in one shared limit), so
the page is not a second way to guess codes. Billing hands the browser to the payment
processor; when no processor is configured the page says so, because vouchers still work.
"""

from __future__ import annotations

import time
from typing import Any

from flask import current_app, flash, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_limiter.errors import RateLimitExceeded
from pydantic import ValidationError

from app.billing import operations as billing
from app.errors import ApiError, CodeNotFound, Conflict, NotConfigured
from app.organizations.models import Organization, Plan
from app.staff.blueprint import allow_form_redirects_to, bp, navigate, wants_fragment
from app.staff.page_kit import refusal
from app.vouchers import operations as vouchers
from app.web.access import acting_organization, current_user, require_staff
from app.web.payloads.billing import CheckoutIn, PortalIn, VoucherIn
from app.web.requests import base_url

PLAN_NAMES = {Plan.FREE: "Free", Plan.PRO: "Pro", Plan.PREMIUM_PLUS: "Premium+"}
BILLING_NOT_SET_UP = (
    "Billing is not set up on this deployment, so plans cannot be bought here. "
    "Vouchers still work: redeem one below."
)


@bp.app_template_filter("plan_name")
def plan_name(plan: Plan | str | None) -> str:
    """A plan in words ("Premium+", not PREMIUM_PLUS), for every dashboard template."""
    return PLAN_NAMES.get(Plan(plan), str(plan)) if plan else ""


def billing_configured() -> bool:
    return current_app.extensions.get("billing") is not None


def plan_page(
    organization: Organization | None, status: int = 200, **extra: Any
) -> ResponseReturnValue:
    """The page; a refused form comes back with its message and the user's input."""
    page = render_template(
        "staff/plan/index.html",
        organization=organization,
        effective=organization.effective_plan() if organization else None,
        billing_ready=billing_configured(),
        plans=[Plan.PRO, Plan.PREMIUM_PLUS],
        values=extra.pop("values", {"code": ""}),
        **extra,
    )
    return page, status


def refused(
    organization: Organization, exc: ApiError | ValidationError, **extra: Any
) -> ResponseReturnValue:
    """Undo what the failed operation may have flushed (the request commits whenever a view
    returns), then show the page again with the reason and the error's own status.

    htmx does not swap 5xx answers, so an htmx request is sent back to the page with the
    reason as a notice instead.
    """
    message, status = refusal(exc, missing_record_is_a_page=False)
    if isinstance(exc, NotConfigured):
        message = BILLING_NOT_SET_UP
    if wants_fragment():
        flash(message, "error")
        return navigate(url_for("staff.plan"))
    return plan_page(organization, status, error=message, **extra)


@bp.get("/plan")
@require_staff
def plan() -> ResponseReturnValue:
    """The acting organization's plan, when a voucher period ends, and how to get a paid one."""
    provider = current_app.extensions.get("billing")
    for origin in getattr(provider, "page_origins", ()):
        allow_form_redirects_to(origin)
    return plan_page(g.organization)


@bp.post("/plan/voucher")
@require_staff
def plan_voucher() -> ResponseReturnValue:
    """Redeem a voucher for the acting organization (throttled with /vouchers/exchange)."""
    organization = acting_organization()
    values = {"code": request.form.get("code", "")}
    try:
        body = VoucherIn.model_validate(values)
        vouchers.redeem_voucher(organization, current_user(), body.code)
    except (ValidationError, CodeNotFound, Conflict) as exc:
        return refused(organization, exc, values=values)
    flash(f"{organization.name} is now on the {plan_name(organization.plan)} plan.", "success")
    return redirect(url_for("staff.plan"), 303)


@bp.errorhandler(RateLimitExceeded)
def too_many_attempts(exc: RateLimitExceeded) -> ResponseReturnValue:
    """Readable, with the wait in words; Flask-Limiter adds Retry-After to the response."""
    limit = current_app.extensions["rate_limiter"].current_limit
    wait = max(1, limit.reset_at - int(time.time())) if limit else 60
    page = render_template("staff/plan/throttled.html", wait=wait)
    return page, 429


def hand_off(url: str) -> ResponseReturnValue:
    """To the payment processor: a 303 for a plain form; htmx is told to navigate instead, a
    script navigation that a ``form-action 'self'`` policy does not block."""
    return navigate(url)


def return_url() -> str:
    return f"{base_url()}{url_for('staff.plan')}"


@bp.post("/plan/checkout")
@require_staff
def plan_checkout() -> ResponseReturnValue:
    """Start buying a plan with the processor, then send the browser there."""
    organization = acting_organization()
    try:
        body = CheckoutIn.model_validate(
            {"plan": request.form.get("plan", ""), "return_url": return_url()}
        )
        url = billing.start_checkout(
            current_app.extensions.get("billing"),
            organization,
            Plan(body.plan),
            body.return_url or base_url(),
        )
    except (ValidationError, ApiError) as exc:
        return refused(organization, exc)
    return hand_off(url)


@bp.post("/plan/portal")
@require_staff
def plan_portal() -> ResponseReturnValue:
    """The processor's billing portal, where invoices and cancellation live."""
    organization = acting_organization()
    try:
        body = PortalIn.model_validate({"return_url": return_url()})
        url = billing.open_portal(
            current_app.extensions.get("billing"), organization, body.return_url or base_url()
        )
    except (ValidationError, ApiError) as exc:
        return refused(organization, exc)
    return hand_off(url)
