"""The person's page in a real browser: Debian's Chromium, driven by Playwright, against a real
HTTP server. It sees the QR code, watches the outcome arrive without a reload, reports no CSP
violation, and axe-core finds no serious accessibility problem. Screenshots (phone and desktop)
are kept under test-output/screenshots/ for people to look at.

Chromium comes from Debian (``apt-get install chromium``), never from a browser download.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from browser_support import (
    DESKTOP,
    PHONE,
    Delegate,
    assert_clean,
    launched_chromium,
    loopback_server,
    read_qr_code,
    screenshot,
    serious_violations,
    watched_page,
)
from factories import make_staff, make_verification
from flask import Flask
from flask.testing import FlaskClient
from wallets import Issuer, node_presentation, post_response, read_request

from app import clock

RETURN_URL = "https://acme.test/welcome-back"
# Seconds: the page polls every 2 s, so an outcome shows within a few.
OUTCOME_TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@dataclass
class Served:
    base: str
    app: Flask
    client: FlaskClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = self.app.test_client()

    def open_individual(self, verification_id: str, customer_id: str) -> str:
        """The person's page address for a new individual."""
        individual = self.client.post(
            "/verifications/individuals",
            json={"customer_id": customer_id, "verification_id": verification_id},
        ).get_json()
        return f"{self.base}/i/{individual['id']}"

    def wallet_link(self, page_url: str) -> str:
        """The link behind the page's "Open in your wallet app" button, as the server renders it."""
        page = self.client.get(page_url.removeprefix(self.base)).get_data(as_text=True)
        match = re.search(r'id="open-wallet"[^>]*href="([^"]+)"', page)
        assert match, "the page has no wallet link"
        return html.unescape(match.group(1))

    def present(self, connection_url: str, *, good: bool = True) -> dict:
        """The test wallet answers the page's link, as a phone that scanned the QR code would."""
        request = read_request(self.client, connection_url)
        presentation = node_presentation(request, Issuer(), nonce=None if good else "stale")
        response = post_response(self.client, request, presentation)
        assert response.status_code == 200, response.get_json()
        return response.get_json()


@pytest.fixture
def served(make_app) -> Iterator[Served]:
    """The app on a real loopback HTTP server, its links naming that server."""
    delegate = Delegate()
    with loopback_server(delegate) as base:
        delegate.app = make_app(PUBLIC_URL=base)
        yield Served(base, delegate.app)


@pytest.fixture
def verification_id(app: Flask, client: FlaskClient) -> str:
    return make_verification(client, make_staff(app), return_url=RETURN_URL)["id"]


