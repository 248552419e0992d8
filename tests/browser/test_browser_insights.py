"""The overview's chart and its table, the individuals' filters and export, and the Audit page
in Debian's Chromium, at desktop and phone sizes: axe-core finds nothing serious, the Content
Security Policy is never violated. Screenshots: test-output/screenshots/insights-*.png.
"""

from __future__ import annotations

import csv
import uuid
from collections.abc import Iterator
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
from factories import make_staff, make_verification

from app.extensions import db
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.verifications.operations import open_individual

CONDITION = "Attribute birthdate does not satisfy AGE_AT_LEAST 18"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def served(make_app) -> Iterator[tuple[str, Any]]:
    delegate = Delegate()
    with loopback_server(delegate) as base:
        delegate.app = make_app(PUBLIC_URL=base)
        yield base, delegate.app


def presented(app: Any, verification_id: str, customer_id: str, decision: Decision) -> None:
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification_id), customer_id)
        record(consume(connect(individual, 120, 600).id), decision)
        db.session.commit()
        db.session.remove()


def csv_rows(path: Any) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as file:
        return list(csv.reader(file))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_staff_read_the_overview_find_and_export_and_read_the_audit_trail(
    browser, served, viewport
):
    from playwright.sync_api import expect

    base, app = served
    owner = make_staff(app)
    client = app.test_client()
    verification = make_verification(client, owner)["id"]
    presented(app, verification, "=cust-1", Decision(True, None, "https://issuer.example", {}))
    presented(app, verification, "cust-2", Decision(False, CONDITION, "https://issuer.example"))
    presented(app, verification, "other-3", Decision(False, CONDITION, "https://issuer.example"))
    problems: list[str] = []
    findings: dict[str, list] = {}
    page = watched_page(browser, viewport, problems, accept_downloads=True)
    width = "desktop" if viewport == DESKTOP else "phone"

    def look(name: str) -> None:
        screenshot(page, f"insights-{width}-{name}")
        findings[name] = axe_findings(page)

    page.goto(f"{base}/dashboard/login")
    if not page.get_by_label("Session token").is_visible():
        page.get_by_text("Sign in with a session token").click()
    page.get_by_label("Session token").fill(owner.token)
    page.get_by_role("button", name="Sign in with the token").click()
    expect(page.get_by_role("heading", name="Acme")).to_be_visible()

    # The chart is drawn (no script needed) and its numbers are in the table beside it.
    chart = page.get_by_test_id("outcome-chart")
    expect(chart.locator("svg")).to_be_visible()
    assert chart.locator("rect.bar-verified").count() == 1
    assert chart.locator("rect.bar-failed").count() == 1
    table = page.get_by_test_id("outcome-table")
    expect(table.locator("tbody tr")).to_have_count(30)
    expect(table.locator("tbody tr").first.locator("td")).to_have_text(["1", "2"])
    expect(page.get_by_test_id("failure-families")).to_contain_text("Conditions not met")
    expect(page.get_by_test_id("funnels").locator("tbody td")).to_have_text(["3", "3", "3", "1"])
    look("overview")

    # A recent outcome leads to the individual; the filters narrow the list.
    page.get_by_role("link", name="cust-2", exact=True).click()
    expect(page.get_by_test_id("one-individual")).to_be_visible()
    expect(page.locator("main table tbody tr")).to_have_count(1)
    expect(page.locator("main table tbody")).to_contain_text("cust-2")
    page.get_by_label("Customer ID").fill("cust")
    page.get_by_label("Status").select_option("FAILED")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("main table")).to_contain_text("cust-2")
    expect(page.locator("main table")).not_to_contain_text("other-3")
    expect(page.locator("main table")).not_to_contain_text("=cust-1")
    look("individuals-filtered")

    # The export holds what the filters found, formula-safe.
    with page.expect_download() as download_info:
        page.get_by_test_id("export-individuals").click()
    download = download_info.value
    assert download.suggested_filename == "individuals.csv"
    rows = csv_rows(download.path())
    assert [row[1] for row in rows[1:]] == ["cust-2"]
    page.get_by_label("Status").select_option("")
    page.get_by_role("button", name="Filter").click()
    with page.expect_download() as download_info:
        page.get_by_test_id("export-individuals").click()
    rows = csv_rows(download_info.value.path())
    assert sorted(row[1] for row in rows[1:]) == ["'=cust-1", "cust-2"]

    # The Audit page: the verification made through the API, filtered by record type.
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Audit").click()
    expect(page.get_by_role("heading", name="Audit", exact=True)).to_be_visible()
    audit = page.get_by_test_id("audit-table")
    expect(audit).to_contain_text("verification.created")
    expect(audit).to_contain_text(owner.email)
    look("audit")
    if viewport == DESKTOP:
        # One line per event: the changed fields stay folded until asked for.
        heights = audit.locator("tbody tr").evaluate_all(
            "rows => rows.map(row => row.getBoundingClientRect().height)"
        )
        assert heights and max(heights) < 64, heights
        # The sections menu is one line on a laptop: no section alone on a second line.
        tops = (
            page.get_by_role("navigation", name="Sections")
            .locator("a")
            .evaluate_all(
                "links => links.map(link => Math.round(link.getBoundingClientRect().top))"
            )
        )
        assert len(set(tops)) == 1, tops
        # ... and every column in view, none left to a sideways scroll.
        region = audit.locator("xpath=..").bounding_box()
        last = audit.locator("thead th").last.bounding_box()
        assert last["x"] + last["width"] <= region["x"] + region["width"] + 1, (last, region)
    page.get_by_label("Record type").select_option("integration")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_text("No change matches these filters.")).to_be_visible()
    look("audit-filtered")

    assert_clean(page, problems)
    assert {name: found for name, found in findings.items() if found} == {}
