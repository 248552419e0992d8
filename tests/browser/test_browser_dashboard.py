"""The staff dashboard in a real browser (Debian's Chromium through Playwright) against the app
on a real loopback server and a real OpenID Connect provider (npm oidc-provider).

One member of staff does their first day's work: signs in, creates an organization, gets a paid
plan with a voucher the operator minted, creates a verification with two conditions, creates an
integration key and uses it against the JSON API, switches organizations and signs out. Every page
is screenshotted (test-output/screenshots/dashboard-*.png) and checked by axe-core.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from browser_support import (
    DESKTOP,
    PHONE,
    Delegate,
    assert_clean,
    axe_findings,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from factories import PID_SCHEMA_ID, make_apikey, make_staff, make_verification
from flask import Flask
from support.oidc import OidcProvider
from trust_sources.sources_support import make_party
from wallets import Issuer, node_presentation, post_response, read_request

from app.jobs.queue import queue_of

pytestmark = pytest.mark.oidc

TIMEOUT = 10
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@dataclass
class Deployment:
    base: str
    app: Flask

    def mint_voucher(self, plan: str = "PRO") -> str:
        """What an operator does on the server: ``flask vouchers mint``."""
        result = self.app.test_cli_runner().invoke(
            args=["vouchers", "mint", "--plan", plan, "--days", "30"]
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["codes"][0]


@pytest.fixture
def deployment(make_app) -> Iterator[Deployment]:
    """The app on a loopback server, signing staff in through a real provider."""
    delegate = Delegate()
    with (
        loopback_server(delegate) as base,
        OidcProvider(redirect_uris=[f"{base}/auth/callback"]) as idp,
    ):
        delegate.app = make_app(
            PUBLIC_URL=base,
            OIDC_ISSUER=idp.issuer,
            OIDC_CLIENT_ID=idp.client_id,
            OIDC_CLIENT_SECRET=idp.client_secret,
        )
        yield Deployment(base, delegate.app)


class Staff:
    """A person at the dashboard: a browser page, and everything it saw checked as it goes."""

    def __init__(self, browser: Any, deployment: Deployment, viewport: dict) -> None:
        self.problems: list[str] = []
        self.page = watched_page(browser, viewport, self.problems)
        self.base = deployment.base
        self.findings: dict[str, list[dict]] = {}

    def look(self, name: str) -> None:
        """Screenshot the page and keep axe-core's serious findings on it."""
        screenshot(self.page, f"dashboard-{name}")
        self.findings[name] = axe_findings(self.page)

    def sign_in(self, login: str) -> None:
        from playwright.sync_api import expect

        page = self.page
        page.goto(f"{self.base}/dashboard/")
        expect(page.get_by_role("heading", name="Sign in to Verity")).to_be_visible()
        self.look("sign-in")
        page.get_by_role("button", name="Sign in with your organization's account").click()
        # The provider's own pages: its development login form, then consent.
        page.locator("input[name=login]").fill(login)
        page.locator("input[name=password]").fill("any-password")
        page.locator("button[type=submit]").click()
        while not page.url.startswith(self.base):
            page.locator("button[type=submit]").first.click()
            page.wait_for_load_state()

    def section(self, name: str) -> None:
        """Follow the navigation to a section."""
        nav = self.page.get_by_role("navigation", name="Sections")
        nav.get_by_role("link", name=name, exact=True).click()

    def sign_out(self) -> None:
        self.page.get_by_role("button", name="Sign out").click()