def test_the_outcome_arrives_on_the_open_page_without_a_reload(browser, served, verification_id):
    from playwright.sync_api import expect

    problems: list[str] = []
    page = watched_page(browser, PHONE, problems)
    page.goto(served.open_individual(verification_id, "crm-phone"))
    expect(page.locator("#connect svg[role=img]")).to_be_visible()
    expect(page.locator("#open-wallet")).to_be_visible()
    expect(page.locator("#status")).to_contain_text("Waiting for your wallet")
    screenshot(page, "person-page-phone-waiting")
    page.evaluate("window.__sameDocument = true")

    answer = served.present(page.get_attribute("#open-wallet", "href"))

    expect(page.locator("#status")).to_contain_text("Verified.", timeout=OUTCOME_TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
    expect(page.locator("#connect svg")).to_have_count(0)
    screenshot(page, "person-page-phone-verified")
    assert_clean(page, problems)

    page.goto(answer["redirect_uri"])
    expect(page.get_by_role("heading", name="You are verified")).to_be_visible()
    expect(page.get_by_role("button", name="Continue to Acme")).to_have_attribute(
        "href", RETURN_URL
    )
    screenshot(page, "person-result-phone")
    assert_clean(page, problems)
    page.context.close()


def test_a_laptop_screen_shows_a_qr_code_a_phone_can_read(browser, served, verification_id):
    """The unsigned request travels by value, so its QR code is dense: read it back, as a phone
    camera app would, from a 1366x768 screen at 100 % scaling (one device pixel per CSS pixel).

    zxing-cpp is the decoder behind many phone scanner apps; a screenshot is a kinder picture
    than a camera's, so the page draws each module at 3 CSS px or more (see the README).
    """
    page = browser.new_page(viewport={"width": 1366, "height": 768}, device_scale_factor=1)
    page.goto(served.open_individual(verification_id, "crm-laptop"))
    link = page.get_attribute("#open-wallet", "href")
    assert "dcql_query=" in link, "an unsigned request travels by value"
    drawing = page.locator("#connect svg[role=img]")
    assert read_qr_code(drawing.screenshot()) == [link]
    modules = int(drawing.evaluate("svg => svg.viewBox.baseVal.width"))
    assert drawing.bounding_box()["width"] / modules >= 3, "modules too small for a camera"
    page.context.close()


def test_a_failure_shows_on_the_desktop_page_with_its_reason(browser, served, verification_id):
    from playwright.sync_api import expect

    problems: list[str] = []
    page = watched_page(browser, DESKTOP, problems)
    page.goto(served.open_individual(verification_id, "crm-desktop"))
    expect(page.locator("#connect svg[role=img]")).to_be_visible()
    screenshot(page, "person-page-desktop-waiting")
    page.evaluate("window.__sameDocument = true")

    served.present(page.get_attribute("#open-wallet", "href"), good=False)

    expect(page.locator("#status")).to_contain_text("Not verified.", timeout=OUTCOME_TIMEOUT_MS)
    # Plain words for the person; the technical reason (a stale nonce) is the organization's.
    expect(page.locator("#status")).to_contain_text("This credential could not be checked")
    expect(page.locator("#status")).not_to_contain_text("nonce")
    expect(page.get_by_role("link", name="Try again")).to_be_visible()
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
    screenshot(page, "person-page-desktop-failed")
    assert_clean(page, problems)
    page.context.close()


def test_a_fresh_code_replaces_the_old_one_on_the_open_page(browser, served, verification_id):
    from playwright.sync_api import expect

    problems: list[str] = []
    page = watched_page(browser, PHONE, problems)
    page.goto(served.open_individual(verification_id, "crm-window"))
    first = page.get_attribute("#open-wallet", "href")
    dc_button_shown = page.locator("#dc-api").is_visible()
    page.evaluate("window.__sameDocument = true")

    moment = clock.now() + timedelta(minutes=3)
    clock.set_source(lambda: moment)

    expect(page.locator("#open-wallet")).not_to_have_attribute(
        "href", first, timeout=OUTCOME_TIMEOUT_MS
    )
    expect(page.locator("#connect svg[role=img]")).to_be_visible()
    # The replaced section's browser-wallet button is offered again where the browser can.
    assert page.locator("#dc-api").is_visible() == dc_button_shown
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
    # The fresh link works (back on the real clock, which the wallet's key binding uses): the
    # page follows it to the outcome.
    clock.set_source(None)
    served.present(page.get_attribute("#open-wallet", "href"))
    expect(page.locator("#status")).to_contain_text("Verified.", timeout=OUTCOME_TIMEOUT_MS)
    assert_clean(page, problems)
    page.context.close()


@pytest.mark.parametrize(
    "options",
    [
        {"viewport": PHONE},
        {"viewport": DESKTOP},
        {"viewport": PHONE, "color_scheme": "dark"},
    ],
    ids=["phone", "desktop", "phone-dark"],
)
def test_axe_finds_no_serious_violations(browser, served, verification_id, options):
    waiting = served.open_individual(verification_id, "crm-axe-waiting")
    answered = served.open_individual(verification_id, "crm-axe-answered")
    answer = served.present(served.wallet_link(answered))
    pages = [
        waiting,
        answered,
        answer["redirect_uri"],
        f"{answered}?response_code=wrong",
        f"{served.base}/i/00000000-0000-0000-0000-000000000000",
    ]
    for url in pages:
        assert serious_violations(browser, url, **options) == [], url
