"""Staff sign-in through a real OpenID Connect provider.

The provider is npm ``oidc-provider`` on loopback (tests/support/oidc.py). Nothing listens at the
app's redirect URI: ``complete_login`` stops at the provider's redirect, and the test hands that
redirect's query string to GET /auth/callback on the Flask test client, as a browser would.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from support.oidc import OidcProvider, complete_login

from app import clock
from app.extensions import db
from app.identity.models import LoginAttempt, User
from app.identity.operations import create_user

pytestmark = pytest.mark.oidc

PUBLIC_URL = "http://127.0.0.1:9"
CALLBACK = f"{PUBLIC_URL}/auth/callback"


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    with OidcProvider(redirect_uris=[CALLBACK]) as idp:
        yield idp


@pytest.fixture
def login_app(app: Flask, make_app, provider: OidcProvider) -> Flask:
    """An app on the test database with sign-in configured against the provider."""
    return make_app(
        OIDC_ISSUER=provider.issuer,
        OIDC_CLIENT_ID=provider.client_id,
        OIDC_CLIENT_SECRET=provider.client_secret,
        PUBLIC_URL=PUBLIC_URL,
    )


@pytest.fixture
def login_client(login_app: Flask) -> FlaskClient:
    return login_app.test_client()


def start(client: FlaskClient, **body: str) -> str:
    response = client.post("/auth", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["auth_url"]


def provider_redirect(client: FlaskClient, login: str, **body: str) -> str:
    """POST /auth, then log in at the provider; the URL it sends the browser back to."""
    redirect = complete_login(start(client, **body), login)
    assert redirect.startswith(f"{CALLBACK}?"), redirect
    return redirect


def callback_args(client: FlaskClient, login: str) -> dict[str, str]:
    """The provider's redirect parameters (code, state, iss) after a completed login."""
    query = parse_qs(urlsplit(provider_redirect(client, login)).query)
    return {name: values[0] for name, values in query.items()}