def test_a_first_day_at_the_dashboard(browser, deployment):
    from playwright.sync_api import expect

    staff = Staff(browser, deployment, DESKTOP)
    page, base = staff.page, deployment.base

    staff.sign_in("olivia")
    expect(page.get_by_role("heading", name="Welcome")).to_be_visible()
    staff.look("welcome")

    # An organization of her own: new ones are FREE, and it becomes the acting one.
    page.get_by_role("button", name="Create or join an organization").click()
    staff.look("organizations-none")
    page.get_by_label("Name").fill("Olivia's Clinic")
    page.get_by_role("button", name="Create organization").click()
    expect(page.get_by_text("you are now acting for it")).to_be_visible()
    staff.look("organizations")

    # A gated action on the Free plan shows what to do, not a raw 402.
    staff.section("Verifications")
    staff.look("verifications-empty")
    page.get_by_role("button", name="New verification").click()
    expect(page.get_by_test_id("upgrade-prompt")).to_be_visible()
    staff.look("upgrade-prompt")

    # The operator minted a voucher on the server; she redeems it.
    staff.section("Plan")
    staff.look("plan-free")
    page.get_by_label("Voucher code").fill(deployment.mint_voucher("PRO"))
    page.get_by_role("button", name="Redeem voucher").click()
    expect(page.get_by_text("is now on the Pro plan")).to_be_visible()
    staff.look("plan-pro")

    # A verification with two conditions, built with the condition builder (htmx at work).
    staff.section("Verifications")
    page.get_by_role("button", name="New verification").click()
    page.get_by_label("Name", exact=True).fill("Adult residents")
    page.get_by_label("Purpose shown to the person").fill("To open your account")
    page.get_by_label("Credential schema").select_option(label="EU Person Identification Data")
    expect(page.get_by_label("given_name")).to_be_visible()
    page.get_by_label("given_name").check()
    page.get_by_role("button", name="Add a condition").click()
    page.get_by_label("Condition 1: attribute").select_option("birthdate")
    page.get_by_label("Operator").first.select_option("AGE_AT_LEAST")
    page.get_by_label("Value").first.fill("18")
    page.get_by_role("button", name="Add a condition").click()
    page.get_by_label("Condition 2: attribute").select_option("address.country")
    page.get_by_label("Operator").nth(1).select_option("IN")
    page.get_by_label("Value").nth(1).fill("DE, FR")
    staff.look("verification-new")
    page.get_by_role("button", name="Create verification").click()
    expect(page.get_by_role("heading", name="Adult residents")).to_be_visible()
    verification_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    staff.look("verification")

    # An integration key, shown once, used from the backend against the JSON API.
    staff.section("Integrations")
    staff.look("integrations-empty")
    page.get_by_label("Name").fill("backend")
    page.get_by_role("button", name="Create integration and show its key").click()
    key = page.locator("#new-key").inner_text().strip()
    assert key.startswith("vk_")
    staff.look("integration-created")
    opened = requests.post(
        f"{base}/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification_id},
        timeout=TIMEOUT,
    )
    assert opened.status_code == 201, opened.text
    lookup = requests.get(
        f"{base}/verifications/{verification_id}/individuals/crm-1",
        headers={"apikey": key},
        timeout=TIMEOUT,
    )
    assert lookup.status_code == 200, lookup.text
    assert lookup.json()["status"] == "CREATED"
    staff.section("Integrations")
    expect(page.locator("main")).not_to_contain_text(key)
    staff.look("integrations")

    page.goto(f"{base}/dashboard/verifications/{verification_id}/individuals")
    expect(page.get_by_text("crm-1")).to_be_visible()
    staff.look("individuals")
    for name in ("Recipients", "Schemas", "Overview"):
        staff.section(name)
        staff.look(name.lower())

    # A second organization, then back to the first with the switcher.
    staff.section("Organizations")
    page.get_by_label("Name").fill("Olivia Labs")
    page.get_by_role("button", name="Create organization").click()
    expect(page.get_by_test_id("acting-organization").or_(page.locator("#organization-switch")))
    page.get_by_label("Acting organization").select_option(label="Olivia's Clinic")
    page.get_by_role("button", name="Switch", exact=True).click()
    staff.section("Overview")
    expect(page.get_by_role("heading", name="Olivia's Clinic")).to_be_visible()
    expect(page.get_by_test_id("count-verifications")).to_have_text("1")
    staff.look("overview-switched")

    staff.sign_out()
    expect(page.get_by_role("heading", name="Sign in to Verity")).to_be_visible()
    page.goto(f"{base}/dashboard/")
    expect(page.get_by_role("heading", name="Sign in to Verity")).to_be_visible()

    assert {name: found for name, found in staff.findings.items() if found} == {}
    assert_clean(page, staff.problems)
    page.context.close()


def test_the_dashboard_is_usable_at_phone_width(browser, deployment):
    from playwright.sync_api import expect

    staff = Staff(browser, deployment, PHONE)
    staff.sign_in("pat")
    expect(staff.page.get_by_role("heading", name="Welcome")).to_be_visible()
    staff.look("phone-welcome")
    width = staff.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the page scrolls sideways on a phone"
    assert staff.findings["phone-welcome"] == []
    staff.page.context.close()


@dataclass
class Furnished:
    """A PRO organization with one of everything, and its owner's session token."""

    token: str
    pages: list[str]


