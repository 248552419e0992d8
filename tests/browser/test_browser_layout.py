"""Every page a newcomer walks through, laid out whole on a 1366x768 laptop and a 390x844
phone, in Debian's Chromium through Playwright: no text is drawn over another, no table
column lies beyond its scrolling region or the screen, and on the laptop the QR code of the
person's page and of the offer page lies in the first screen, above the fold.

The checks are tests/browser/layout_check.js, evaluated in the page as it is drawn. The pages:
the person's page (and one offering both OpenID4VP and DIDComm, where each code and wallet
button says which wallets it is for and the browser's button stays beside the OpenID4VP code),
the offer page, the dashboard's overview, the individuals list of a
verification with a long customer ID and a refused presentation from a self-made issuer (its
attempts opened: a did:jwk of hundreds of characters wraps in its column), the trust page, the
webhooks page and the audit page with fifteen events (one line each, their details on demand);
a verification's page (its "Any issuer" warning) and the plan page (the operator's
commands); no empty field's placeholder is cut. The documentation's "What each endpoint does" table keeps
a readable description column on the laptop and lies whole on the phone. Screenshots:
test-output/screenshots/layout-*.png.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
from didcomm.test_didcomm_verifier import identity_schema
from factories import make_apikey, make_staff, make_verification

ROOT = Path(__file__).resolve().parents[2]
LAPTOP = {"width": 1366, "height": 768}
# A description column narrower than this holds a word or two a line: unreadable.
READABLE_COLUMN = 300  # px, on the laptop
LAYOUT_CHECK = (Path(__file__).resolve().parent / "layout_check.js").read_text()
LONG_CUSTOMER_ID = "crm-" + "0123456789abcdef" * 5
AUDIT_EVENTS = 15
ROW_HEIGHT = 64  # px: one line of text and its cell padding, with room to spare
SOCIOUS = "For the Socious Wallet and other Identus wallets"
OPENID4VP = "For EU Digital Identity Wallets and other OpenID4VP wallets"
# Chromium here has no Digital Credentials API: a stand-in, so the page reveals its button.
DC_API_BROWSER = "window.DigitalCredential = function () {};"


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
        # A person offered both protocols: two codes, each saying which wallets it is for.
        both = make_verification(
            client,
            owner,
            schema_id=identity_schema(client, owner),
            claims=["given_name"],
            attributes=[],
            wallet_protocols=["didcomm", "openid4vp"],
        )["id"]
        both_individual = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-both", "verification_id": both},
        ).get_json()["id"]
        assert client.get(f"/verifications/{individual}/connect").status_code == 200
        record_a_refused_presentation(app, individual)
        events = client.get("/audit-events", headers=owner.headers()).get_json()["total"]
        assert events == AUDIT_EVENTS, events
        yield {
            "base": base,
            "token": owner.token,
            "person": f"{base}/i/{individual}",
            "person-both": f"{base}/i/{both_individual}",
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


def wallets_named(page: Any) -> dict[str, Any]:
    """On a page offering both protocols, each code's caption and each wallet button says
    which wallets it is for, drawn on screen, and the browser's button is offered beside the
    OpenID4VP code (it is an OpenID4VP request)."""
    captions = [c.inner_text() for c in page.locator("#connect figcaption").all()]
    labels = [
        p.inner_text() for p in page.locator("#connect p.wallet-kind").all() if p.is_visible()
    ]
    button = page.locator("#dc-api")
    found = {
        "captions": captions,
        "labels": labels,
        "dcApiVisible": button.count() == 1 and button.is_visible(),
        "dcApiBesideOpenid4vp": page.locator("#other-kind-openid4vp ~ p #dc-api").count() == 1,
    }
    found["ok"] = (
        len(captions) == 2
        and SOCIOUS in captions[0]
        and OPENID4VP in captions[1]
        and labels == [SOCIOUS, OPENID4VP]
        and found["dcApiVisible"]
        and found["dcApiBesideOpenid4vp"]
    )
    return found


# A self-made issuer's DID is one unbroken word of a few hundred characters.
SELF_MADE_ISSUER = "did:jwk:" + "eyJrdHkiOiJFQyIsImNydiI6IlAtMjU2IiwieCI6Ik" * 6


def record_a_refused_presentation(app: Any, individual_id: str) -> None:
    """The attempt a wallet's refused presentation leaves (its issuer, the reason), as the
    individuals page lists it under Presentations."""
    import uuid

    from app.extensions import db
    from app.verifications.models import PresentationAttempt, PresentationRequest, Status

    with app.app_context():
        request = db.session.execute(
            db.select(PresentationRequest).filter_by(individual_id=uuid.UUID(individual_id))
        ).scalar_one()
        db.session.add(
            PresentationAttempt(
                request_id=request.id,
                outcome=Status.FAILED,
                validation_error=f"Credential issuer {SELF_MADE_ISSUER} is not trusted by this "
                "verification",
                issuer=SELF_MADE_ISSUER,
            )
        )
        db.session.commit()
        db.session.remove()


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
        # A browser with the Digital Credentials API: its button shows where it is offered.
        page.context.add_init_script(DC_API_BROWSER)
        for name in ("person", "offer", "person-both"):
            page.goto(walk[name])
            page.wait_for_load_state()
            screenshot(page, f"layout-{name}-{size}")
            found = page.evaluate(LAYOUT_CHECK)
            if size == "laptop":
                qr = "main svg[role=img]" if name == "offer" else "#connect svg[role=img]"
                found["qrInFirstScreen"] = in_first_screen(page, qr)
            if name == "person-both":
                found["walletsNamed"] = wallets_named(page)
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
            if name == "individuals":
                # What a reader opens is laid out too: the attempts under Presentations.
                page.evaluate(
                    "document.querySelectorAll('main td details').forEach(d => d.open = true)"
                )
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
        # A refused verification form: each field's message right under its own field.
        page.goto(f"{walk['base']}/dashboard/verifications/new")
        page.locator("form.verification-form").evaluate("form => form.noValidate = true")
        page.get_by_label("Name", exact=True).fill("")
        page.get_by_label("Keep received claims for (days)").fill("-1")
        page.locator("form.verification-form button[type=submit]:not([name])").click()
        page.wait_for_load_state()
        screenshot(page, f"layout-refused-form-{size}")
        found = page.evaluate(LAYOUT_CHECK)
        placed = []
        for field, words in (("#v-name", "Fill this in."), ("#v-retention", "Enter 0 or more.")):
            below = page.locator(f"{field} + small.field-error")
            field_box, message_box = page.locator(field).bounding_box(), below.bounding_box()
            placed.append(
                below.inner_text() == words
                and 0 <= message_box["y"] - (field_box["y"] + field_box["height"]) <= ROW_HEIGHT
            )
        found["messagesAtFields"] = all(placed)
        broken[f"refused form {size}"] = found
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
        or found["placeholderCut"]
        or found.get("qrInFirstScreen") is False
        or found.get("oneLinePerEvent") is False
        or found.get("actionsOneHeight") is False
        or found.get("menuOneLine") is False
        or found.get("walletsNamed", {}).get("ok") is False
        or found.get("messagesAtFields") is False
    }
    findings = SCREENSHOTS.parent / "layout-findings.json"
    findings.write_text(json.dumps(failing, indent=2))
    assert failing == {}, f"see {findings}"
    assert problems == []


@pytest.fixture(scope="module")
def endpoint_table_page(tmp_path_factory) -> Path:
    """ "What each endpoint does" built as the site builds it (its conf, theme and style), alone:
    the rest of the site is not needed to lay out one page."""
    source = tmp_path_factory.mktemp("docs-source")
    for part in ("conf.py", "_static", "_ext"):
        copy = shutil.copytree if (ROOT / "docs" / part).is_dir() else shutil.copy
        copy(ROOT / "docs" / part, source / part)
    (source / "reference").mkdir()
    shutil.copy(ROOT / "docs/reference/api-behaviour.md", source / "reference")
    (source / "index.md").write_text("# Verity\n\n```{toctree}\nreference/api-behaviour\n```\n")
    out = source / "_build"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(source), str(out)],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return out / "reference" / "api-behaviour.html"


def test_the_endpoint_table_is_readable_on_a_laptop_and_not_cut_on_a_phone(
    browser, endpoint_table_page
):
    problems: list[str] = []
    found: dict[str, Any] = {}
    for size, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
        page = watched_page(browser, viewport, problems, device_scale_factor=1)
        page.goto(endpoint_table_page.as_uri())
        page.wait_for_load_state()
        screenshot(page, f"layout-endpoint-table-{size}")
        measured = page.evaluate(LAYOUT_CHECK)
        widths = [
            cell.bounding_box()["width"]
            for cell in page.locator("table tbody tr td:nth-child(4)").all()[:10]
        ]
        measured["descriptionWidth"] = min(widths)
        found[size] = measured
        page.context.close()
    assert found["laptop"]["descriptionWidth"] >= READABLE_COLUMN, found["laptop"]
    assert found["laptop"]["cutOff"] == [] and found["laptop"]["overlaps"] == [], found["laptop"]
    assert found["phone"]["cutOff"] == [] and found["phone"]["overlaps"] == [], found["phone"]


FIRST_AND_LAST_LETTER = """() => {
  const text = document.querySelector("[data-testid=purpose]").firstChild;
  const range = document.createRange();
  range.setStart(text, 0);
  range.setEnd(text, 1);
  const first = range.getBoundingClientRect().left;
  range.setStart(text, text.length - 1);
  range.setEnd(text, text.length);
  return {first, last: range.getBoundingClientRect().left, dir: document.documentElement.dir};
}"""


def test_an_english_purpose_on_an_arabic_page_ends_with_its_own_full_stop(browser, walk):
    """The purpose staff wrote in English is shown on an Arabic (right-to-left) page where no
    Arabic one was given: isolated, it is laid out left to right, its full stop at its right
    end rather than before its first word."""
    problems: list[str] = []
    for viewport in (LAPTOP, PHONE):
        page = watched_page(browser, viewport, problems, locale="ar")
        page.goto(walk["person"])
        page.wait_for_load_state()
        drawn = page.evaluate(FIRST_AND_LAST_LETTER)
        page.context.close()
        assert drawn["dir"] == "rtl"
        assert drawn["last"] > drawn["first"], drawn
    assert problems == []
