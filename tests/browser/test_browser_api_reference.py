"""GET /docs: the interactive API reference, drawn in real Chromium from the service's own
/openapi.json with files the service serves itself, under the pages' strict CSP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

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

# Seconds for Swagger UI to fetch the document and draw every operation.
DRAWN_TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def base(make_app) -> Iterator[str]:
    delegate = Delegate()
    with loopback_server(delegate) as served:
        delegate.app = make_app(PUBLIC_URL=served)
        yield served


def test_docs_draws_every_operation_from_its_own_document_with_no_other_host(browser, base):
    from playwright.sync_api import expect

    problems: list[str] = []
    page = watched_page(browser, DESKTOP, problems)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    page.goto(f"{base}/")
    page.get_by_test_id("to-api-reference").click()
    page.wait_for_url(f"{base}/docs")

    # Operations of the document, by path and summary, as Swagger UI draws them.
    lookup = page.locator(
        '.opblock-get [data-path="/verifications/{verification_id}/individuals/{customer_id}"]'
    )
    expect(lookup).to_be_visible(timeout=DRAWN_TIMEOUT_MS)
    expect(page.locator('.opblock-summary-path[data-path="/healthz"]')).to_be_visible()
    operations = page.locator(".opblock").count()
    document = page.request.get(f"{base}/openapi.json").json()
    assert operations == sum(
        1
        for methods in document["paths"].values()
        for method in methods
        if method in ("get", "post", "put", "patch", "delete")
    )

    # One operation opened: its parameters and answers, from the same document.
    healthz = page.locator(".opblock-get").filter(has=page.locator('[data-path="/healthz"]'))
    healthz.locator(".opblock-summary-control").click()
    expect(healthz.locator(".responses-table")).to_be_visible()
    # Tried from the page: the request goes to this service (connect-src 'self') and answers.
    healthz.get_by_role("button", name="Try it out").click()
    healthz.get_by_role("button", name="Execute").click()
    expect(healthz.locator(".live-responses-table tbody .response-col_status").first).to_have_text(
        "200"
    )
    expect(healthz.locator(".live-responses-table tbody .microlight").first).to_contain_text('"ok"')
    screenshot(page, "api-reference")

    hosts = {urlsplit(url).netloc for url in requested if urlsplit(url).scheme in ("http", "https")}
    assert hosts == {urlsplit(base).netloc}, requested
    assert not [url for url in requested if not url.startswith((base, "data:"))], requested
    assert_clean(page, problems)


def test_docs_draws_the_backends_calls_first_and_the_wallets_after_staffs(browser, base):
    """Swagger UI draws the tags in the document's ``tags`` order: by who calls."""
    from playwright.sync_api import expect

    problems: list[str] = []
    page = watched_page(browser, DESKTOP, problems)
    page.goto(f"{base}/docs")
    tags = page.locator(".opblock-tag-section .opblock-tag")
    expect(tags.first).to_be_visible(timeout=DRAWN_TIMEOUT_MS)
    drawn = [tag.get_attribute("data-tag") for tag in tags.all()]
    assert drawn[0] == "individuals", drawn
    assert drawn.index("issuer") > drawn.index("verifications"), drawn
    # The backend's four calls are in the first section, at the top of the page.
    first = page.locator(".opblock-tag-section").first
    for path in (
        "/verifications/individuals",
        "/verifications/{individual_id}/connect",
        "/verifications/{individual_id}/verify",
        "/verifications/{verification_id}/individuals/{customer_id}",
    ):
        expect(first.locator(f'.opblock-summary-path[data-path="{path}"]').first).to_be_visible()
    assert_clean(page, problems)


def test_docs_keeps_the_strict_policy_and_serves_only_the_renderer_files(client):
    page = client.get("/docs")
    assert page.status_code == 200
    policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy
    assert "style-src 'self';" in policy
    assert "unsafe" not in policy
    assert "<script>" not in page.get_data(as_text=True)

    from app.api.reference import ASSET_VERSION

    bundle = client.get(f"/docs/assets/{ASSET_VERSION}/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert bundle.mimetype == "text/javascript"
    assert "max-age=31536000" in bundle.headers["Cache-Control"]
    bundle.close()
    # Another version's address, or another file of the package, is not served.
    assert client.get("/docs/assets/0.0.1/swagger-ui-bundle.js").status_code == 404
    assert client.get(f"/docs/assets/{ASSET_VERSION}/oauth2-redirect.html").status_code == 404
    assert client.get(f"/docs/assets/{ASSET_VERSION}/..%2Fflask_swagger_ui.py").status_code == 404


def test_the_document_names_its_interactive_reference(client):
    document = client.get("/openapi.json").get_json()
    assert document["externalDocs"]["url"] == "https://verity.test/docs"  # PUBLIC_URL
