"""Issuing in a real browser (Debian's Chromium through Playwright) against the app on a real
loopback server: staff issue a credential from the dashboard, and the person's offer page shows
the QR code of its offer. axe-core checks every new page at the widths the dashboard sweep uses;
screenshots land in test-output/screenshots/ (``credentials-*.png``, ``offer-*.png``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
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
    read_qr_code,
    screenshot,
    watched_page,
)
from factories import Staff, make_apikey, make_staff
from flask import Flask
from flask.testing import FlaskClient
from support.issuing import take_offer

from app.jobs.queue import queue_of

WIDTHS = [
    {"viewport": DESKTOP},
    {"viewport": PHONE},
    {"viewport": PHONE, "color_scheme": "dark"},
]
WIDTH_IDS = ["desktop", "phone", "phone-dark"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@dataclass
class Issuer:
    """A PRO organization on a loopback server, with a recipient and a published schema."""

    base: str
    app: Flask
    client: FlaskClient
    owner: Staff
    recipient_id: str
    schema_id: str

    def issue(self, **extra: Any) -> dict:
        """A credential through the JSON API, as a backend would issue it."""
        body = {
            "name": "Nurse licence",
            "description": "Registered nurse, Acme Hospital",
            "schema_id": self.schema_id,
            "recipient_id": self.recipient_id,
            "claims": [{"name": "licence_number", "value": "RN-1234"}],
            **extra,
        }
        response = self.client.post("/credentials", json=body, headers=self.owner.headers())
        assert response.status_code == 201, response.get_json()
        return response.get_json()


@pytest.fixture
def issuer(make_app) -> Iterator[Issuer]:
    delegate = Delegate()
    with loopback_server(delegate) as base:
        app = delegate.app = make_app(PUBLIC_URL=base)
        client = app.test_client()
        owner = make_staff(app)
        key = make_apikey(app, owner.organization_id)
        recipient = client.post(
            "/recipients",
            json={"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"},
            headers={"apikey": key},
        ).get_json()["id"]
        schema = client.post(
            "/schemas",
            json={
                "name": "Nurse licence",
                "vct": "https://acme.test/nurse",
                "attributes": [
                    {"name": "licence_number", "type": "TEXT"},
                    {"name": "valid_until", "type": "DATETIME"},
                    {"name": "grade", "type": "NUMBER"},
                ],
            },
            headers=owner.headers(),
        ).get_json()["id"]
        published = client.post(f"/schemas/{schema}/publish", headers=owner.headers())
        assert published.status_code == 200, published.get_json()
        yield Issuer(base, app, client, owner, recipient, schema)


def signed_in(browser: Any, issuer: Issuer, problems: list[str], **options: Any) -> Any:
    from playwright.sync_api import expect

    viewport = options.pop("viewport", DESKTOP)
    page = watched_page(browser, viewport, problems, **options)
    page.goto(f"{issuer.base}/dashboard/login")
    if not page.get_by_label("Session token").is_visible():
        page.get_by_text("Sign in with a session token").click()
    page.get_by_label("Session token").fill(issuer.owner.token)
    page.get_by_role("button", name="Sign in with the token").click()
    expect(page.get_by_role("heading", name="Acme")).to_be_visible()
    return page


def test_staff_issue_a_credential_and_the_offer_page_shows_its_qr(browser, issuer):
    from playwright.sync_api import expect

    problems: list[str] = []
    findings: dict[str, list] = {}
    page = signed_in(browser, issuer, problems)

    def look(name: str) -> None:
        screenshot(page, f"credentials-{name}")
        findings[name] = axe_findings(page)

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Credentials").click()
    expect(page.get_by_role("heading", name="Credentials", exact=True)).to_be_visible()
    look("empty")
    page.get_by_role("button", name="Issue a credential").click()
    # htmx binds the schema picker once the page has loaded; a change before that is lost.
    expect(page.get_by_role("heading", name="Issue a credential")).to_be_visible()
    page.wait_for_load_state()
    page.get_by_label("Recipient").select_option(label="Ada Lovelace (ada@example.test)")
    page.get_by_label("Credential schema").select_option(label="Nurse licence")
    # htmx swapped in the schema's attributes, one typed input each.
    expect(page.get_by_label("licence_number")).to_be_visible()
    expect(page.get_by_label("grade")).to_have_attribute("type", "number")
    expect(page.get_by_label("valid_until")).to_have_attribute("type", "date")
    page.get_by_label("licence_number").fill("RN-1234")
    page.get_by_label("grade").fill("3")
    page.get_by_label("Ask for a code").check()
    look("new")
    page.get_by_role("button", name=re.compile(r"^Issue (and email )?the offer$")).click()
    expect(page.get_by_test_id("offer-created")).to_be_visible()
    expect(page.get_by_test_id("credential-status")).to_have_text("Offered")
    code = page.get_by_test_id("tx-code").inner_text().strip()
    assert re.fullmatch(r"\d{4,8}", code)
    look("created")
    offer_page = page.locator("#offer-page").inner_text().strip()
    assert re.fullmatch(rf"{re.escape(issuer.base)}/o/[\w-]+", offer_page)

    # The person opens the link from their email on a phone.
    person_problems: list[str] = []
    person = watched_page(browser, PHONE, person_problems)
    person.goto(offer_page)
    expect(person.get_by_role("heading", name="Acme offers you a credential")).to_be_visible()
    qr = person.get_by_role(
        "img", name="QR code that opens this credential offer in your wallet app"
    )
    expect(qr).to_be_visible()
    button = person.get_by_role("button", name="Add to your wallet")
    offer_url = button.get_attribute("href")
    assert offer_url.startswith("openid-credential-offer://?credential_offer_uri=")
    # The QR code is that same link, read back from the screen as a phone would.
    assert read_qr_code(qr.screenshot()) == [offer_url]
    expect(person.get_by_test_id("tx-code-hint")).to_contain_text("digit code")
    expect(person.locator("main")).not_to_contain_text(code)
    expect(person.locator("#status")).to_contain_text("Waiting for your wallet")
    screenshot(person, "offer-phone-waiting")
    assert axe_findings(person) == []

    # Staff revoke it: the open offer page says so without a reload.
    person.evaluate("window.__sameDocument = true")
    page.get_by_role("link", name="Back to the credentials").click()
    page.get_by_role("link", name="Nurse licence").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_test_id("credential-status")).to_have_text("Revoked")
    look("revoked")
    expect(person.locator("#status")).to_contain_text("Revoked.", timeout=10_000)
    expect(person.locator("svg.qr")).to_have_count(0)
    assert person.evaluate("window.__sameDocument === true"), "the page was reloaded"
    screenshot(person, "offer-phone-revoked")

    # The CSV upload refuses a file with problems and says where.
    page.get_by_role("link", name="Back to the credentials").click()
    page.get_by_role("button", name="Issue many from a CSV file").click()
    look("upload")
    page.get_by_label("Credential schema").select_option(label="Nurse licence")
    page.get_by_label("CSV file").set_input_files(
        files=[
            {
                "name": "nurses.csv",
                "mimeType": "text/csv",
                "buffer": b"recipient_email,licence_number,grade\n"
                b"ada@example.test,RN-1,2\nnobody@example.test,RN-2,x\n",
            }
        ]
    )
    page.get_by_role("button", name="Check the file and issue").click()
    expect(page.get_by_test_id("upload-problems")).to_contain_text("Line 3")
    look("upload-refused")
    page.get_by_label("CSV file").set_input_files(
        files=[
            {
                "name": "nurses.csv",
                "mimeType": "text/csv",
                "buffer": b"recipient_email,licence_number,grade\nada@example.test,RN-1,2\n",
            }
        ]
    )
    page.get_by_role("button", name="Check the file and issue").click()
    expect(page.get_by_test_id("upload-running")).to_be_visible()
    look("upload-running")
    queue_of(issuer.app).run_pending()  # what the worker does
    expect(page.get_by_role("heading", name="1 credential offered")).to_be_visible()
    look("uploaded")

    # Back to a fresh form and the same file again: named, and issued only once confirmed.
    nurses = {
        "name": "nurses.csv",
        "mimeType": "text/csv",
        "buffer": b"recipient_email,licence_number,grade\nada@example.test,RN-1,2\n",
    }
    page.get_by_role("button", name="Done, back to the list").click()
    page.get_by_role("button", name="Issue many from a CSV file").click()
    page.get_by_label("Credential schema").select_option(label="Nurse licence")
    page.get_by_label("CSV file").set_input_files(files=[nurses])
    page.get_by_role("button", name="Check the file and issue").click()
    expect(page.get_by_test_id("upload-repeat")).to_contain_text(
        f"by {issuer.owner.email}: 1 credential issued"
    )
    look("upload-repeat")
    page.get_by_label("CSV file").set_input_files(files=[nurses])
    page.get_by_label(re.compile("Issue this file again")).check()
    page.get_by_role("button", name="Check the file and issue").click()
    expect(page.get_by_test_id("upload-running")).to_be_visible()
    queue_of(issuer.app).run_pending()
    expect(page.get_by_role("heading", name="1 credential offered")).to_be_visible()

    assert {name: found for name, found in findings.items() if found} == {}
    assert_clean(page, problems)
    assert_clean(person, person_problems)
    page.context.close()
    person.context.close()


def authorization_page(issuer: Issuer, credential: dict) -> str:
    """The authorization page of the code flow for ``credential``: a wallet's pushed request
    (PKCE, the offer's issuer_state, the configuration's scope), then the page's address."""
    from urllib.parse import parse_qs, urlencode, urlsplit

    offer_uri = parse_qs(urlsplit(credential["offer_url"]).query)["credential_offer_uri"][0]
    offer = issuer.client.get(urlsplit(offer_uri).path).get_json()
    org = issuer.owner.organization_id
    pushed = issuer.client.post(
        f"/issuers/{org}/par",
        data={
            "response_type": "code",
            "client_id": "browser-wallet",
            "redirect_uri": "https://wallet.example.test/callback",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
            "scope": issuer.schema_id,
            "issuer_state": offer["grants"]["authorization_code"]["issuer_state"],
        },
    )
    assert pushed.status_code == 201, pushed.get_json()
    query = urlencode(
        {"client_id": "browser-wallet", "request_uri": pushed.get_json()["request_uri"]}
    )
    return f"{issuer.base}/issuers/{org}/authorize?{query}"