@pytest.fixture
def furnished(deployment) -> Furnished:
    """Records made through the JSON API and a real (failed) presentation from the test wallet,
    so every dashboard page has something to show."""
    app, client = deployment.app, deployment.app.test_client()
    owner = make_staff(app)
    key = make_apikey(app, owner.organization_id)
    verification = make_verification(client, owner)["id"]
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-7", "verification_id": verification},
    ).get_json()["id"]
    link = client.get(f"/verifications/{individual}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    post_response(client, request, node_presentation(request, Issuer(), nonce="stale"))
    recipient = client.post(
        "/recipients",
        json={"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"},
        headers={"apikey": key},
    ).get_json()["id"]
    schema = client.post(
        "/schemas",
        json={
            "name": "Nurse licence",
            "vct": "https://acme.test/nurse",
            "attributes": [{"name": "licence_number", "type": "TEXT"}],
        },
        headers=owner.headers(),
    ).get_json()["id"]
    # A published schema: its page has the "How wallets show it" form instead.
    published = client.post(
        "/schemas",
        json={
            "name": "Staff card",
            "vct": "https://acme.test/staff",
            "attributes": [{"name": "staff_number", "description": "Staff number", "type": "TEXT"}],
        },
        headers=owner.headers(),
    ).get_json()["id"]
    client.post(f"/schemas/{published}/publish", headers=owner.headers())
    integration = client.get("/integrations", headers=owner.headers()).get_json()["results"][0]
    # A list whose first fetch failed (an address the fetcher refuses), so its page shows the
    # error row as staff would meet it.
    trust_source = client.post(
        "/trust/sources",
        json={
            "name": "EU trusted lists",
            "kind": "LIST_OF_TRUSTED_LISTS",
            "url": "https://127.0.0.1:9/eu-lotl.xml",
            "signer_certificates": make_party("LoTL signer").pem,
            "territories": ["DE", "FR"],
        },
        headers=owner.headers(),
    ).get_json()["id"]
    queue_of(app).run_pending()
    pages = [
        "/dashboard/",
        "/dashboard/verifications",
        "/dashboard/verifications/new",
        f"/dashboard/verifications/{verification}",
        f"/dashboard/verifications/{verification}/individuals",
        f"/dashboard/verifications/{verification}/delete",
        "/dashboard/integrations",
        f"/dashboard/integrations/{integration['id']}/delete",
        "/dashboard/recipients",
        f"/dashboard/recipients/{recipient}",
        f"/dashboard/recipients/{recipient}/delete",
        "/dashboard/schemas",
        f"/dashboard/schemas/{schema}",
        f"/dashboard/schemas/{published}",
        f"/dashboard/schemas/{PID_SCHEMA_ID}",
        "/dashboard/trust",
        f"/dashboard/trust/{trust_source}",
        "/dashboard/plan",
        "/dashboard/organizations",
        f"/dashboard/organizations/{owner.organization_id}",
        "/dashboard/no-such-page",
        "/",  # the home page, which points to the dashboard and the docs
    ]
    return Furnished(owner.token, pages)


@pytest.mark.parametrize(
    "options",
    [{"viewport": DESKTOP}, {"viewport": PHONE}, {"viewport": PHONE, "color_scheme": "dark"}],
    ids=["desktop", "phone", "phone-dark"],
)
def test_axe_finds_nothing_serious_on_any_dashboard_page(
    browser, deployment, furnished, options, request
):
    from playwright.sync_api import expect

    problems: list[str] = []
    page = watched_page(browser, options["viewport"], problems, **options_without_viewport(options))
    page.goto(f"{deployment.base}/dashboard/login")
    page.get_by_text("Sign in with a session token").click()
    page.get_by_label("Session token").fill(furnished.token)
    page.get_by_role("button", name="Sign in with the token").click()
    expect(page.get_by_role("heading", name="Acme")).to_be_visible()
    findings, too_wide = {}, []
    for path in furnished.pages:
        page.goto(f"{deployment.base}{path}")
        findings[path] = axe_findings(page)
        slug = re.sub(UUID, "id", path.strip("/")).replace("/", "-") or "home"
        screenshot(page, f"sweep-{request.node.callspec.id}-{slug}")
        if page.evaluate("document.documentElement.scrollWidth") > options["viewport"]["width"]:
            too_wide.append(path)
    assert {path: found for path, found in findings.items() if found} == {}
    assert too_wide == [], "these pages scroll sideways"
    assert_clean(page, problems)
    page.context.close()


def options_without_viewport(options: dict) -> dict:
    return {name: value for name, value in options.items() if name != "viewport"}