def code_and_state(client: FlaskClient, login: str) -> dict[str, str]:
    """Log in and follow the redirect to GET /auth/callback, which shows code and state."""
    query = urlsplit(provider_redirect(client, login)).query
    response = client.get(f"/auth/callback?{query}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def sign_in(client: FlaskClient, login: str) -> dict[str, str]:
    """The whole flow; the 201 body of POST /auth/session."""
    response = client.post("/auth/session", json=code_and_state(client, login))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_signing_in_through_the_provider_gives_a_token_that_works_on_me(
    login_app, login_client, provider
):
    auth_url = start(login_client)
    parts = urlsplit(auth_url)
    assert f"{parts.scheme}://{parts.netloc}" == provider.issuer
    query = parse_qs(parts.query)
    assert query["client_id"] == [provider.client_id]
    assert query["redirect_uri"] == [CALLBACK]
    assert query["code_challenge_method"] == ["S256"]
    assert set(query["scope"][0].split()) >= {"openid", "email"}
    with login_app.app_context():
        attempt = db.session.scalars(select(LoginAttempt)).one()
        assert query["state"] == [attempt.state]
        assert query["nonce"] == [attempt.nonce]
        assert attempt.code_verifier not in auth_url  # only the S256 challenge leaves the server

    redirect = complete_login(auth_url, "alice")
    shown = login_client.get(f"/auth/callback?{urlsplit(redirect).query}")
    assert shown.status_code == 200
    assert set(shown.get_json()) == {"code", "state"}

    before = clock.now()
    response = login_client.post("/auth/session", json=shown.get_json())
    assert response.status_code == 201, response.get_json()
    session = response.get_json()
    assert session["token_type"] == "Bearer"
    assert session["token"].startswith("vs_")
    expires_at = datetime.fromisoformat(session["expires_at"])
    assert before + timedelta(hours=12) <= expires_at <= clock.now() + timedelta(hours=12)

    me = login_client.get("/me", headers=bearer(session["token"]))
    assert me.status_code == 200, me.get_json()
    assert me.get_json()["user"]["email"] == "alice@example.test"
    assert me.get_json()["user"]["name"] == "Alice"
    assert me.get_json()["memberships"] == []
    with login_app.app_context():
        user = db.session.scalars(select(User)).one()
        assert user.oidc_subject == f"{provider.issuer}|alice"


def test_a_second_login_returns_a_new_token_for_the_same_user(login_client):
    first = sign_in(login_client, "alice")
    second = sign_in(login_client, "alice")
    assert second["token"] != first["token"]
    first_user = login_client.get("/me", headers=bearer(first["token"])).get_json()["user"]
    second_user = login_client.get("/me", headers=bearer(second["token"])).get_json()["user"]
    assert second_user == first_user


def test_different_provider_accounts_are_different_users(login_app, login_client):
    alice = sign_in(login_client, "alice")
    bob = sign_in(login_client, "bob")
    emails = {
        login_client.get("/me", headers=bearer(session["token"])).get_json()["user"]["email"]
        for session in (alice, bob)
    }
    assert emails == {"alice@example.test", "bob@example.test"}
    with login_app.app_context():
        assert db.session.scalar(select(func.count()).select_from(User)) == 2


def test_return_to_makes_the_callback_redirect_there_with_code_and_state(login_client):
    return_to = f"{PUBLIC_URL}/dashboard/signed-in?from=menu"
    redirect = provider_redirect(login_client, "alice", return_to=return_to)
    provided = parse_qs(urlsplit(redirect).query)

    response = login_client.get(f"/auth/callback?{urlsplit(redirect).query}")
    assert response.status_code == 302
    location = urlsplit(response.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == return_to.split("?")[0]
    handed = parse_qs(location.query)
    assert handed == {"from": ["menu"], "code": provided["code"], "state": provided["state"]}

    exchanged = login_client.post(
        "/auth/session", json={"code": handed["code"][0], "state": handed["state"][0]}
    )
    assert exchanged.status_code == 201, exchanged.get_json()


def test_a_return_to_path_on_this_service_is_accepted(login_client):
    redirect = provider_redirect(login_client, "alice", return_to="/dashboard")
    response = login_client.get(f"/auth/callback?{urlsplit(redirect).query}")
    assert response.status_code == 302
    assert urlsplit(response.headers["Location"]).path == "/dashboard"


@pytest.mark.parametrize(
    "return_to",
    [
        # Code and state are enough to get a session token (the PKCE verifier is kept
        # server-side), so they must never be handed to another site.
        "https://attacker.test/collect",
        "http://127.0.0.1:9@attacker.test/",
        "http://127.0.0.1:99/dashboard",
        "https://127.0.0.1:9/dashboard",
        "//attacker.test/x",
        "/\\attacker.test/x",
        "/\t/attacker.test/x",
        "javascript:alert(1)",
        "ftp://127.0.0.1:9/",
        "dashboard",
    ],
)
def test_a_return_to_off_this_service_is_refused(login_client, return_to):
    response = login_client.post("/auth", json={"return_to": return_to})
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_a_code_can_be_exchanged_once(login_client):
    handed = code_and_state(login_client, "alice")
    assert login_client.post("/auth/session", json=handed).status_code == 201
    again = login_client.post("/auth/session", json=handed)
    assert again.status_code == 400
    assert again.get_json()["code"] == "INVALID_REQUEST"


def test_an_unknown_state_is_refused(login_client):
    handed = code_and_state(login_client, "alice")
    forged = {**handed, "state": "not-a-state-we-issued"}
    shown = login_client.get(f"/auth/callback?{urlencode(forged)}")
    assert shown.status_code == 400
    assert shown.get_json()["code"] == "INVALID_REQUEST"
    exchanged = login_client.post("/auth/session", json=forged)
    assert exchanged.status_code == 400
    assert exchanged.get_json()["code"] == "INVALID_REQUEST"
    # The refused attempts did not spend the real login.
    assert login_client.post("/auth/session", json=handed).status_code == 201


def test_a_code_is_only_good_with_the_state_it_was_issued_for(login_client):
    first = code_and_state(login_client, "alice")
    second = code_and_state(login_client, "alice")
    crossed = login_client.post(
        "/auth/session", json={"code": first["code"], "state": second["state"]}
    )
    assert crossed.status_code == 400
    assert crossed.get_json()["code"] == "INVALID_REQUEST"


def test_a_callback_whose_iss_differs_is_refused(login_client, provider):
    args = callback_args(login_client, "alice")
    assert args["iss"] == provider.issuer
    mixed_up = {**args, "iss": "https://other-idp.test"}
    response = login_client.get(f"/auth/callback?{urlencode(mixed_up)}")
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_a_callback_without_iss_is_refused_when_the_provider_always_sends_it(login_client):
    args = callback_args(login_client, "alice")
    del args["iss"]
    response = login_client.get(f"/auth/callback?{urlencode(args)}")
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_a_callback_with_an_error_from_the_provider_is_refused(login_client):
    response = login_client.get("/auth/callback?error=access_denied&state=whatever")
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_a_login_left_unfinished_too_long_expires(login_client):
    handed = code_and_state(login_client, "alice")
    later = clock.now() + timedelta(minutes=11)
    clock.set_source(lambda: later)
    response = login_client.post("/auth/session", json=handed)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_logout_makes_the_token_unauthorized(login_client):
    token = sign_in(login_client, "alice")["token"]
    assert login_client.get("/me", headers=bearer(token)).status_code == 200
    assert login_client.delete("/auth/session", headers=bearer(token)).status_code == 204
    after = login_client.get("/me", headers=bearer(token))
    assert after.status_code == 401
    assert after.get_json()["code"] == "UNAUTHORIZED"


def test_logout_ends_only_the_session_that_made_the_call(login_client):
    kept = sign_in(login_client, "alice")["token"]
    ended = sign_in(login_client, "alice")["token"]
    assert login_client.delete("/auth/session", headers=bearer(ended)).status_code == 204
    assert login_client.get("/me", headers=bearer(kept)).status_code == 200


def test_an_expired_session_token_is_unauthorized(login_client):
    session = sign_in(login_client, "alice")
    expires_at = datetime.fromisoformat(session["expires_at"])
    clock.set_source(lambda: expires_at - timedelta(seconds=1))
    assert login_client.get("/me", headers=bearer(session["token"])).status_code == 200
    clock.set_source(lambda: expires_at + timedelta(seconds=1))
    response = login_client.get("/me", headers=bearer(session["token"]))
    assert response.status_code == 401
    assert response.get_json()["code"] == "UNAUTHORIZED"


def test_an_unreachable_provider_is_an_upstream_failure(make_app):
    client = make_app(
        OIDC_ISSUER="http://127.0.0.1:9/unreachable-idp",
        OIDC_CLIENT_ID="verity-test",
        OIDC_CLIENT_SECRET="secret",
        PUBLIC_URL=PUBLIC_URL,
    ).test_client()
    response = client.post("/auth")
    assert response.status_code == 502
    assert response.get_json()["code"] == "UPSTREAM_FAILED"


def test_a_provider_that_goes_away_during_the_exchange_is_an_upstream_failure(app, make_app):
    # A provider of its own, on a new port: the app discovers it afresh (keyed by issuer).
    with OidcProvider(redirect_uris=[CALLBACK]) as idp:
        client = make_app(
            OIDC_ISSUER=idp.issuer,
            OIDC_CLIENT_ID=idp.client_id,
            OIDC_CLIENT_SECRET=idp.client_secret,
            PUBLIC_URL=PUBLIC_URL,
        ).test_client()
        assert sign_in(client, "dana")["token_type"] == "Bearer"
        handed = code_and_state(client, "dana")
    response = client.post("/auth/session", json=handed)
    assert response.status_code == 502
    assert response.get_json()["code"] == "UPSTREAM_FAILED"


def test_sign_in_without_configuration_is_not_configured(client):
    response = client.post("/auth")
    assert response.status_code == 503
    body = response.get_json()
    assert body["code"] == "NOT_CONFIGURED"
    assert isinstance(body["error"], str) and body["error"]


def test_a_user_created_by_the_operator_is_picked_up_at_first_sign_in(
    login_app, login_client, provider
):
    with login_app.app_context():
        created = create_user("alice@example.test", "Alice Operator")
        user_id = str(created.id)
        db.session.commit()
    session = sign_in(login_client, "alice")
    me = login_client.get("/me", headers=bearer(session["token"])).get_json()
    assert me["user"] == {"id": user_id, "email": "alice@example.test", "name": "Alice Operator"}
    with login_app.app_context():
        assert db.session.scalar(select(func.count()).select_from(User)) == 1
        user = db.session.scalars(select(User)).one()
        assert user.oidc_subject == f"{provider.issuer}|alice"
    # Later logins find the user by the provider's subject.
    again = sign_in(login_client, "alice")
    assert login_client.get("/me", headers=bearer(again["token"])).get_json()["user"]["id"] == (
        user_id
    )


def sign_in_refused(client: FlaskClient, login: str, status: int, code: str) -> dict[str, str]:
    """The whole flow, refused at POST /auth/session with ``status`` and ``code``."""
    response = client.post("/auth/session", json=code_and_state(client, login))
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    assert body["code"] == code, body
    return body


def test_an_unverified_email_never_reaches_the_existing_account(login_app, login_client, provider):
    victim = sign_in(login_client, "alice")
    with login_app.app_context():
        victim_id = db.session.scalars(select(User)).one().id
    # Another provider account that typed alice's address without verifying it.
    body = sign_in_refused(
        login_client, "mallory;email=alice@example.test;unverified", 403, "EMAIL_NOT_VERIFIED"
    )
    assert "alice@example.test" in body["error"]
    with login_app.app_context():
        user = db.session.get(User, victim_id)
        assert user.oidc_subject == f"{provider.issuer}|alice"
        assert db.session.scalar(select(func.count()).select_from(User)) == 1
    # Nor the account an operator made for bob, that nobody signed in to yet.
    with login_app.app_context():
        create_user("bob@example.test", "Bob Operator")
        db.session.commit()
    sign_in_refused(
        login_client, "mallory;email=bob@example.test;unverified", 403, "EMAIL_NOT_VERIFIED"
    )
    with login_app.app_context():
        bob = db.session.scalar(select(User).where(User.email == "bob@example.test"))
        assert bob.oidc_subject is None
    assert login_client.get("/me", headers=bearer(victim["token"])).status_code == 200


def test_a_verified_email_does_not_take_an_account_bound_to_another_subject(
    login_app, login_client, provider
):
    sign_in(login_client, "alice")
    # The same address, verified, at another account of the provider: still not alice's.
    sign_in_refused(
        login_client, "alice-again;email=alice@example.test", 409, "ACCOUNT_BOUND_ELSEWHERE"
    )
    with login_app.app_context():
        user = db.session.scalars(select(User)).one()
        assert user.oidc_subject == f"{provider.issuer}|alice"
    # alice herself still signs in, to the same account.
    again = sign_in(login_client, "alice")
    assert login_client.get("/me", headers=bearer(again["token"])).get_json()["user"]["email"] == (
        "alice@example.test"
    )


def test_an_unverified_email_makes_no_new_account(login_app, login_client):
    sign_in_refused(login_client, "carol;unverified", 403, "EMAIL_NOT_VERIFIED")
    with login_app.app_context():
        assert db.session.scalar(select(func.count()).select_from(User)) == 0
