"""Stripe events move the plan: a completed checkout buys it, a cancelled subscription ends it."""

from __future__ import annotations

import json
import time

import pytest
from factories import make_staff

from app.billing.webhook import sign
from app.organizations.models import Plan

SECRET = "whsec_test"


@pytest.fixture
def hooked(make_app):
    return make_app(STRIPE_WEBHOOK_SECRET=SECRET).test_client()


def post_event(client, event: dict, secret: str = SECRET, timestamp: int | None = None):
    payload = json.dumps(event).encode()
    header = sign(payload, secret, timestamp or int(time.time()))
    return client.post(
        "/billing/webhook",
        data=payload,
        headers={"Stripe-Signature": header, "Content-Type": "application/json"},
    )


def completed(organization_id: str, plan: str = "PRO") -> dict:
    return {
        "type": "checkout.session.completed",
        "data": {
            "object": {
                "client_reference_id": organization_id,
                "customer": "cus_1",
                "metadata": {"plan": plan},
            }
        },
    }


def test_completed_checkout_puts_the_organization_on_the_plan(app, hooked):
    staff = make_staff(app, plan=Plan.FREE)
    assert post_event(hooked, completed(staff.organization_id)).status_code == 200
    me = hooked.get("/me", headers=staff.headers()).get_json()
    assert me["memberships"][0]["organization"]["plan"] == "PRO"
    # Delivered again (at least once): same outcome.
    assert post_event(hooked, completed(staff.organization_id)).status_code == 200


def test_cancelled_subscription_returns_the_organization_to_free(app, hooked):
    staff = make_staff(app, plan=Plan.FREE)
    post_event(hooked, completed(staff.organization_id, "PREMIUM_PLUS"))
    cancelled = {"type": "customer.subscription.deleted", "data": {"object": {"customer": "cus_1"}}}
    assert post_event(hooked, cancelled).status_code == 200
    me = hooked.get("/me", headers=staff.headers()).get_json()
    assert me["memberships"][0]["organization"]["plan"] == "FREE"


def test_unsigned_forged_or_stale_events_are_refused(app, hooked):
    staff = make_staff(app, plan=Plan.FREE)
    forged = post_event(hooked, completed(staff.organization_id), secret="whsec_other")
    assert (forged.status_code, forged.get_json()["code"]) == (400, "INVALID_SIGNATURE")
    stale = post_event(hooked, completed(staff.organization_id), timestamp=int(time.time()) - 3600)
    assert stale.status_code == 400
    missing = hooked.post("/billing/webhook", json=completed(staff.organization_id))
    assert missing.status_code == 400
    me = hooked.get("/me", headers=staff.headers()).get_json()
    assert me["memberships"][0]["organization"]["plan"] == "FREE"


def test_webhook_without_a_configured_secret_is_503(app, client):
    response = post_event(client, completed("x"))
    assert (response.status_code, response.get_json()["code"]) == (503, "NOT_CONFIGURED")


def test_events_it_does_not_handle_are_acknowledged(app, hooked):
    assert post_event(hooked, {"type": "invoice.paid", "data": {"object": {}}}).status_code == 200
