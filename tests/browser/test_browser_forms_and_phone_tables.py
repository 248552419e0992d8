"""The dashboard's forms and tables in Debian's Chromium through Playwright, in one flow.

Post/Redirect/Get: a credential issued from the dashboard form, two issued from a CSV upload
(their codes shown once, the results file still offered after the reload), a webhook endpoint
added, a test event sent and a schema created each end on a page a reload only reads; after
the reload the API still counts what was made once. On a phone (390x844) the tables keep what staff look for
(the outcome, the reason, the delivery state, the credential's status, the audited action):
each such cell is on screen, inside its table's region, with its column's name beside it. The
schema form adds attribute rows, drops the one ticked for removal, and its Type list is wide
enough to read at every size. The test event's delivery page, on a 1366x768 laptop and on the
phone, shows the attempt's answer (HTTP 204) and the request's webhook-signature header whole,
header names broken only at their hyphens, and its bodies wrap rather than scroll the page
sideways; the mdoc signer page offers the signing request (CSR) for download at both sizes, its
IACA certificate open. axe-core finds nothing serious and the Content Security Policy is never
violated. Screenshots: test-output/screenshots/forms-*.png and phone-*.png.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
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
from factories import Staff, make_apikey, make_staff, make_verification
from flask import Flask
from flask.testing import FlaskClient
from webhooks.receiver import Receiver

from app.extensions import db
from app.jobs.queue import queue_of
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.verifications.operations import open_individual
from app.webhooks import delivery

CONDITION = "Attribute birthdate does not satisfy AGE_AT_LEAST 18"
TABLET = {"width": 820, "height": 1180}
TWO_ROWS = b"recipient_email,licence_number\nada@example.test,RN-1\nada@example.test,RN-2\n"
LAPTOP = {"width": 1366, "height": 768}
PAGE_FITS = "document.documentElement.scrollWidth <= window.innerWidth"
# The characters a wrapped text breaks its lines after: a header name broken only at its hyphens
# ("webhook-" then "signature") still reads as itself.
BROKEN_AFTER = """(element) => {
  const text = element.firstChild;
  const range = document.createRange();
  const tops = Array.from(text.data, (_, i) => {
    range.setStart(text, i);
    range.setEnd(text, i + 1);
    return range.getBoundingClientRect().top;
  });
  return tops.flatMap((top, i) => (i > 0 && top > tops[i - 1] ? [text.data[i - 1]] : []));
}"""
# A cell is shown whole: it has a box, lies inside the screen and inside its table's scrolling
# region, that region need not scroll sideways, and the cell's own text does not overflow it.
# Its column's name is drawn beside it (the phone layout's label) unless it is a table row.
SHOWN_WHOLE = """(cell) => {
  const box = cell.getBoundingClientRect();
  const region = cell.closest(".overflow-auto") || document.documentElement;
  const frame = region.getBoundingClientRect();
  const label = getComputedStyle(cell, "::before").content;
  return {
    sized: box.width > 0 && box.height > 0,
    onScreen: box.left >= 0 && box.right <= window.innerWidth,
    inRegion: box.left >= frame.left - 0.5 && box.right <= frame.right + 0.5,
    regionFits: region.scrollWidth <= region.clientWidth,
    textFits: cell.scrollWidth <= cell.clientWidth,
    label: label,
  };
}"""
# The widest option's text, measured in the select's own font, against the room inside it.
TYPE_READABLE = """(select) => {
  const style = getComputedStyle(select);
  const context = document.createElement("canvas").getContext("2d");
  context.font = style.font;
  const widest = Math.max(...Array.from(select.options, (o) => context.measureText(o.text).width));
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {widest: widest, room: room, scrolls: select.scrollWidth > select.clientWidth};
}"""


def exchange_shown(page: Any) -> None:
    """The delivery page at this size: the attempt's answer and the request's signature header
    are on screen, whole, and no body scrolls the page sideways."""
    from playwright.sync_api import expect

    attempt = page.get_by_test_id("attempt")
    expect(attempt).to_have_count(1)
    status = attempt.get_by_test_id("response-status")
    expect(status).to_have_text("HTTP 204")
    headers = attempt.get_by_role("region", name="Request headers of attempt 1")
    signature = headers.locator("tr", has=page.get_by_text("webhook-signature", exact=True))
    expect(signature.locator("td")).to_have_text(re.compile(r"^v1,\S+$"))
    bodies = attempt.locator("pre")
    expect(bodies.first).to_contain_text('"type"')  # the request body; a 204 answers with none
    shown = [status, signature.locator("th"), signature.locator("td"), *bodies.all()]
    clipped = [
        found
        for found in (item.evaluate(SHOWN_WHOLE) for item in shown)
        if not all(v for k, v in found.items() if k != "label")
    ]
    assert clipped == [], "the attempt is not shown whole"
    names = attempt.locator(".exchange-headers th code")
    broken = {
        n.inner_text(): after for n in names.all() if set(after := n.evaluate(BROKEN_AFTER)) - {"-"}
    }
    assert broken == {}, "header names broken inside a word"
    assert page.evaluate(PAGE_FITS)


def signer_shown(page: Any) -> None:
    """The mdoc signer page at this size: the signing request can be downloaded."""
    from playwright.sync_api import expect

    csr = page.get_by_role("link", name=re.compile(r"Download\s+the CSR"))
    expect(csr).to_have_attribute("href", "/dashboard/mdoc-signer/signing-request.csr")
    expect(csr).to_be_visible()
    shown = csr.evaluate(SHOWN_WHOLE)
    assert shown["onScreen"] and shown["sized"], shown
    page.get_by_text("IACA (PEM)", exact=True).click()  # axe then reads the certificate too
    expect(page.get_by_test_id("iaca-pem")).to_contain_text("BEGIN CERTIFICATE")
    assert page.evaluate(PAGE_FITS)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@dataclass
class Organization:
    """A PRO organization on a loopback server: a recipient, a published schema to issue, and a
    verification two people answered, one of them failing a condition."""

    base: str
    app: Flask
    client: FlaskClient
    owner: Staff
    verification_id: str

    def count(self, path: str, **where: str) -> int:
        """How many records the JSON API lists at ``path`` (with these field values)."""
        answer = self.client.get(path, headers=self.owner.headers()).get_json()
        rows = [r for r in answer["results"] if all(r.get(k) == v for k, v in where.items())]
        return len(rows) if where else answer["total"]

    def deliver(self) -> None:
        """What the worker does: hand pending deliveries to the queue and run it."""
        with self.app.app_context():
            delivery.enqueue_deliveries(delivery.relay())
            db.session.commit()
            db.session.remove()
        queue_of(self.app).run_pending()


def presented(app: Flask, verification_id: str, customer_id: str, decision: Decision) -> None:
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification_id), customer_id)
        record(consume(connect(individual, 120, 600).id), decision)
        db.session.commit()
        db.session.remove()


@pytest.fixture
def organization(make_app, tmp_path: Path) -> Iterator[Organization]:
    delegate = Delegate()
    with loopback_server(delegate) as base:
        app = delegate.app = make_app(
            PUBLIC_URL=base,
            TRUST_ALLOW_PRIVATE=True,
            JOBS_QUEUE_URL=f"sqlite:///{tmp_path / 'q.db'}",
        )
        client = app.test_client()
        owner = make_staff(app)
        client.post(
            "/recipients",
            json={"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"},
            headers={"apikey": make_apikey(app, owner.organization_id)},
        )
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
        verification = make_verification(client, owner)["id"]
        issuer = "https://issuer.example"
        presented(app, verification, "crm-passed", Decision(True, None, issuer, {}))
        presented(app, verification, "crm-failed", Decision(False, CONDITION, issuer))
        yield Organization(base, app, client, owner, verification)
        queue_of(app).flush()


def test_forms_do_not_repeat_on_reload_and_tables_keep_their_key_columns_on_a_phone(
    browser, organization, receiver
):
    from playwright.sync_api import expect

    org = organization
    problems: list[str] = []
    findings: dict[str, list] = {}
    page = watched_page(browser, DESKTOP, problems)

    def look(name: str) -> None:
        screenshot(page, name)
        findings[name] = axe_findings(page)

    def reload_reads_only() -> None:
        """A reload asks for the page again with GET: no form is sent a second time."""
        reloaded = page.reload()
        assert reloaded is not None and reloaded.request.method == "GET"
        assert reloaded.status == 200

    def section(name: str) -> None:
        page.get_by_role("navigation", name="Sections").get_by_role("link", name=name).click()
        expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()

    page.goto(f"{org.base}/dashboard/login")
    if not page.get_by_label("Session token").is_visible():
        page.get_by_text("Sign in with a session token").click()
    page.get_by_label("Session token").fill(org.owner.token)
    page.get_by_role("button", name="Sign in with the token").click()
    expect(page.get_by_role("heading", name="Acme")).to_be_visible()

    # Issue a credential; the reload shows the credential, and issues nothing.
    section("Credentials")
    page.get_by_role("button", name="Issue a credential").click()
    expect(page.get_by_role("heading", name="Issue a credential")).to_be_visible()
    page.wait_for_load_state()  # htmx binds the schema picker once the page has loaded
    page.get_by_label("Recipient").select_option(label="Ada Lovelace (ada@example.test)")
    page.get_by_label("Credential schema").select_option(label="Nurse licence")
    page.get_by_label("licence_number").fill("RN-1234")
    page.get_by_role("button", name=re.compile(r"^Issue (and email )?the offer$")).click()
    expect(page.get_by_test_id("offer-created")).to_be_visible()
    assert re.search(r"/dashboard/credentials/[\w-]+$", page.url)
    assert org.count("/credentials") == 1
    reload_reads_only()
    expect(page.get_by_test_id("credential-status")).to_have_text("Offered")
    expect(page.get_by_test_id("offer-created")).to_have_count(0)  # said once, on the redirect
    assert org.count("/credentials") == 1
    look("forms-credential-reloaded")

    # Issue two from a CSV file: the upload redirects to its results, codes shown once; the
    # reload shows the rows without them, still with the file to download, and issues nothing.
    section("Credentials")
    page.get_by_role("button", name="Issue many from a CSV file").click()
    page.get_by_label("Credential schema").select_option(label="Nurse licence")
    page.get_by_label("Name (optional)").fill("Bulk licence")
    page.get_by_label("CSV file").set_input_files(
        files=[{"name": "two.csv", "mimeType": "text/csv", "buffer": TWO_ROWS}]
    )
    page.get_by_role("switch", name=re.compile(r"Ask for a code")).check()
    page.get_by_role("button", name="Check the file and issue").click()
    # The rows are issued by the worker; the page follows its progress, then shows them.
    expect(page.get_by_test_id("upload-running")).to_contain_text("0 of 2 rows done")
    assert org.count("/credentials", name="Bulk licence") == 0
    queue_of(org.app).run_pending()
    expect(page.get_by_role("heading", name="2 credentials offered")).to_be_visible()
    assert page.url == f"{org.base}/dashboard/credentials/upload/results"
    expect(page.locator('td[data-label="Code"] code')).to_have_count(2)
    screenshot(page, "forms-upload-results")
    assert org.count("/credentials", name="Bulk licence") == 2
    reload_reads_only()
    expect(page.get_by_role("heading", name="2 credentials offered")).to_be_visible()
    expect(page.locator('td[data-label="Code"]')).to_have_count(0)
    download = page.get_by_test_id("download-results")
    expect(download).to_have_attribute("download", "issued-credentials.csv")
    expect(download).to_have_attribute("href", re.compile(r"^data:text/csv;"))
    assert org.count("/credentials", name="Bulk licence") == 2
    look("forms-upload-reloaded")

    # Add a webhook endpoint; its secret is shown once, and a reload adds no second endpoint.
    section("Webhooks")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_role("button", name="Add endpoint and show its secret").click()
    expect(page.get_by_test_id("webhook-secret")).to_be_visible()
    assert org.count("/webhooks/endpoints") == 1
    reload_reads_only()
    expect(page.get_by_test_id("webhook-secret")).to_have_count(0)
    assert org.count("/webhooks/endpoints") == 1
    look("forms-webhook-reloaded")

    # Send a test event; the reload sends none, and the delivery's answer shows once it came.
    page.get_by_role("link", name=receiver.url).click()
    endpoint_page = page.url
    endpoint_id = endpoint_page.rsplit("/", 1)[1]
    deliveries = f"/webhooks/endpoints/{endpoint_id}/deliveries"
    page.get_by_test_id("send-test").click()
    expect(page.get_by_text("Test event queued")).to_be_visible()
    assert page.url == endpoint_page
    reload_reads_only()
    assert org.count(deliveries) == 1
    org.deliver()
    assert len(receiver.wait_for(1)) == 1
    reload_reads_only()
    expect(page.get_by_test_id("status-code")).to_have_text("204")
    assert org.count(deliveries) == 1
    look("forms-webhook-delivered")

    # The delivery's own page shows the attempt: the request as signed, the answer it got.
    page.set_viewport_size(LAPTOP)
    page.get_by_test_id("delivery-link").click()
    expect(page).to_have_url(re.compile(rf"{endpoint_page}/deliveries/[\w-]+$"))
    delivery_page = page.url
    exchange_shown(page)
    look("forms-delivery-desktop")

    # The mdoc signer page offers the signing request for the organization's own IACA.
    page.goto(f"{org.base}/dashboard/mdoc-signer")
    signer_shown(page)
    look("forms-mdoc-signer-desktop")
    page.set_viewport_size(DESKTOP)

    # The schema form: two rows added, the second ticked for removal, the Type list readable.
    section("Schemas")
    page.get_by_label("Name", exact=True).fill("Staff badge")
    rows = page.locator("#attribute-rows .attribute-row")
    expect(rows).to_have_count(1)
    page.get_by_role("button", name="Add an attribute").click()
    expect(rows).to_have_count(2)
    page.get_by_role("button", name="Add an attribute").click()
    expect(rows).to_have_count(3)
    wanted = [("employee_id", "TEXT"), ("nickname", "TEXT"), ("valid_until", "DATETIME")]
    for row, (name, kind) in zip(rows.all(), wanted, strict=True):
        row.get_by_label("Attribute name").fill(name)
        row.get_by_label("Type").select_option(kind)
    rows.nth(1).get_by_label("Remove this attribute").check()
    type_lists = page.locator("#attribute-rows select[name=attribute_type]")
    readable: dict[str, list] = {}
    for size, viewport in [("desktop", DESKTOP), ("tablet", TABLET), ("phone", PHONE)]:
        page.set_viewport_size(viewport)
        readable[size] = [select.evaluate(TYPE_READABLE) for select in type_lists.all()]
        look(f"forms-schema-{size}")
    squeezed = {
        size: found
        for size, measured in readable.items()
        if (found := [m for m in measured if m["widest"] > m["room"] or m["scrolls"]])
    }
    assert squeezed == {}, "the Type list is too narrow to read"
    page.set_viewport_size(DESKTOP)
    page.get_by_role("button", name="Create schema").click()
    expect(page.get_by_text("Schema Staff badge created as a draft.")).to_be_visible()
    kept = page.locator("main table td[data-label=Name]")
    expect(kept).to_have_text(["employee_id", "valid_until"])
    reload_reads_only()
    assert org.count("/schemas?limit=100", name="Staff badge") == 1
    look("forms-schema-created")

    # On a phone every table keeps its key cells on screen, whole, labelled by their column.
    page.set_viewport_size(PHONE)
    individuals = f"/dashboard/verifications/{org.verification_id}/individuals"
    key_cells = {
        "overview": ("/dashboard/", ["Outcome", "Reason"]),
        "individuals": (individuals, ["Status", "Reason"]),
        "credentials": ("/dashboard/credentials", ["Status"]),
        "webhooks": ("/dashboard/webhooks", ["State"]),
        "deliveries": (endpoint_page.removeprefix(org.base), ["State", "Response"]),
        "audit": ("/dashboard/audit", ["Action", "Record"]),
    }
    hidden: dict[str, list] = {}
    for name, (path, labels) in key_cells.items():
        page.goto(f"{org.base}{path}")
        expect(page.locator("main table").first).to_be_visible()
        for label in labels:
            cells = page.locator(f'main table td[data-label="{label}"]:not(:empty)')
            assert cells.count() > 0, f"{name}: no {label} cell"
            for cell in cells.all():
                shown = cell.evaluate(SHOWN_WHOLE)
                if not all(v for k, v in shown.items() if k != "label") or shown["label"] != (
                    f'"{label}"'
                ):
                    hidden.setdefault(name, []).append({label: shown})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        look(f"phone-{name}")
    assert hidden == {}, "key cells hidden or clipped on a phone"
    expect(page.locator("main")).to_contain_text("verification.created")
    page.goto(f"{org.base}{individuals}")
    expect(page.locator('main td[data-label="Reason"]', has_text=CONDITION)).to_be_visible()

    # The delivery and mdoc signer pages read on a phone too.
    page.goto(delivery_page)
    exchange_shown(page)
    look("phone-delivery")
    page.goto(f"{org.base}/dashboard/mdoc-signer")
    signer_shown(page)
    look("phone-mdoc-signer")

    assert {name: found for name, found in findings.items() if found} == {}
    assert_clean(page, problems)
    page.context.close()
