"""The plan section: the plan in words, vouchers (throttled with /vouchers/exchange), billing."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from factories import Staff, make_staff
from flask import Flask
from flask.testing import FlaskClient
from staff_support import sign_in, submit, text_of

from app import clock
from app.extensions import db
from app.identity.operations import create_user, issue_session_token
from app.organizations.models import Organization, Plan
from app.vouchers.operations import mint_vouchers


def browser_for(app: Flask, token: str) -> FlaskClient:
    client = app.test_client()
    assert sign_in(client, token).status_code == 302
    return client


def mint(app: Flask, plan: Plan = Plan.PRO, days: int = 30) -> str:
    with app.app_context():
        (code,) = mint_vouchers(plan, days, 1)
        db.session.commit()
        db.session.remove()
    return code


def organization_of(app: Flask, staff: Staff) -> Organization:
    with app.app_context():
        found = db.session.get(Organization, uuid.UUID(staff.organization_id))
        assert found is not None
        db.session.expunge(found)
        db.session.remove()
    return found


@pytest.fixture
def free(app: Flask) -> Staff:
    return make_staff(app, "fred@example.test", Plan.FREE, "Freebies")


@pytest.fixture
def free_browser(app: Flask, free: Staff) -> FlaskClient:
    return browser_for(app, free.token)


# -- the page -------------------------------------------------------------------------------


def test_the_page_shows_the_plan_in_words_and_what_a_paid_plan_unlocks(browser):
    response = browser.get("/dashboard/plan")
    assert response.status_code == 200
    page = text_of(response)
    assert "<strong>Acme</strong> is on the\n    <strong>Pro</strong> plan." in page
    assert "What a paid plan unlocks" in page and "Premium+" in page
    assert "Integration keys" in page and "Invitation codes" in page
    assert 'aria-current="page"' in page
    assert 'data-testid="plan-expiry"' not in page


def test_without_billing_the_page_says_so_and_offers_vouchers(free_browser, free):
    page = text_of(free_browser.get("/dashboard/plan"))
    assert 'data-testid="billing-not-set-up"' in page
    assert "Buy Pro" not in page
    assert 'action="/dashboard/plan/voucher"' in page
    # The operator's command that sets the plan, for this organization.
    assert f"flask orgs set-plan {free.organization_id} PRO" in page
    assert "flask vouchers mint --plan PRO" in page


def test_without_billing_the_upgrade_page_names_the_operator_command(free_browser, free):
    command = f"flask orgs set-plan {free.organization_id} PRO"
    gated = free_browser.get("/dashboard/verifications/new")
    assert gated.status_code == 402
    assert 'data-testid="operator-plan-commands"' in text_of(gated)
    assert command in text_of(gated)
    # The prompt shown in place of a gated form says the same.
    assert command in text_of(free_browser.get("/dashboard/integrations"))


def test_a_user_without_an_organization_is_told_to_create_or_join_one(app):
    with app.app_context():
        token, _ = issue_session_token(create_user("new@example.test"), 12)
        db.session.commit()
    page = browser_for(app, token).get("/dashboard/plan")
    assert page.status_code == 200
    assert "Create or join an organization" in text_of(page)


# -- vouchers --------------------------------------------------------------------------------


def test_a_voucher_redeemed_on_the_page_puts_a_free_organization_on_pro(
    app, client, free, free_browser
):
    response = submit(free_browser, "/dashboard/plan/voucher", {"code": mint(app, Plan.PRO, 30)})
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/plan"
    page = text_of(free_browser.get("/dashboard/plan"))
    assert "Freebies is now on the Pro plan" in page
    assert "<strong>Pro</strong> plan." in page
    assert 'data-testid="plan-expiry"' in page and "The voucher period ends on" in page
    listed = client.get("/organizations", headers=free.headers()).get_json()["results"]
    assert listed[0]["organization"]["plan"] == "PRO"
    assert listed[0]["organization"]["plan_expires_at"] is not None
    # The tier gate opens at once.
    created = client.post("/integrations", json={"name": "k"}, headers=free.headers())
    assert created.status_code == 201


def test_a_voucher_redeemed_twice_is_a_409_message(app, free_browser):
    code = mint(app)
    other = make_staff(app, "gina@example.test", Plan.FREE, "Globex")
    assert submit(free_browser, "/dashboard/plan/voucher", {"code": code}).status_code == 303
    response = submit(browser_for(app, other.token), "/dashboard/plan/voucher", {"code": code})
    assert response.status_code == 409
    page = text_of(response)
    assert "This voucher has already been redeemed" in page
    assert 'data-testid="form-error"' in page and f'value="{code}"' in page


def test_a_voucher_for_an_organization_already_on_a_paid_plan_is_a_409_message(app, browser):
    response = submit(browser, "/dashboard/plan/voucher", {"code": mint(app)})
    assert response.status_code == 409
    assert "Acme is already on a paid plan" in text_of(response)


def test_an_unknown_voucher_is_a_404_message_on_the_page(free_browser):
    response = submit(free_browser, "/dashboard/plan/voucher", {"code": "vv_nope"})
    assert response.status_code == 404
    page = text_of(response)
    assert "No such voucher code" in page and 'value="vv_nope"' in page
    assert "<h1>Plan</h1>" in page


def test_an_empty_voucher_re_renders_the_form_with_the_message(free_browser):
    response = submit(free_browser, "/dashboard/plan/voucher", {"code": "  "})
    assert response.status_code == 400
    assert "code" in text_of(response)


def test_a_lapsed_voucher_period_reads_as_free_with_when_it_ended(app, free, free_browser):
    submit(free_browser, "/dashboard/plan/voucher", {"code": mint(app, Plan.PREMIUM_PLUS, 5)})
    assert "<strong>Premium+</strong> plan." in text_of(free_browser.get("/dashboard/plan"))
    with app.app_context():  # the period ran out an hour ago (sessions last hours, not days)
        organization = db.session.get(Organization, uuid.UUID(free.organization_id))
        organization.plan_expires_at = clock.now() - timedelta(hours=1)
        db.session.commit()
        db.session.remove()
    page = text_of(free_browser.get("/dashboard/plan"))
    assert "<strong>Free</strong> plan." in page
    assert "The Premium+ voucher period ended on" in page


def test_the_page_and_vouchers_exchange_share_one_throttle_per_ip(app, make_app, free):
    throttled = make_app(VOUCHER_EXCHANGE_LIMIT="2/minute")
    browser = browser_for(throttled, free.token)
    api = throttled.test_client()

    def from_api() -> int:
        return api.post(
            "/vouchers/exchange", json={"code": "vv_guess"}, headers=free.headers()
        ).status_code

    assert from_api() == 404
    assert submit(browser, "/dashboard/plan/voucher", {"code": "vv_guess"}).status_code == 404
    # The budget of two is spent, whichever way the next guess comes.
    page = submit(browser, "/dashboard/plan/voucher", {"code": "vv_guess"})
    assert page.status_code == 429
    assert int(page.headers["Retry-After"]) > 0
    assert page.headers["Content-Type"].startswith("text/html")
    assert "Too many voucher attempts" in text_of(page)
    assert "Wait" in text_of(page) and "/dashboard/plan" in text_of(page)
    assert from_api() == 429
    # Another client IP has its own budget on the page too.
    other_ip = submit(
        browser,
        "/dashboard/plan/voucher",
        {"code": "vv_guess"},
        environ_base={"REMOTE_ADDR": "10.9.8.7"},
    )
    assert other_ip.status_code == 404


def test_page_guesses_spend_the_budget_of_the_json_endpoint(make_app, free):
    throttled = make_app(VOUCHER_EXCHANGE_LIMIT="2/minute")
    browser = browser_for(throttled, free.token)
    for _ in range(2):
        assert submit(browser, "/dashboard/plan/voucher", {"code": "vv_x"}).status_code == 404
    response = throttled.test_client().post(
        "/vouchers/exchange", json={"code": "vv_x"}, headers=free.headers()
    )
    assert response.status_code == 429
    assert response.get_json()["code"] == "RATE_LIMITED"


# -- billing ---------------------------------------------------------------------------------


def test_without_billing_a_checkout_says_billing_is_not_set_up_with_503(free_browser):
    response = submit(free_browser, "/dashboard/plan/checkout", {"plan": "PRO"})
    assert response.status_code == 503
    page = text_of(response)
    assert "Billing is not set up on this deployment" in page
    assert "Vouchers still work" in page
    assert submit(free_browser, "/dashboard/plan/portal").status_code == 503


@pytest.fixture
def billed(make_app) -> Flask:
    return make_app(BILLING_PROVIDER="fake")


def test_buying_a_plan_hands_the_browser_to_the_processors_checkout(app, billed, free):
    browser = browser_for(billed, free.token)
    page = text_of(browser.get("/dashboard/plan"))
    assert "Buy Pro" in page and "Buy Premium+" in page and "Manage billing" not in page
    response = submit(browser, "/dashboard/plan/checkout", {"plan": "PREMIUM_PLUS"})
    assert response.status_code == 303
    assert response.headers["Location"].startswith("https://billing.invalid/checkout/cs_")
    checkout = billed.extensions["billing"].checkouts[-1]
    assert checkout["plan"] == "PREMIUM_PLUS"
    assert checkout["success_url"] == "https://verity.test/dashboard/plan"
    assert organization_of(app, free).billing_customer_id == checkout["customer"]
    assert "Manage billing" in text_of(browser.get("/dashboard/plan"))
    portal = submit(browser, "/dashboard/plan/portal")
    assert portal.status_code == 303
    assert portal.headers["Location"].startswith("https://billing.invalid/portal/")


def test_the_plan_page_lets_its_forms_hand_over_to_the_processor_and_nowhere_else(
    billed, free, free_browser
):
    csp = browser_for(billed, free.token).get("/dashboard/plan").headers["Content-Security-Policy"]
    assert "form-action 'self' https://billing.invalid;" in csp
    elsewhere = free_browser.get("/dashboard/plan").headers["Content-Security-Policy"]
    assert "form-action 'self';" in elsewhere


def test_htmx_is_told_to_navigate_to_the_checkout(billed, free):
    browser = browser_for(billed, free.token)
    response = submit(
        browser, "/dashboard/plan/checkout", {"plan": "PRO"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 204
    assert response.headers["HX-Redirect"].startswith("https://billing.invalid/checkout/")


def test_an_unknown_plan_re_renders_the_page_with_400(billed, free):
    browser = browser_for(billed, free.token)
    response = submit(browser, "/dashboard/plan/checkout", {"plan": "FREE"})
    assert response.status_code == 400
    assert "plan" in text_of(response)


def test_checkout_when_already_paid_is_a_409_message(billed, owner):
    response = submit(browser_for(billed, owner.token), "/dashboard/plan/checkout", {"plan": "PRO"})
    assert response.status_code == 409
    assert "Acme is already on a paid plan" in text_of(response)


def test_the_portal_without_a_billing_account_is_a_409_message(billed, free):
    response = submit(browser_for(billed, free.token), "/dashboard/plan/portal")
    assert response.status_code == 409
    assert "Freebies has no billing account yet" in text_of(response)


def test_a_processor_failure_is_a_502_message(app, billed, free):
    billed.extensions["billing"].fail_next = True
    response = submit(browser_for(billed, free.token), "/dashboard/plan/checkout", {"plan": "PRO"})
    assert response.status_code == 502
    assert "The payment processor failed" in text_of(response)
    assert organization_of(app, free).billing_customer_id is None
