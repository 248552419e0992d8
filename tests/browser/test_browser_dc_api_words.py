"""What the person reads after sharing through the browser's Digital Credentials API, in
Debian's Chromium: plain words, never the protocol's. The browser's wallet is played by an init
script (Chromium has no wallet here); what it answers goes to the real service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    DESKTOP,
    Delegate,
    assert_clean,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from factories import make_staff, make_verification

# A browser with the API whose wallet answers ``answer`` (the DigitalCredential's data).
WALLET = """
window.DigitalCredential = function () {};
Object.defineProperty(navigator.credentials, "get", {
  value: async () => ({ data: %s }),
});
"""
OUTCOME_TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def person_page(make_app) -> Iterator[str]:
    """The address of a fresh individual's page, on the app served on loopback. The wallet
    stand-in answers in the clear, so the page offers plain ``dc_api`` answers (an encrypted
    ``dc_api.jwt`` request would refuse them before any check)."""
    delegate = Delegate()
    with loopback_server(delegate) as url:
        delegate.app = make_app(PUBLIC_URL=url, DC_API_RESPONSE_MODE="dc_api")
        client = delegate.app.test_client()
        verification = make_verification(client, make_staff(delegate.app))
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-dc", "verification_id": verification["id"]},
        ).get_json()
        yield f"{url}/i/{individual['id']}"


def shared(browser, person_page: str, answer: dict, problems: list[str]) -> Any:
    page = watched_page(browser, DESKTOP, problems)
    page.context.add_init_script(WALLET % json.dumps(answer))
    page.goto(person_page)
    page.locator("#dc-api").click()
    return page


def test_a_refused_answer_is_told_in_plain_words(browser, person_page):
    from playwright.sync_api import expect

    problems: list[str] = []
    # The service refuses this answer (400: vp_token has no 'credential' entry).
    page = shared(browser, person_page, {"vp_token": {"other": ["x"]}}, problems)
    message = page.locator("#dc-api-message")
    expect(message).to_contain_text("Sharing through this browser did not work.")
    expect(message).not_to_contain_text("vp_token")
    screenshot(page, "person-page-dc-api-refused")
    assert_clean(page, problems)
    page.context.close()


def test_a_failed_presentation_is_told_in_plain_words(browser, person_page):
    from playwright.sync_api import expect

    problems: list[str] = []
    page = shared(
        browser, person_page, {"vp_token": {"credential": ["not-a-credential"]}}, problems
    )
    expect(page.locator("#dc-api-message")).to_contain_text("Your wallet answered.")
    status = page.locator("#status")
    expect(status).to_contain_text("Not verified.", timeout=OUTCOME_TIMEOUT_MS)
    expect(status).to_contain_text("This credential could not be checked")
    expect(status).not_to_contain_text("SD-JWT")
    assert_clean(page, problems)
    page.context.close()


@pytest.fixture
def zk_person_page(make_app) -> Iterator[tuple[str, Any]]:
    """A person's page of a zero-knowledge age check, and the app serving it (its job queue
    is this process's: the test plays the job worker)."""
    from app.zk import available

    if not available():
        pytest.skip("needs the zk extra")
    delegate = Delegate()
    with loopback_server(delegate) as url:
        delegate.app = make_app(PUBLIC_URL=url, DC_API_RESPONSE_MODE="dc_api")
        client = delegate.app.test_client()
        verification = make_verification(
            client,
            make_staff(delegate.app),
            schema_id="5c4a3f3e-0b1d-4c7e-9a51-000000000004",
            claims=["age_over_18"],
            attributes=[],
            zk=True,
        )
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-zk", "verification_id": verification["id"]},
        ).get_json()
        yield f"{url}/i/{individual['id']}", delegate.app


def test_a_zk_answer_is_told_being_checked_then_its_outcome(browser, zk_person_page):
    from playwright.sync_api import expect

    from app.jobs.queue import queue_of

    url, app = zk_person_page
    problems: list[str] = []
    page = shared(browser, url, {"vp_token": {"credential": ["oA"]}}, problems)
    # Kept for its check (202): the person is told so, and the poll waits.
    expect(page.locator("#dc-api-message")).to_contain_text("Its proof is being checked")
    expect(page.locator("#status")).to_contain_text("Waiting for your wallet.")
    queue_of(app).run_pending()  # the job worker decides it
    status = page.locator("#status")
    expect(status).to_contain_text("Not verified.", timeout=OUTCOME_TIMEOUT_MS)
    assert_clean(page, problems)
    page.context.close()
