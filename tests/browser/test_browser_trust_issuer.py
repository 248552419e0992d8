"""Trusting the issuer people present, from the dashboard, in Debian's Chromium: the first
presentation over DIDComm is refused as untrusted, the verification's page lists its issuer
(a long-form did:prism) with the refusal counted, "Trust this issuer" is pressed, and the next
person's credential, naming the issuer by its short form, is VERIFIED with no file or setting
changed (the long form the first presentation showed was pinned for the organization).

The holder is the messaging-layer one (tests/didcomm/inbox_holder.py), whose did:peer:2 names
a loopback inbox, so Verity's messages reach it with no mediator.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    DESKTOP,
    Delegate,
    assert_clean,
    axe_findings,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from didcomm.inbox_holder import Holder
from didcomm.test_issuers_seen import OTHER_ISSUER, Flow, prism_credential, short
from test_browser_layout import sign_in

from app.didcomm import prism


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


def test_the_issuer_of_a_first_presentation_is_trusted_from_the_dashboard(browser, make_app):
    from playwright.sync_api import expect

    issuer = prism.make()
    holder = Holder.start()
    delegate = Delegate()
    problems: list[str] = []
    try:
        with loopback_server(delegate) as base:
            app = delegate.app = make_app(PUBLIC_URL=base, TRUST_ALLOW_PRIVATE=True)
            flow = Flow(app, holder, [OTHER_ISSUER])
            first = flow.present(
                lambda did: prism_credential(
                    issuer, did, iss=issuer.did, kid=f"{issuer.did}#issuing-0"
                )
            )
            assert first["status"] == "FAILED", first

            page = watched_page(browser, DESKTOP, problems)
            sign_in(page, base, flow.staff.token)
            page.goto(f"{base}/dashboard/verifications/{flow.verification['id']}")
            table = page.get_by_test_id("issuers-seen")
            row = table.locator("tbody tr").filter(has_text=short(issuer.did))
            expect(row).to_have_count(1)
            expect(row.locator("td[data-label='Presentations']")).to_have_text("1")
            expect(row.locator("td[data-label='Refused as untrusted']")).to_have_text("1")
            expect(row).to_contain_text("Keys shown in a presentation")
            screenshot(page, "trust-issuer-before")
            assert axe_findings(page) == []
            row.get_by_role("button", name="Trust this issuer").click()
            expect(page.get_by_text(f"{short(issuer.did)} is now trusted")).to_be_visible()
            expect(row.locator("td[data-label='Trust']")).to_have_text("Trusted")
            expect(page.get_by_role("button", name="Trust this issuer")).to_have_count(0)
            screenshot(page, "trust-issuer-after")
            assert_clean(page, problems)
            page.context.close()

            second = flow.present(
                lambda did: prism_credential(
                    issuer, did, iss=short(issuer.did), kid=f"{short(issuer.did)}#issuing-0"
                )
            )
            assert (second["status"], second["validation_error"]) == ("VERIFIED", None)
    finally:
        holder.server.stop()
