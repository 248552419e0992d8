"""The person's page in a real browser: Debian's Chromium, driven by Playwright, against a real
HTTP server. It sees the QR code, watches the outcome arrive without a reload, reports no CSP
violation, and axe-core finds no serious accessibility problem. Screenshots (phone and desktop)
are kept under test-output/screenshots/ for people to look at.

Chromium comes from Debian (``apt-get install chromium``), never from a browser download.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from factories import make_staff, make_verification
from flask import Flask
from flask.testing import FlaskClient
from wallets import Issuer, node_presentation, post_response, read_request
from werkzeug.serving import make_server

from app import clock

BROWSER_DIR = Path(__file__).resolve().parent
SCREENSHOTS = BROWSER_DIR.parents[1] / "test-output" / "screenshots"
AXE = BROWSER_DIR / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
RETURN_URL = "https://acme.test/welcome-back"
# Seconds: the page polls every 2 s, so an outcome shows within a few.
OUTCOME_TIMEOUT_MS = 10_000
# Recorded from the first script the page runs; an init script is not subject to the CSP.
RECORD_CSP_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + event.blockedURI);
});
"""
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map((n) => n.target.join(" "))}));
}"""


def chromium() -> str:
    """Debian's Chromium; its absence is a failure, not a skip, so it cannot go unnoticed."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(
            "The browser tests need Debian's chromium: run `apt-get install -y chromium` "
            "(never a browser download such as `playwright install`)"
        )
    return path


def axe_script() -> Path:
    """axe-core from npm, installed from tests/browser's lock file on first use."""
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed to install axe-core for the browser tests")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=BROWSER_DIR,
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=300,
        )
    return AXE


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("The browser tests need the playwright package: pip install playwright")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium(), args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        launched.close()


class Delegate:
    """A WSGI app to bind the server to before the real app exists (it needs the port)."""

    app: Flask | None = None

    def __call__(self, environ, start_response):
        assert self.app is not None
        return self.app(environ, start_response)


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
    server = make_server("127.0.0.1", 0, delegate, threaded=True)
    base = f"http://127.0.0.1:{server.server_port}"
    delegate.app = make_app(PUBLIC_URL=base)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Served(base, delegate.app)
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture
def verification_id(app: Flask, client: FlaskClient) -> str:
    return make_verification(client, make_staff(app), return_url=RETURN_URL)["id"]


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def watched_page(browser, viewport: dict, problems: list[str]):
    """A page that records console CSP reports and script errors into ``problems``."""
    context = browser.new_context(viewport=viewport)
    context.add_init_script(RECORD_CSP_VIOLATIONS)
    page = context.new_page()
    page.on(
        "console",
        lambda message: (
            problems.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    return page


def assert_clean(page, problems: list[str]) -> None:
    assert problems == []
    assert page.evaluate("window.__cspViolations") == []


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
    expect(page.locator("#status")).to_contain_text("nonce")
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


def serious_violations(browser, url: str, **context_options) -> list[dict]:
    """axe-core's serious and critical findings; only this context bypasses the CSP."""
    context = browser.new_context(bypass_csp=True, **context_options)
    page = context.new_page()
    page.goto(url)
    page.add_script_tag(path=str(axe_script()))
    violations = page.evaluate(AXE_RUN)
    context.close()
    return [v for v in violations if v["impact"] in ("serious", "critical")]


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
