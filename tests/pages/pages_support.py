"""Helpers for the person's page tests: an opened individual, the page's links, a wallet's answer."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import wallets
from factories import Staff, make_apikey, make_staff, make_verification
from wallets import Issuer, node_presentation, post_response, read_request

OPEN_WALLET = re.compile(r'id="open-wallet"[^>]*href="([^"]+)"')
POLL_URL = re.compile(r'hx-get="([^"]+)"')


@dataclass(frozen=True)
class Opened:
    """A verification and one individual of it, as a backend would have opened it."""

    staff: Staff
    verification: dict
    individual_id: str

    @property
    def path(self) -> str:
        return f"/i/{self.individual_id}"


def open_individual(app, client, email: str = "alice@example.test", **verification) -> Opened:
    staff = make_staff(app, email)
    created = make_verification(client, staff, **verification)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    return Opened(staff, created, individual["id"])


def open_policy(app, client, email: str = "bob@example.test", **verification) -> dict:
    """A policy request made by a backend: ``{"id", "token", "url", ...}``."""
    staff = make_staff(app, email)
    created = make_verification(client, staff, **verification)
    key = make_apikey(app, staff.organization_id)
    response = client.post(
        "/policy-requests", json={"verification_id": created["id"]}, headers={"apikey": key}
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def wallet_link(page_html: str) -> str:
    """The ``openid4vp://`` link of the page's "Open in your wallet app" button."""
    match = OPEN_WALLET.search(page_html)
    assert match, "the page has no wallet link"
    return html.unescape(match.group(1))


def request_id_of(link: str) -> str:
    return wallets.request_id_of(link)


def poll_url(fragment_html: str) -> str | None:
    match = POLL_URL.search(fragment_html)
    return html.unescape(match.group(1)) if match else None


def present(client, link: str, *, good: bool = True) -> dict:
    """Answer the page's link like a wallet (``direct_post``); a bad nonce makes it fail."""
    request = read_request(client, link)
    presentation = node_presentation(request, Issuer(), nonce=None if good else "stale")
    response = post_response(client, request, presentation)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def response_code(redirect_uri: str) -> str:
    return parse_qs(urlsplit(redirect_uri).query)["response_code"][0]
