"""Every page a newcomer walks through, laid out whole on a 1366x768 laptop and a 390x844
phone, in Debian's Chromium through Playwright: no text is drawn over another, no table
column lies beyond its scrolling region or the screen, and on the laptop the QR code of the
person's page and of the offer page lies in the first screen, above the fold.

The checks are tests/browser/layout_check.js, evaluated in the page as it is drawn. The pages:
the person's page, the offer page, the dashboard's overview, the individuals list of a
verification with a long customer ID, the trust page, the webhooks page, the audit page
with twelve events (one line each, their details on demand), a verification's page (its
"Any issuer" warning) and the plan page (the operator's commands). Screenshots:
test-output/screenshots/layout-*.png.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    PHONE,
    SCREENSHOTS,
    Delegate,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from factories import make_apikey, make_staff, make_verification

LAPTOP = {"width": 1366, "height": 768}
LAYOUT_CHECK = (Path(__file__).resolve().parent / "layout_check.js").read_text()
LONG_CUSTOMER_ID = "crm-" + "0123456789abcdef" * 5
AUDIT_EVENTS = 12
ROW_HEIGHT = 64  # px: one line of text and its cell padding, with room to spare


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def walk(make_app) -> Iterator[dict[str, str]]:
    """A PRO organization with every page of the walk filled: its addresses by name."""
    delegate = Delegate()
    with loopback_server(delegate) as base:
        app = delegate.app = make_app(PUBLIC_URL=base)
        client = app.test_client()
        owner = make_staff(app)
        key = {"apikey": make_apikey(app, owner.organization_id)}
        recipients = [
            client.post(
                "/recipients",
                json={"first_name": f"Ada {n}", "last_name": "Lovelace", "email": f"a{n}@x.test"},
                headers=key,
            ).get_json()["id"]
            for n in range(7)
        ]
        schema = client.post(
            "/schemas",
            json={
                "name": "Nurse licence",
                "vct": "https://acme.test/nurse",
                "attributes": [{"name": "licence_number", "type": "TEXT"}],
            },
            headers=owner.headers(),
        ).get_json()["id"]
        assert client.post(f"/schemas/{schema}/publish", headers=owner.headers()).status_code == 200
        credential = client.post(
            "/credentials",
            json={
                "name": "Nurse licence",
                "schema_id": schema,
                "recipient_id": recipients[0],
                "claims": [{"name": "licence_number", "value": "RN-1234"}],
            },
            headers=owner.headers(),
        ).get_json()
        webhook = client.post(
            "/webhooks/endpoints",
            json={"url": "https://hooks.example.test/verity"},
            headers=owner.headers(),
        )
        assert webhook.status_code == 201, webhook.get_json()
        verification = make_verification(client, owner)["id"]
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": LONG_CUSTOMER_ID, "verification_id": verification},
        ).get_json()["id"]
        events = client.get("/audit-events", headers=owner.headers()).get_json()["total"]
        assert events == AUDIT_EVENTS, events
        yield {
            "base": base,
            "token": owner.token,
            "person": f"{base}/i/{individual}",
            "offer": credential["offer_page"],
            "overview": f"{base}/dashboard/",
            "individuals": f"{base}/dashboard/verifications/{verification}/individuals",
            "trust": f"{base}/dashboard/trust",
            "webhooks": f"{base}/dashboard/webhooks",
            "audit": f"{base}/dashboard/audit",
            # The verification's page with its "Any issuer" warning; the plan page with the
            # operator's set-plan command (no billing here).
            "verification": f"{base}/dashboard/verifications/{verification}",
            "plan": f"{base}/dashboard/plan",
        }


def sign_in(page: Any, base: str, token: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{base}/dashboard/login")
    if not page.get_by_label("Session token").is_visible():
        page.get_by_text("Sign in with a session token").click()
    page.get_by_label("Session token").fill(token)
    page.get_by_role("button", name="Sign in with the token").click()
    expect(page.get_by_role("heading", name="Acme")).to_be_visible()


def in_first_screen(page: Any, selector: str) -> bool:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    size = page.viewport_size
    return (
        box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] >= 0
        and (box["x"] + box["width"] <= size["width"])
    )


def test_no_text_overlaps_and_no_column_is_cut_off_on_a_laptop_and_a_phone(browser, walk):
    broken: dict[str, dict] = {}
    problems: list[str] = []
    for size, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
        page = watched_page(browser, viewport, problems, device_scale_factor=1)
        for name in ("person", "offer"):
            page.goto(walk[name])
            page.wait_for_load_state()
            screenshot(page, f"layout-{name}-{size}")
            found = page.evaluate(LAYOUT_CHECK)
            if size == "laptop":
                qr = "#connect svg[role=img]" if name == "person" else "main svg[role=img]"
                found["qrInFirstScreen"] = in_first_screen(page, qr)
            broken[f"{name} {size}"] = found
        sign_in(page, walk["base"], walk["token"])
        for name in (
            "overview",
            "individuals",
            "trust",
            "webhooks",
            "audit",
            "verification",
            "plan",
        ):
            page.goto(walk[name])
            page.wait_for_load_state()
            screenshot(page, f"layout-{name}-{size}")
            found = page.evaluate(LAYOUT_CHECK)
            if size == "laptop":
                # The sections menu is one line on a laptop: no link left alone on a second.
                links = page.get_by_role("navigation", name="Sections").get_by_role("link")
                found["menuOneLine"] = len({round(a.bounding_box()["y"]) for a in links.all()}) == 1
            if name == "audit" and size == "laptop":
                # One line per event, its details on demand: no event's row is taller than
                # about two lines of text.
                rows = page.locator("[data-testid=audit-table] tbody tr")
                assert rows.count() == AUDIT_EVENTS
                tallest = max(row.bounding_box()["height"] for row in rows.all())
                found["tallestEvent"] = tallest
                found["oneLinePerEvent"] = tallest <= ROW_HEIGHT
            broken[f"{name} {size}"] = found
        # The endpoint's actions: the Delete link is drawn as tall as the buttons beside it.
        page.goto(walk["webhooks"])
        page.locator("table a").first.click()
        page.wait_for_load_state()
        screenshot(page, f"layout-webhook-{size}")
        found = page.evaluate(LAYOUT_CHECK)
        actions = page.locator(".endpoint-actions").locator("button, a[role=button]")
        heights = {round(a.bounding_box()["height"]) for a in actions.all()}
        found["actionsOneHeight"] = len(heights) == 1
        broken[f"webhook {size}"] = found
        page.context.close()
    failing = {
        where: found
        for where, found in broken.items()
        if found["overlaps"]
        or found["cutOff"]
        or found.get("qrInFirstScreen") is False
        or found.get("oneLinePerEvent") is False
        or found.get("actionsOneHeight") is False
        or found.get("menuOneLine") is False
    }
    findings = SCREENSHOTS.parent / "layout-findings.json"
    findings.write_text(json.dumps(failing, indent=2))
    assert failing == {}, f"see {findings}"
    assert problems == []
