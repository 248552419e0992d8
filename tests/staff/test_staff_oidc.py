"""Signing in to the dashboard through a real OpenID Connect provider (npm oidc-provider).

The browser is the Flask test client, except at the provider, where ``complete_login`` plays it;
the provider's redirect to /auth/callback is handed back to the test client as a browser would.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from staff_support import csrf_of, text_of
from support.oidc import OidcProvider, complete_login

pytestmark = pytest.mark.oidc

PUBLIC_URL = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    with OidcProvider(redirect_uris=[f"{PUBLIC_URL}/auth/callback"]) as idp:
        yield idp


@pytest.fixture
def login_app(make_app, provider: OidcProvider) -> Flask:
    return make_app(
        OIDC_ISSUER=provider.issuer,
        OIDC_CLIENT_ID=provider.client_id,
        OIDC_CLIENT_SECRET=provider.client_secret,
        PUBLIC_URL=PUBLIC_URL,
    )


def start(client: FlaskClient, next_page: str = "/dashboard/") -> str:
    """Press the sign-in button; the provider's authorization URL the browser is sent to."""
    page = client.get("/dashboard/login")
    assert "Sign in with your organization" in text_of(page)
    response = client.post(
        "/dashboard/login", data={"csrf_token": csrf_of(client), "next": next_page}
    )
    assert response.status_code == 302
    return response.headers["Location"]


def back_from_provider(client: FlaskClient, callback_url: str) -> str:
    """Follow /auth/callback to the dashboard's own callback; where that sends the browser."""
    forwarded = client.get(f"/auth/callback?{urlsplit(callback_url).query}")
    assert forwarded.status_code == 302, forwarded.get_data(as_text=True)
    assert forwarded.headers["Location"].startswith("/dashboard/login/callback?")
    finished = client.get(forwarded.headers["Location"])
    assert finished.status_code == 302, finished.get_data(as_text=True)
    return finished.headers["Location"]


def session_cookie(client: FlaskClient) -> str | None:
    cookie = client.get_cookie("verity_session", path="/dashboard")
    return cookie.value if cookie else None


def test_signing_in_through_the_provider_lands_on_the_dashboard(login_app):
    client = login_app.test_client()
    auth_url = start(client)
    assert auth_url.startswith(login_app.config["OIDC_ISSUER"])
    assert back_from_provider(client, complete_login(auth_url, "dana")) == "/dashboard/"
    page = client.get("/dashboard/")
    assert page.status_code == 200
    assert "You do not belong to an organization yet" in text_of(page)


def test_the_sign_in_returns_to_the_page_asked_for(login_app):
    client = login_app.test_client()
    auth_url = start(client, next_page="/dashboard/?from=link")
    assert back_from_provider(client, complete_login(auth_url, "dana")) == "/dashboard/?from=link"


def test_a_new_token_on_every_sign_in(login_app):
    client = login_app.test_client()
    back_from_provider(client, complete_login(start(client), "erin"))
    first = session_cookie(client)
    back_from_provider(client, complete_login(start(client), "erin"))
    assert session_cookie(client) not in (None, first)


def test_a_sign_in_cannot_be_finished_in_another_browser(login_app):
    victim, attacker = login_app.test_client(), login_app.test_client()
    callback_url = complete_login(start(attacker), "mallory")
    forwarded = victim.get(f"/auth/callback?{urlsplit(callback_url).query}")
    finished = victim.get(forwarded.headers["Location"])
    assert finished.status_code == 400
    assert "started in another browser" in text_of(finished)
    assert session_cookie(victim) is None


def test_the_sign_in_page_offers_the_provider_when_one_is_configured(login_app):
    page = text_of(login_app.test_client().get("/dashboard/login"))
    assert "Sign in with your organization" in page
    assert "No identity provider is configured" not in page


def test_an_unverified_email_is_told_on_the_sign_in_page_and_reaches_no_account(login_app):
    client = login_app.test_client()
    auth_url = start(client)
    callback = complete_login(auth_url, "mallory;email=dana@example.test;unverified")
    forwarded = client.get(f"/auth/callback?{urlsplit(callback).query}")
    refused = client.get(forwarded.headers["Location"])
    assert refused.status_code == 403
    assert refused.mimetype == "text/html"  # the sign-in page, not a JSON error
    assert "Sign in with your organization" in text_of(refused)
    assert "has not verified the email address dana@example.test" in text_of(refused)
    assert session_cookie(client) is None