@pytest.mark.parametrize("options", WIDTHS, ids=WIDTH_IDS)
def test_axe_finds_nothing_serious_on_the_new_pages(browser, issuer, options, request):
    offered = issuer.issue(tx_code=True)
    taken = issuer.issue()
    take_offer(issuer.client, taken["offer_url"], base=issuer.base)
    revoked = issuer.issue()
    issuer.client.post(f"/credentials/{revoked['id']}/revoke", headers=issuer.owner.headers())
    base, one = issuer.base, f"{issuer.base}/dashboard/credentials"
    authorize = authorization_page(issuer, issuer.issue())
    pages = {
        "credentials": one,
        "credentials-revoked-filter": f"{one}?status=REVOKED",
        "credentials-new": f"{one}/new",
        "credentials-upload": f"{one}/upload",
        "credential-offered": f"{one}/{offered['id']}",
        "credential-revoke": f"{one}/{offered['id']}/revoke",
        "credential-revoked": f"{one}/{revoked['id']}",
        "credential-issued": f"{one}/{taken['id']}",
        "recipient": f"{base}/dashboard/recipients/{issuer.recipient_id}",
        "offer-offered": offered["offer_page"],
        "offer-issued": taken["offer_page"],
        "offer-revoked": revoked["offer_page"],
        "offer-unknown": f"{base}/o/no-such-offer",
        "authorize": authorize,
    }
    problems: list[str] = []
    page = signed_in(browser, issuer, problems, **dict(options))
    findings, too_wide = {}, []
    width = options["viewport"]["width"]
    for name, url in pages.items():
        page.goto(url)
        findings[name] = axe_findings(page)
        screenshot(page, f"sweep-{request.node.callspec.id}-{name}")
        if page.evaluate("document.documentElement.scrollWidth") > width:
            too_wide.append(name)
    assert {name: found for name, found in findings.items() if found} == {}
    assert too_wide == [], "these pages scroll sideways"
    assert_clean(page, problems)
    page.context.close()
