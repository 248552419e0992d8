"""The person's page: what it shows, how it updates, and who is shown the result."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
import segno
from pages_support import (
    open_individual,
    open_policy,
    poll_url,
    present,
    request_id_of,
    response_code,
    wallet_link,
)

from app import clock
from app.pages.qr import qr_svg
from app.pages.state import WAIT_SECONDS, safe_return_url

RETURN_URL = "https://acme.test/welcome-back"
STRICT_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)
HANDLER_ATTRIBUTE = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.IGNORECASE)


def later(minutes: int) -> None:
    moment = clock.now() + timedelta(minutes=minutes)
    clock.set_source(lambda: moment)


def test_the_page_names_the_organization_and_purpose_and_offers_both_ways_to_answer(app, client):
    opened = open_individual(app, client)
    response = client.get(opened.path)
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert "Acme asks you to share a credential" in page
    assert "Adult residents" in page
    assert "We check that you are of age and live in the EU." in page
    # The schema's display names, not its keys.
    shown = re.sub(r"</?bdi>", "", page)
    assert "Current first names, Current last names, Date of birth, Country of residence." in shown
    link = wallet_link(page)
    assert link.startswith("openid4vp://?client_id=redirect_uri%3Ahttps%3A%2F%2Fverity.test")
    # The page hands out the individual's connect link: the one the API gives within its window.
    api = client.get(f"/verifications/{opened.individual_id}/connect").get_json()
    assert api["connection_url"] == link
    assert api["status"] == "REQUESTED"
    assert '<svg role="img" aria-label="QR code' in page
    # The QR code encodes exactly that link.
    assert str(qr_svg(link, "QR code that opens this request in your wallet app")) in page
    assert f'data-request-url="/oid4vp/dc-requests/{request_id_of(link)}"' in page


def test_the_qr_code_carries_no_style_the_policy_would_block():
    svg = str(qr_svg("openid4vp://?request_uri=https%3A%2F%2Fverity.test%2Fx", "QR code"))
    assert svg.startswith('<svg role="img" aria-label="QR code" viewBox=')
    assert "style" not in svg
    assert segno.make_qr("x").designator  # segno is the encoder the page uses


@pytest.mark.parametrize("suffix", ["", "/status", "?response_code=wrong"])
def test_pages_and_fragments_carry_strict_headers(app, client, suffix):
    opened = open_individual(app, client)
    response = client.get(opened.path + suffix)
    assert response.headers["Content-Security-Policy"] == STRICT_CSP
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["Cache-Control"] == "no-store"


def test_error_pages_carry_strict_headers_too(client, app):
    response = client.get(f"/i/{uuid.uuid4()}")
    assert response.headers["Content-Security-Policy"] == STRICT_CSP
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["Cache-Control"] == "no-store"


def test_the_fragment_polls_every_two_seconds_while_requested(app, client):
    opened = open_individual(app, client)
    fragment = client.get(f"{opened.path}/status").get_data(as_text=True)
    assert 'hx-trigger="every 2s"' in fragment
    assert 'hx-swap="outerHTML"' in fragment
    assert poll_url(fragment).startswith(f"{opened.path}/status?request=")
    assert "Waiting for your wallet" in fragment


def test_an_unchanged_poll_is_204_so_nothing_is_swapped_or_announced(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    response = client.get(poll_url(page))
    assert response.status_code == 204
    assert response.get_data() == b""
    assert response.headers["Cache-Control"] == "no-store"


def test_the_fragment_stops_polling_when_verified(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    present(client, wallet_link(page))
    fragment = client.get(poll_url(page)).get_data(as_text=True)
    assert "hx-trigger" not in fragment
    assert "Verified." in fragment
    # The wallet section goes away: nothing is left to scan.
    assert '<div id="connect" hx-swap-oob="true">' in fragment
    assert "<svg" not in fragment
    assert RETURN_URL not in fragment


def test_the_fragment_stops_polling_when_failed_and_offers_to_try_again(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    present(client, wallet_link(page), good=False)
    fragment = client.get(poll_url(page)).get_data(as_text=True)
    assert "hx-trigger" not in fragment
    assert "Not verified." in fragment
    # Plain words for the person; the protocol's reason (a wrong nonce) is for the organization.
    assert "This credential could not be checked, so it was not accepted." in fragment
    assert "nonce" not in fragment.lower() and "key binding" not in fragment.lower()
    assert f'<a href="{opened.path}">Try again</a>' in fragment


def test_a_verified_page_neither_polls_nor_shows_a_code(app, client):
    opened = open_individual(app, client, return_url=RETURN_URL)
    present(client, wallet_link(client.get(opened.path).get_data(as_text=True)))
    page = client.get(opened.path).get_data(as_text=True)
    assert "Verified." in page
    assert "hx-trigger" not in page
    assert "<svg" not in page
    assert RETURN_URL not in page


def test_the_result_and_return_url_show_with_the_browsers_response_code(app, client):
    opened = open_individual(app, client, return_url=RETURN_URL)
    answer = present(client, wallet_link(client.get(opened.path).get_data(as_text=True)))
    redirect = answer["redirect_uri"]
    assert redirect.startswith(f"https://verity.test{opened.path}?response_code=")
    response = client.get(redirect.removeprefix("https://verity.test"))
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "You are verified" in page
    assert "Your credential was accepted for “Adult residents”. Acme has been told." in page
    assert f'href="{RETURN_URL}">Continue to Acme</a>' in page
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_return_url_carries_the_individual_and_customer_ids_it_asks_for(app, client):
    """{individual_id} and {customer_id} are filled in, percent-encoded, so the site knows
    who came back; the backend still takes the decision from the authenticated lookup."""
    template = "https://acme.test/back?customer={customer_id}&individual={individual_id}"
    opened = open_individual(app, client, return_url=template)
    assert opened.verification["return_url"] == template  # stored and answered as given
    answer = present(client, wallet_link(client.get(opened.path).get_data(as_text=True)))
    page = client.get(answer["redirect_uri"].removeprefix("https://verity.test"))
    expected = f"https://acme.test/back?customer=crm-1&amp;individual={opened.individual_id}"
    assert f'href="{expected}">Continue to Acme</a>' in page.get_data(as_text=True)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://acme.test/back?who={customer}", "unknown placeholder {customer}"),
        ("https://{customer_id}.acme.test/back", "not the host"),
    ],
)
def test_a_return_url_placeholder_that_cannot_be_filled_is_refused(app, client, url, message):
    from factories import make_staff, verification_body

    staff = make_staff(app)
    response = client.post(
        "/verifications", json=verification_body(return_url=url), headers=staff.headers()
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"
    assert message in response.get_json()["error"]


def test_the_return_url_is_described_in_the_openapi_document(client):
    schemas = client.get("/openapi.json").get_json()["components"]["schemas"]
    for name in ("VerificationIn", "VerificationPatch", "VerificationOut"):
        described = schemas[name]["properties"]["return_url"].get("description", "")
        assert "{customer_id}" in described and "{individual_id}" in described, name
        assert "authenticated lookup" in described


def test_a_failed_result_says_why_and_offers_a_retry(app, client):
    opened = open_individual(app, client, return_url=RETURN_URL)
    answer = present(
        client, wallet_link(client.get(opened.path).get_data(as_text=True)), good=False
    )
    page = client.get(f"{opened.path}?response_code={response_code(answer['redirect_uri'])}")
    text = page.get_data(as_text=True)
    assert "You could not be verified" in text
    assert "This credential could not be checked, so it was not accepted." in text
    assert "nonce" not in text.lower() and "key binding" not in text.lower()
    # One next step: trying again, not also going back or closing the page.
    assert f'<a role="button" href="{opened.path}" id="next-step">Try again</a>' in text
    assert "Return to Acme" not in text and "close this page" not in text


@pytest.mark.parametrize("code", ["wrong", "", "x" * 32])
def test_a_wrong_code_gets_a_neutral_page_never_the_result(app, client, code):
    opened = open_individual(app, client, return_url=RETURN_URL)
    present(client, wallet_link(client.get(opened.path).get_data(as_text=True)))
    response = client.get(f"{opened.path}?response_code={code}")
    page = response.get_data(as_text=True)
    assert response.status_code == 403
    assert "This link is not valid in this browser" in page
    assert "verified" not in page.lower().replace("not valid", "")
    assert RETURN_URL not in page


def test_a_code_for_another_individual_is_not_valid_here(app, client):
    first = open_individual(app, client, return_url=RETURN_URL)
    other = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-2", "verification_id": first.verification["id"]},
    ).get_json()
    answer = present(client, wallet_link(client.get(f"/i/{other['id']}").get_data(as_text=True)))
    code = response_code(answer["redirect_uri"])
    response = client.get(f"{first.path}?response_code={code}")
    assert response.status_code == 403
    assert RETURN_URL not in response.get_data(as_text=True)


def test_a_code_before_any_answer_is_not_valid(app, client):
    opened = open_individual(app, client)
    assert client.get(f"{opened.path}?response_code=anything").status_code == 403


@pytest.mark.parametrize("path", ["/i/not-a-uuid", f"/i/{uuid.uuid4()}", "/p/vp_unknown"])
def test_an_unknown_page_is_a_404_page_for_people(app, client, path):
    for suffix in ("", "?response_code=abc"):
        response = client.get(path + suffix)
        assert response.status_code == 404
        assert response.mimetype == "text/html"
        assert "This page does not exist" in response.get_data(as_text=True)


def test_an_unknown_page_s_fragment_is_a_fragment_that_ends_polling(app, client):
    response = client.get(f"/i/{uuid.uuid4()}/status")
    fragment = response.get_data(as_text=True)
    assert response.status_code == 404
    assert fragment.lstrip().startswith('<div id="status"')
    assert "hx-trigger" not in fragment


def test_the_policy_page_works_like_the_individual_page(app, client):
    policy = open_policy(app, client, return_url=RETURN_URL)
    path = f"/p/{policy['token']}"
    page = client.get(path).get_data(as_text=True)
    assert "Acme asks you to share a credential" in page
    assert poll_url(page).startswith(f"{path}/status?request=")
    answer = present(client, wallet_link(page))
    assert answer["redirect_uri"].startswith(f"{policy['url']}?response_code=")
    fragment = client.get(poll_url(page)).get_data(as_text=True)
    assert "Verified." in fragment
    assert "hx-trigger" not in fragment
    result = client.get(f"{path}?response_code={response_code(answer['redirect_uri'])}")
    assert "You are verified" in result.get_data(as_text=True)
    assert RETURN_URL in result.get_data(as_text=True)
    assert client.get(f"{path}?response_code=wrong").status_code == 403


def test_a_failed_policy_request_is_final(app, client):
    policy = open_policy(app, client)
    path = f"/p/{policy['token']}"
    present(client, wallet_link(client.get(path).get_data(as_text=True)), good=False)
    page = client.get(path).get_data(as_text=True)
    assert "Not verified." in page
    assert "This credential could not be checked, so it was not accepted." in page
    assert "nonce" not in page.lower()
    assert "Ask Acme for a new link" in page
    assert "hx-trigger" not in page
    assert "<svg" not in page


def test_an_expired_policy_request_is_a_410_page(app, client):
    policy = open_policy(app, client)
    later(16)
    response = client.get(f"/p/{policy['token']}")
    assert response.status_code == 410
    assert "This request has expired" in response.get_data(as_text=True)
    assert response.headers["Content-Security-Policy"] == STRICT_CSP
    fragment = client.get(f"/p/{policy['token']}/status")
    assert fragment.status_code == 410
    assert "hx-trigger" not in fragment.get_data(as_text=True)


def test_a_fresh_code_replaces_the_old_one_after_the_window(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    first = wallet_link(page)
    later(1)
    assert client.get(poll_url(page)).status_code == 204
    later(3)
    fragment = client.get(poll_url(page)).get_data(as_text=True)
    assert '<div id="connect" hx-swap-oob="true">' in fragment
    fresh = wallet_link(fragment)
    assert fresh != first
    assert str(qr_svg(fresh, "QR code that opens this request in your wallet app")) in fragment
    # It keeps polling, now for the new link.
    assert f"request={request_id_of(fresh)}" in poll_url(fragment)
    assert wallet_link(client.get(opened.path).get_data(as_text=True)) == fresh


def test_after_a_failure_the_page_waits_for_a_fresh_link_then_offers_it(app, client):
    opened = open_individual(app, client)
    present(client, wallet_link(client.get(opened.path).get_data(as_text=True)), good=False)
    # Within the window the only link is the answered one: no code is shown for it.
    page = client.get(opened.path).get_data(as_text=True)
    assert "Not verified." in page
    assert "<svg" not in page
    assert "A new code for your wallet will appear here in a moment." in page
    assert 'hx-trigger="every 2s"' in page
    later(3)
    fragment = client.get(poll_url(page)).get_data(as_text=True)
    assert "<svg" in fragment
    assert 'hx-trigger="every 2s"' in fragment
    # The earlier failure does not end the wait; a new answer does.
    present(client, wallet_link(fragment))
    final = client.get(poll_url(fragment)).get_data(as_text=True)
    assert "Verified." in final
    assert "hx-trigger" not in final


def test_a_forgotten_page_stops_polling(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    moment = clock.now() + timedelta(seconds=WAIT_SECONDS + 1)
    clock.set_source(lambda: moment)
    # A page nobody watches stops polling and stops offering a code it no longer follows.
    fragment = client.get(poll_url(page)).get_data(as_text=True)
    assert "hx-trigger" not in fragment
    assert '<div id="connect" hx-swap-oob="true">' in fragment
    assert "<svg" not in fragment
    assert "No longer checking" in fragment
    assert f'<a href="{opened.path}">Reload the page to continue.</a>' in fragment


def test_no_rendered_html_has_inline_script_style_or_handlers(app, client):
    opened = open_individual(app, client, return_url=RETURN_URL)
    page = client.get(opened.path).get_data(as_text=True)
    answer = present(client, wallet_link(page), good=False)
    policy = open_policy(app, client)
    rendered = [
        page,
        client.get(f"{opened.path}/status").get_data(as_text=True),
        client.get(poll_url(page)).get_data(as_text=True),
        client.get(answer["redirect_uri"].removeprefix("https://verity.test")).get_data(
            as_text=True
        ),
        client.get(f"{opened.path}?response_code=wrong").get_data(as_text=True),
        client.get(f"/p/{policy['token']}").get_data(as_text=True),
        client.get(f"/i/{uuid.uuid4()}").get_data(as_text=True),
        client.get(f"/i/{uuid.uuid4()}/status").get_data(as_text=True),
    ]
    later(16)
    rendered.append(client.get(f"/p/{policy['token']}").get_data(as_text=True))
    for html in rendered:
        assert html.strip()
        assert not INLINE_SCRIPT.search(html), html
        assert not STYLE_ATTRIBUTE.search(html), html
        assert not STYLE_ELEMENT.search(html), html
        assert not HANDLER_ATTRIBUTE.search(html), html


def test_htmx_is_configured_to_need_no_eval_or_inline_style(app, client):
    page = client.get(open_individual(app, client).path).get_data(as_text=True)
    assert '<meta name="htmx-config" content="{&#34;allowEval&#34;: false' in page
    assert "&#34;allowScriptTags&#34;: false" in page
    assert "&#34;includeIndicatorStyles&#34;: false" in page
    assert '<script src="/static/vendor/htmx-2.0.11.min.js" defer></script>' in page
    for asset in ("vendor/htmx-2.0.11.min.js", "vendor/pico-2.1.1.min.css", "js/dc-api.js"):
        with client.get(f"/static/{asset}") as response:
            assert response.status_code == 200


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://acme.test/back", "https://acme.test/back"),
        ("http://localhost:3000/x", "http://localhost:3000/x"),
        ("javascript:alert(1)", None),
        ("//acme.test/no-scheme", None),
        ("", None),
        (None, None),
    ],
)
def test_only_http_return_urls_become_links(url, shown):
    assert safe_return_url(url) == shown
