"""The person's page in each of its nine languages, in Debian's Chromium through Playwright.

For every language the switcher is chosen, and the choice holds across a reload; axe-core finds
no serious problem; a phone (390x844) never scrolls sideways, the place where long German
compounds and right-to-left Arabic go wrong first; and on a 1366x768 laptop the whole QR code is
above the fold. Screenshots per language land in test-output/screenshots/ (``language-*.png``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    PHONE,
    Delegate,
    assert_clean,
    axe_findings,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from factories import make_staff, make_verification

from app.web.language import LANGUAGES, direction

LAPTOP = {"width": 1366, "height": 768}
# German first: its compounds are the widest words; Arabic is the one right-to-left language.
ORDER = ["de", "ar", *(code for code in LANGUAGES if code not in ("de", "ar"))]
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def page_url(make_app) -> Iterator[str]:
    """A person's page on a real loopback server, its purpose long enough to wrap."""
    delegate = Delegate()
    with loopback_server(delegate) as base:
        app = delegate.app = make_app(PUBLIC_URL=base)
        client = app.test_client()
        verification = make_verification(
            client,
            make_staff(app),
            description="To confirm that you are old enough to open an account",
            description_translations={
                "de": "Zur Bestätigung Ihrer Volljährigkeit vor der Kontoeröffnungsbestätigung",
                "ar": "للتأكد من أنك بلغت السن المطلوبة لفتح حساب",
            },
        )
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-languages", "verification_id": verification["id"]},
        ).get_json()
        yield f"{base}/i/{individual['id']}"


def choose(page: Any, code: str) -> None:
    """Open the switcher and pick ``code``, as a person would."""
    page.locator("#language-switcher").click()
    page.locator(f"details.languages a[hreflang={code}]").click()
    page.wait_for_load_state()


def test_every_language_reads_well_on_a_phone_and_a_laptop(browser, page_url):
    problems: list[str] = []
    findings: dict[str, list] = {}
    page = watched_page(browser, PHONE, problems, locale="en-GB")
    page.goto(page_url)
    assert page.get_attribute("html", "lang") == "en"
    for code in ORDER:
        page.set_viewport_size(PHONE)
        choose(page, code)
        page.reload()  # the choice is remembered, not carried by the address
        assert page.get_attribute("html", "lang") == code
        assert page.get_attribute("html", "dir") == direction(code)
        assert page.locator("#language-switcher").inner_text().endswith(LANGUAGES[code])
        assert page.evaluate(NO_SIDEWAYS_SCROLL), f"{code}: the phone page scrolls sideways"
        screenshot(page, f"language-{code}-phone")
        findings[f"{code}-phone"] = axe_findings(page)

        page.set_viewport_size(LAPTOP)
        qr = page.locator("#connect svg[role=img]")
        qr.wait_for()
        box = qr.bounding_box()
        assert box is not None and box["y"] >= 0
        assert box["y"] + box["height"] <= LAPTOP["height"], f"{code}: the QR code is cut off"
        assert page.evaluate(NO_SIDEWAYS_SCROLL), f"{code}: the laptop page scrolls sideways"
        screenshot(page, f"language-{code}-laptop")
        findings[f"{code}-laptop"] = axe_findings(page)
    assert {name: found for name, found in findings.items() if found} == {}
    assert_clean(page, problems)
    page.context.close()
