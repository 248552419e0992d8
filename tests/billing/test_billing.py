"""Billing: POST /billing/checkout and /billing/portal through the payment-processor adapter.

Contract: not configured -> 503 NOT_CONFIGURED; processor error
-> 502 UPSTREAM_FAILED; already on a paid plan -> 409 ALREADY_PAID; portal without a billing
account -> 409 NO_BILLING_ACCOUNT.

The Stripe tests run the production client (``app.billing.stripe.StripeBilling``) over HTTP
against ``FakeStripe``, a local server that answers as Stripe's API does.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Iterator

import pytest
import requests
from factories import Staff, make_staff
from flask import Flask
from flask.testing import FlaskClient
from support.fake_stripe import FakeStripe

from app.billing.adapter import BillingError
from app.billing.stripe import StripeBilling
from app.extensions import db
from app.organizations.models import Organization, Plan

RETURN_URL = "https://shop.example.test/account"


def checkout(client: FlaskClient, staff: Staff, plan: str = "PRO", **body: str):
    return client.post("/billing/checkout", json={"plan": plan, **body}, headers=staff.headers())


def portal(client: FlaskClient, staff: Staff, **body: str):
    return client.post("/billing/portal", json=body, headers=staff.headers())


def customer_of(app: Flask, staff: Staff) -> str | None:
    with app.app_context():
        organization = db.session.get(Organization, uuid.UUID(staff.organization_id))
        assert organization is not None
        customer = organization.billing_customer_id
        db.session.remove()
    return customer


@pytest.fixture
def stripe() -> Iterator[FakeStripe]:
    with FakeStripe() as fake:
        yield fake


def stripe_settings(fake: FakeStripe, **overrides: str) -> dict[str, str]:
    return {
        "BILLING_PROVIDER": "stripe",
        "STRIPE_API_KEY": fake.api_key,
        "STRIPE_API_BASE": fake.url,
        "STRIPE_PRICE_PRO": fake.prices["PRO"],
        "STRIPE_PRICE_PREMIUM_PLUS": fake.prices["PREMIUM_PLUS"],
        **overrides,
    }


@pytest.fixture
def stripe_app(make_app, stripe: FakeStripe) -> Flask:
    """The service configured for Stripe, talking to the fake; same database as ``app``."""
    return make_app(**stripe_settings(stripe))


@pytest.fixture
def stripe_client(stripe_app: Flask) -> FlaskClient:
    return stripe_app.test_client()


@pytest.fixture
def free_staff(app: Flask) -> Staff:
    return make_staff(app, plan=Plan.FREE)


# -- not configured -------------------------------------------------------------------------


@pytest.mark.parametrize("call", [checkout, portal])
def test_billing_without_a_provider_is_503_not_configured(app, client, free_staff, call):
    response = call(client, free_staff)
    assert response.status_code == 503
    assert response.get_json()["code"] == "NOT_CONFIGURED"


# -- checkout through Stripe ----------------------------------------------------------------


def test_checkout_from_a_free_organization_returns_the_stripe_session_url(
    app, stripe, stripe_client, free_staff
):
    response = checkout(stripe_client, free_staff, "PRO", return_url=RETURN_URL)

    assert response.status_code == 200
    (session,) = stripe.checkout_sessions.values()
    assert response.get_json() == {"url": session["url"]}
    (customer,) = stripe.customers.values()
    assert customer["name"] == "Acme"
    assert customer["metadata"] == {"organization_id": free_staff.organization_id}
    assert session["mode"] == "subscription"
    assert session["customer"] == customer["id"]
    assert session["line_items"] == [{"price": stripe.prices["PRO"], "quantity": 1}]
    assert session["client_reference_id"] == free_staff.organization_id
    assert session["metadata"] == {"plan": "PRO"}
    assert session["success_url"] == session["cancel_url"] == RETURN_URL
    assert customer_of(app, free_staff) == customer["id"]


def test_a_second_checkout_reuses_the_stripe_customer(app, stripe, stripe_client, free_staff):
    assert checkout(stripe_client, free_staff, "PRO").status_code == 200
    assert checkout(stripe_client, free_staff, "PREMIUM_PLUS").status_code == 200

    assert len(stripe.customers) == 1
    first, second = stripe.checkout_sessions.values()
    assert first["customer"] == second["customer"] == customer_of(app, free_staff)
    assert second["line_items"][0]["price"] == stripe.prices["PREMIUM_PLUS"]
    assert second["metadata"] == {"plan": "PREMIUM_PLUS"}


def test_checkout_without_return_url_comes_back_to_the_public_url(
    stripe, stripe_client, free_staff
):
    assert checkout(stripe_client, free_staff).status_code == 200
    (session,) = stripe.checkout_sessions.values()
    assert session["success_url"] == "https://verity.test"


def test_checkout_from_a_paid_organization_is_409_already_paid(app, stripe, stripe_client):
    staff = make_staff(app, plan=Plan.PRO)
    response = checkout(stripe_client, staff, "PREMIUM_PLUS")
    assert response.status_code == 409
    assert response.get_json()["code"] == "ALREADY_PAID"
    assert stripe.requests == []


def test_checkout_for_the_free_plan_is_400(stripe, stripe_client, free_staff):
    response = checkout(stripe_client, free_staff, "FREE")
    assert response.status_code == 400
    assert stripe.requests == []


# -- portal through Stripe ------------------------------------------------------------------


def test_portal_before_any_checkout_is_409_no_billing_account(stripe, stripe_client, free_staff):
    response = portal(stripe_client, free_staff)
    assert response.status_code == 409
    assert response.get_json()["code"] == "NO_BILLING_ACCOUNT"
    assert stripe.requests == []


def test_portal_after_checkout_returns_the_stripe_portal_url(
    app, stripe, stripe_client, free_staff
):
    assert checkout(stripe_client, free_staff).status_code == 200

    response = portal(stripe_client, free_staff, return_url=RETURN_URL)

    assert response.status_code == 200
    (session,) = stripe.portal_sessions.values()
    assert response.get_json() == {"url": session["url"]}
    assert session["customer"] == customer_of(app, free_staff)
    assert session["return_url"] == RETURN_URL


# -- processor failures ---------------------------------------------------------------------


def assert_upstream_failed(response, *secrets: str) -> None:
    assert response.status_code == 502
    body = response.get_json()
    assert body["code"] == "UPSTREAM_FAILED"
    text = response.get_data(as_text=True)
    assert "Traceback" not in text
    assert "sk_test_" not in text
    for secret in secrets:
        assert secret not in text


def test_stripe_outage_on_checkout_is_502_and_stores_nothing(
    app, stripe, stripe_client, free_staff, caplog
):
    stripe.fail_next = True
    with caplog.at_level(logging.DEBUG):
        response = checkout(stripe_client, free_staff)

    assert_upstream_failed(response, stripe.api_key)
    assert stripe.api_key not in caplog.text
    assert customer_of(app, free_staff) is None
    # The outage was one call: the next attempt goes through.
    assert checkout(stripe_client, free_staff).status_code == 200


def test_stripe_outage_on_portal_is_502(stripe, stripe_client, free_staff):
    assert checkout(stripe_client, free_staff).status_code == 200
    stripe.fail_next = True
    assert_upstream_failed(portal(stripe_client, free_staff), stripe.api_key)


def test_wrong_stripe_api_key_is_502_without_either_key(make_app, stripe, free_staff, caplog):
    wrong_key = "sk_test_" + "w" * 24
    client = make_app(**stripe_settings(stripe, STRIPE_API_KEY=wrong_key)).test_client()

    with caplog.at_level(logging.DEBUG):
        response = checkout(client, free_staff)

    assert_upstream_failed(response, wrong_key, wrong_key[-4:], stripe.api_key)
    assert "Invalid API Key" in response.get_json()["error"]
    assert wrong_key not in caplog.text
    assert stripe.customers == {}


def test_stripe_settings_missing_fail_at_startup(make_app, stripe):
    with pytest.raises(RuntimeError, match="STRIPE_PRICE_PREMIUM_PLUS"):
        make_app(**stripe_settings(stripe, STRIPE_PRICE_PREMIUM_PLUS=""))


# -- the in-process fake --------------------------------------------------------------------


def test_fake_billing_provider_end_to_end(make_app, free_staff):
    fake_app = make_app(BILLING_PROVIDER="fake")
    client = fake_app.test_client()

    assert portal(client, free_staff).get_json()["code"] == "NO_BILLING_ACCOUNT"
    response = checkout(client, free_staff)
    assert response.status_code == 200
    assert response.get_json()["url"].startswith("https://billing.invalid/checkout/cs_")
    assert customer_of(fake_app, free_staff) in fake_app.extensions["billing"].customers.values()
    response = portal(client, free_staff)
    assert response.status_code == 200
    assert response.get_json()["url"].startswith("https://billing.invalid/portal/bps_")

    fake_app.extensions["billing"].fail_next = True
    assert portal(client, free_staff).status_code == 502


# -- StripeBilling against the fake, without the app ----------------------------------------


def client_for(fake: FakeStripe, **kwargs) -> StripeBilling:
    return StripeBilling(fake.api_key, fake.prices, api_base=fake.url, **kwargs)


def start(billing: StripeBilling, customer_id: str | None = None, plan: str = "PRO"):
    return billing.create_checkout(
        organization_id="org-1",
        organization_name="Acme",
        customer_id=customer_id,
        plan=plan,
        success_url=RETURN_URL,
        cancel_url=RETURN_URL + "?cancelled",
    )


def test_stripe_client_sends_bearer_form_posts_with_a_fresh_idempotency_key(stripe):
    result = start(client_for(stripe))

    assert [r.path for r in stripe.requests] == ["/v1/customers", "/v1/checkout/sessions"]
    for recorded in stripe.requests:
        assert recorded.headers["Authorization"] == f"Bearer {stripe.api_key}"
        assert recorded.headers["Content-Type"] == "application/x-www-form-urlencoded"
    keys = {recorded.headers["Idempotency-Key"] for recorded in stripe.requests}
    assert len(keys) == 2
    assert stripe.requests[0].form == {"name": "Acme", "metadata[organization_id]": "org-1"}
    assert result.customer_id in stripe.customers
    (session,) = stripe.checkout_sessions.values()
    assert result.url == session["url"]
    assert session["cancel_url"] == RETURN_URL + "?cancelled"


def test_stripe_client_with_a_known_customer_creates_no_other(stripe):
    billing = client_for(stripe)
    customer_id = start(billing).customer_id

    again = start(billing, customer_id, plan="PREMIUM_PLUS")

    assert again.customer_id == customer_id
    assert len(stripe.customers) == 1
    assert [r.path for r in stripe.requests].count("/v1/customers") == 1


def test_stripe_client_raises_stripes_message_for_an_unknown_customer(stripe):
    with pytest.raises(BillingError, match=r"^No such customer: 'cus_x'$"):
        start(client_for(stripe), "cus_x")
    with pytest.raises(BillingError, match=r"^No such customer: 'cus_x'$"):
        client_for(stripe).create_portal(customer_id="cus_x", return_url=RETURN_URL)


def test_stripe_client_raises_for_an_unknown_price(stripe):
    billing = StripeBilling(stripe.api_key, {"PRO": "price_gone"}, api_base=stripe.url)
    with pytest.raises(BillingError, match="No such price: 'price_gone'"):
        start(billing)


def test_stripe_client_portal_returns_the_session_url(stripe):
    billing = client_for(stripe)
    customer_id = start(billing).customer_id

    url = billing.create_portal(customer_id=customer_id, return_url=RETURN_URL)

    (session,) = stripe.portal_sessions.values()
    assert url == session["url"]
    assert session["object"] == "billing_portal.session"


def test_stripe_client_masks_keys_in_stripes_messages(stripe):
    billing = StripeBilling("sk_test_" + "z" * 24, stripe.prices, api_base=stripe.url)
    with pytest.raises(BillingError) as caught:
        start(billing)
    assert str(caught.value) == "Invalid API Key provided: [redacted key]"
    assert "zzzz" not in repr(billing)


def test_stripe_client_unreachable_is_a_billing_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    billing = StripeBilling(
        "sk_test_secret", {"PRO": "price_x"}, api_base=f"http://127.0.0.1:{port}"
    )
    with pytest.raises(BillingError, match="could not be reached") as caught:
        start(billing)
    assert "sk_test_secret" not in str(caught.value)


@pytest.mark.parametrize(
    "missing", ["STRIPE_API_KEY", "STRIPE_PRICE_PRO", "STRIPE_PRICE_PREMIUM_PLUS"]
)
def test_from_config_names_each_missing_setting(missing):
    config = {
        "STRIPE_API_KEY": "sk_test_secret",
        "STRIPE_PRICE_PRO": "price_pro",
        "STRIPE_PRICE_PREMIUM_PLUS": "price_pp",
        missing: "",
    }
    with pytest.raises(RuntimeError, match=missing) as caught:
        StripeBilling.from_config(config)
    assert "sk_test_secret" not in str(caught.value)


def test_from_config_refuses_a_publishable_key():
    config = {
        "STRIPE_API_KEY": "pk_test_abc",
        "STRIPE_PRICE_PRO": "price_pro",
        "STRIPE_PRICE_PREMIUM_PLUS": "price_pp",
    }
    with pytest.raises(RuntimeError, match="secret key"):
        StripeBilling.from_config(config)


def test_fake_stripe_checks_the_key_and_required_fields(stripe):
    def post(path: str, data: dict[str, str], key: str | None = stripe.api_key):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return requests.post(stripe.url + path, data=data, headers=headers, timeout=5)

    unauthenticated = post("/v1/customers", {}, key=None)
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"]["type"] == "invalid_request_error"
    missing = post("/v1/checkout/sessions", {"success_url": RETURN_URL})
    assert missing.status_code == 400
    assert missing.json()["error"] == {
        "type": "invalid_request_error",
        "message": "Missing required param: mode.",
        "code": "parameter_missing",
        "param": "mode",
    }
    portal_missing = post("/v1/billing_portal/sessions", {})
    assert portal_missing.json()["error"]["param"] == "customer"


# -- the 402 and the operator's commands ----------------------------------------------------


def test_without_billing_a_402_keeps_the_contract_body_and_names_the_operator_command(
    app, client, free_staff
):
    """The contract's three fields, nothing more; only the message tells the operator how to
    set a plan, and the command it names lifts the gate."""
    refused = client.post("/integrations", json={"name": "b"}, headers=free_staff.headers())
    assert refused.status_code == 402
    body = refused.get_json()
    assert set(body) == {"error", "code", "tier"}
    assert body["code"] == "UPGRADE_REQUIRED" and body["tier"] == "FREE"
    command = f"flask orgs set-plan {free_staff.organization_id} PRO"
    assert command in body["error"]
    assert "flask vouchers mint --plan PRO" in body["error"]

    done = app.test_cli_runner().invoke(args=command.split()[1:])
    assert done.exit_code == 0, done.output
    created = client.post("/integrations", json={"name": "b"}, headers=free_staff.headers())
    assert created.status_code == 201, created.get_json()


def test_with_billing_a_402_names_no_operator_command(stripe_app, stripe_client):
    staff = make_staff(stripe_app, plan=Plan.FREE)
    refused = stripe_client.post("/integrations", json={"name": "b"}, headers=staff.headers())
    assert refused.status_code == 402
    assert set(refused.get_json()) == {"error", "code", "tier"}
    assert "flask" not in refused.get_json()["error"]
