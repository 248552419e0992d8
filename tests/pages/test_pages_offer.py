"""The person's offer page ``/o/<token>``: what it shows, how it follows the offer from OFFERED
to ISSUED (or REVOKED, EXPIRED), and that it gives away nothing it should not."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from support.issuing import (
    BASE,
    offer_credential,
    poll_url,
    take_offer,
    wallet_button,
)

from app import clock
from app.pages.qr import qr_svg
from app.pages.state import WAIT_SECONDS

STRICT_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)
HANDLER_ATTRIBUTE = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
QR_LABEL = "QR code that opens this credential offer in your wallet app"


def text(response) -> str:
    return response.get_data(as_text=True)


def later(seconds: int) -> None:
    moment = clock.now() + timedelta(seconds=seconds)
    clock.set_source(lambda: moment)


def test_the_page_names_the_organization_and_credential_and_offers_both_ways(app, client):
    offered = offer_credential(app, client)
    assert offered.credential["offer_page"].startswith(f"{BASE}/o/")
    response = client.get(offered.path)
    page = text(response)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert "<title>Acme offers you a credential</title>" in page
    assert "Acme offers you a credential</h1>" in page
    assert '<p dir="auto">Nurse licence</p>' in page
    assert "Registered nurse at Acme Hospital" in page
    link = wallet_button(page)
    assert link == offered.credential["offer_url"]
    assert link.startswith("openid-credential-offer://?credential_offer_uri=")
    assert ">Add to your wallet</a>" in page
    # The QR code encodes exactly that link.
    assert str(qr_svg(link, QR_LABEL)) in page
    assert "Waiting for your wallet." in page
    assert 'hx-trigger="every 2s"' in page
    assert f'<a href="{offered.path}">Check again</a>' in page, "the no-JavaScript way to update"
    assert "tx-code-hint" not in page


def test_the_page_carries_no_inline_code_the_policy_would_block(app, client):
    page = text(client.get(offer_credential(app, client).path))
    assert not INLINE_SCRIPT.search(page)
    assert not STYLE_ATTRIBUTE.search(page)
    assert not HANDLER_ATTRIBUTE.search(page)
    assert "<style" not in page


@pytest.mark.parametrize("suffix", ["", "/status?shown=OFFERED", "/status?shown=ISSUED"])
def test_pages_and_fragments_carry_strict_headers(app, client, suffix):
    response = client.get(offer_credential(app, client).path + suffix)
    assert response.headers["Content-Security-Policy"] == STRICT_CSP
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_a_tx_code_is_hinted_at_never_shown(app, client):
    offered = offer_credential(app, client, tx_code=True)
    code = offered.credential["tx_code"]
    page = text(client.get(offered.path))
    assert f"Your wallet will ask for a {len(code)}-digit code." in page
    assert "Acme gives it to you separately" in page
    assert code not in page.replace(offered.path, "")


def test_an_unchanged_poll_is_204(app, client):
    offered = offer_credential(app, client)
    response = client.get(poll_url(text(client.get(offered.path))))
    assert response.status_code == 204
    assert response.get_data() == b""


def test_once_the_wallet_took_it_the_fragment_says_so_and_stops(app, client):
    offered = offer_credential(app, client, tx_code=True)
    page = text(client.get(offered.path))
    sd_jwt = take_offer(client, wallet_button(page), offered.credential["tx_code"])
    assert sd_jwt.endswith("~")
    fragment = text(client.get(poll_url(page)))
    assert "Added to your wallet." in fragment
    assert "hx-trigger" not in fragment
    # The wallet section is emptied out of band: nothing left to scan.
    assert '<div id="wallet" hx-swap-oob="true">\n\n</div>' in fragment
    assert "<svg" not in fragment
    reloaded = text(client.get(offered.path))
    assert "Added to your wallet." in reloaded
    assert "<svg" not in reloaded
    assert "add-to-wallet" not in reloaded


def test_a_revoked_offer_says_so_plainly(app, client):
    offered = offer_credential(app, client)
    page = text(client.get(offered.path))
    revoked = client.post(
        f"/credentials/{offered.credential['id']}/revoke", headers=offered.staff.headers()
    )
    assert revoked.status_code == 200
    fragment = text(client.get(poll_url(page)))
    assert "Revoked." in fragment
    assert "Acme has withdrawn this credential." in fragment
    assert "hx-trigger" not in fragment
    assert "<svg" not in text(client.get(offered.path))


def test_an_expired_offer_says_so_and_shows_no_code(app, client):
    offered = offer_credential(app, client)
    page = text(client.get(offered.path))
    later(30 * 24 * 3600)
    fragment = text(client.get(poll_url(page)))
    assert "This offer has expired." in fragment
    assert "Ask Acme to send you a new one." in fragment
    assert "hx-trigger" not in fragment
    reloaded = text(client.get(offered.path))
    assert "This offer has expired." in reloaded
    assert "<svg" not in reloaded


def test_a_page_left_open_stops_polling_after_a_while(app, client):
    offered = offer_credential(app, client)
    page = text(client.get(offered.path))
    later(WAIT_SECONDS + 1)
    fragment = text(client.get(poll_url(page)))
    assert "No longer checking." in fragment
    assert "hx-trigger" not in fragment
    assert f'<a href="{offered.path}">Reload the page to continue.</a>' in fragment


@pytest.mark.parametrize("path", ["/o/unknown-token", "/o/unknown-token/status?shown=OFFERED"])
def test_an_unknown_token_is_a_plain_404_page(app, client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "This page does not exist" in text(response)
    assert response.headers["Content-Security-Policy"] == STRICT_CSP
    assert "hx-trigger" not in text(response)
