"""The person's page and the credential offer page in each of the nine languages, in Debian's
Chromium through Playwright.

For every language the switcher is chosen, and the choice holds across a reload and carries to
the offer page; axe-core finds no serious problem; a phone (390x844) never scrolls sideways, the
place where long German compounds and right-to-left Arabic go wrong first; the offer page's
headings are its catalog's and its times are in the person's zone; and on a 1366x768 laptop
the whole QR code is above the fold. One browser page walks all of it. Screenshots per language
land in test-output/screenshots/ (``language-*.png``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
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
from factories import Staff, make_apikey, make_staff, make_verification
from flask import Flask
from flask_babel import force_locale, gettext

from app.web.language import LANGUAGES, direction

LAPTOP = {"width": 1366, "height": 768}
# German first: its compounds are the widest words; Arabic is the one right-to-left language.
ORDER = ["de", "ar", *(code for code in LANGUAGES if code not in ("de", "ar"))]
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= window.innerWidth"
# The offer page's headings, in the order the page shows them (English, the catalogs' keys).
# The wallet's ways first, so the QR code lies above the fold on a laptop; the status after.
OFFER_HEADINGS = [
    "%(organization)s offers you a credential",
    "With a wallet on this device",
    "With a wallet on another device",
    "Status",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@dataclass
class Pages:
    """A person's page and a credential offer page of one organization, on a loopback server."""

    app: Flask
    person: str
    offer: str

    def offer_headings(self, code: str) -> list[str]:
        """The offer page's headings as the ``code`` catalog words them."""
        with self.app.test_request_context(), force_locale(code):
            return [gettext(text, organization="Acme") for text in OFFER_HEADINGS]


@pytest.fixture
def pages(make_app) -> Iterator[Pages]:
    """The person's page, its purpose long enough to wrap, and an offer of a credential whose
    name is a long German compound, on a real loopback server."""
    delegate = Delegate()
    with loopback_server(delegate) as base:
        app = delegate.app = make_app(PUBLIC_URL=base)
        client = app.test_client()
        owner = make_staff(app)
        verification = make_verification(
            client,
            owner,
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
        yield Pages(app, f"{base}/i/{individual['id']}", offer_page(app, owner))


def offer_page(app: Flask, owner: Staff) -> str:
    """An offer waiting for a wallet, with a code, so every part of the offer page shows."""
    client = app.test_client()
    recipient = client.post(
        "/recipients",
        json={"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"},
        headers={"apikey": make_apikey(app, owner.organization_id)},
    ).get_json()["id"]
    schema = client.post(
        "/schemas",
        json={
            "name": "Krankenpflegefachkraftberufsausweis",
            "vct": "https://acme.test/nurse",
            "attributes": [{"name": "licence_number", "type": "TEXT"}],
        },
        headers=owner.headers(),
    ).get_json()["id"]
    assert client.post(f"/schemas/{schema}/publish", headers=owner.headers()).status_code == 200
    credential = client.post(
        "/credentials",
        json={
            "name": "Krankenpflegefachkraftberufsausweisbestätigung",
            "description": "Registrierte Pflegefachkraft, Universitätskrankenhausverwaltung",
            "schema_id": schema,
            "recipient_id": recipient,
            "claims": [{"name": "licence_number", "value": "RN-1234"}],
            "tx_code": True,
        },
        headers=owner.headers(),
    )
    assert credential.status_code == 201, credential.get_json()
    return credential.get_json()["offer_page"]


def choose(page: Any, code: str) -> None:
    """Open the switcher and pick ``code``, as a person would."""
    page.locator("#language-switcher").click()
    page.locator(f"details.languages a[hreflang={code}]").click()
    page.wait_for_load_state()


def test_every_language_reads_well_on_a_phone_and_a_laptop(browser, pages):
    from playwright.sync_api import expect

    problems: list[str] = []
    findings: dict[str, list] = {}
    page = watched_page(browser, PHONE, problems, locale="en-GB", timezone_id="Europe/Berlin")
    page.goto(pages.person)
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

        # The offer page on the phone, in the language chosen on the person's page.
        page.set_viewport_size(PHONE)
        page.goto(pages.offer)
        assert page.get_attribute("html", "lang") == code
        assert page.get_attribute("html", "dir") == direction(code)
        page.locator("#wallet svg[role=img]").wait_for()
        headings = pages.offer_headings(code)
        assert page.locator("main h1, main h2").all_inner_texts() == headings
        if code != "en":
            assert headings != pages.offer_headings("en"), f"{code}: the catalog is English"
        # The offer's end, written in UTC by the server, is rewritten in the person's zone.
        expect(page.locator("time.local-time")).not_to_have_text(re.compile("UTC$"))
        assert page.evaluate(NO_SIDEWAYS_SCROLL), f"{code}: the offer page scrolls sideways"
        screenshot(page, f"language-{code}-offer-phone")
        findings[f"{code}-offer-phone"] = axe_findings(page)
        page.goto(pages.person)
    assert {name: found for name, found in findings.items() if found} == {}
    assert_clean(page, problems)
    page.context.close()
