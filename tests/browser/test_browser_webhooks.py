"""The dashboard's Webhooks page in a real browser (Debian's Chromium through Playwright)
against the app on a loopback server, delivering to a receiver on loopback: staff add an
endpoint and copy its secret, watch a delivery fail with 500, send it again, rotate the secret
and disable the endpoint. axe-core checks every step; the Content Security Policy is never
violated. Screenshots land in test-output/screenshots/ (``webhooks-*.png``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
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
from webhooks.receiver import Receiver

from app.extensions import db
from app.jobs.queue import queue_of
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.verifications.operations import open_individual
from app.webhooks import delivery


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def served(make_app, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    delegate = Delegate()
    with loopback_server(delegate) as base:
        app = delegate.app = make_app(
            PUBLIC_URL=base,
            TRUST_ALLOW_PRIVATE=True,
            JOBS_QUEUE_URL=f"sqlite:///{tmp_path / 'q.db'}",
        )
        yield base, app
        queue_of(app).flush()


def run_jobs(app: Any) -> None:
    with app.app_context():
        delivery.enqueue_deliveries(delivery.relay())
        db.session.commit()
        db.session.remove()
    queue_of(app).run_pending()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_staff_add_an_endpoint_replay_a_delivery_rotate_and_disable(
    browser, served, receiver, viewport
):
    from playwright.sync_api import expect

    base, app = served
    owner = make_staff(app)
    verification = make_verification(app.test_client(), owner)["id"]
    problems: list[str] = []
    findings: dict[str, list] = {}
    page = watched_page(browser, viewport, problems)
    width = "desktop" if viewport == DESKTOP else "phone"

    def look(name: str) -> None:
        screenshot(page, f"webhooks-{width}-{name}")
        findings[name] = axe_findings(page)

    page.goto(f"{base}/dashboard/login")
    if not page.get_by_label("Session token").is_visible():
        page.get_by_text("Sign in with a session token").click()
    page.get_by_label("Session token").fill(owner.token)
    page.get_by_role("button", name="Sign in with the token").click()
    expect(page.get_by_role("heading", name="Acme")).to_be_visible()

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    look("empty")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_label(re.compile(r"individual\.verified")).check()
    page.get_by_role("button", name="Add endpoint and show its secret").click()
    secret_box = page.get_by_test_id("webhook-secret")
    expect(secret_box).to_be_visible()
    secret = page.locator("#new-secret").inner_text().strip()
    assert secret.startswith("whsec_")
    look("created")

    # A person is verified; the first delivery gets a 500.
    receiver.answers.append(500)
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification), "crm-7")
        request = connect(individual, 120, 600)
        record(consume(request.id), Decision(True, None, "https://issuer.example", {}))
        db.session.commit()
        db.session.remove()
    run_jobs(app)
    assert [r.status for r in receiver.received] == [500]
    assert receiver.received[0].verified(secret)["type"] == "individual.verified"

    page.get_by_role("link", name="Done, see the endpoint").click()
    expect(page.get_by_test_id("status-code")).to_have_text("500")
    expect(page.locator("main")).not_to_contain_text(secret)
    look("failed")
    page.get_by_role("button", name=re.compile("^Send again")).click()
    expect(page.get_by_text("Delivery queued to be sent again.")).to_be_visible()
    queue_of(app).run_pending()
    page.reload()
    expect(page.get_by_test_id("status-code")).to_have_text("204")
    assert receiver.received[1].webhook_id == receiver.received[0].webhook_id
    look("delivered")

    page.get_by_role("button", name="Rotate the secret").click()
    expect(page.get_by_test_id("webhook-secret")).to_be_visible()
    rotated = page.locator("#new-secret").inner_text().strip()
    assert rotated.startswith("whsec_") and rotated != secret
    look("rotated")
    page.get_by_role("button", name="Disable").click()
    expect(page.get_by_test_id("endpoint-state")).to_contain_text("Disabled")
    look("disabled")

    assert_clean(page, problems)
    assert {name: found for name, found in findings.items() if found} == {}
