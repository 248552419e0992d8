"""Signing in to the dashboard, the session cookie, CSRF and the organization switcher."""

from __future__ import annotations

from factories import make_staff
from staff_support import csrf_of, sign_in, submit, text_of

from app.organizations.models import Plan


def test_a_page_without_a_session_sends_the_browser_to_sign_in(client):
    response = client.get("/dashboard/?page=2")
    assert response.status_code == 302
    assert response.headers["Location"] == "/dashboard/login?next=/dashboard/?page%3D2"


def test_without_a_provider_the_sign_in_page_says_how_to_configure_one_and_how_to_use_a_token(
    client,
):
    page = text_of(client.get("/dashboard/login"))
    assert "OIDC_ISSUER" in page and "OIDC_CLIENT_ID" in page and "OIDC_CLIENT_SECRET" in page
    assert "tokens create" in page


def test_signing_in_with_a_token_sets_an_httponly_lax_session_cookie(client, owner):
    response = sign_in(client, owner.token)
    assert response.status_code == 302
    assert response.headers["Location"] == "/dashboard/"
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if "verity_session=" in c)
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/dashboard" in cookie
    assert client.get("/dashboard/").status_code == 200


def test_cookies_are_secure_outside_local_development(make_app, owner):
    client = make_app(ENV="production").test_client()
    response = sign_in(client, owner.token)
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if "verity_session=" in c)
    assert "Secure" in cookie


def test_a_wrong_token_is_refused_on_the_sign_in_page(client):
    response = client.post(
        "/dashboard/login/token", data={"token": "vs_nope", "csrf_token": csrf_of(client)}
    )
    assert response.status_code == 401
    assert "tokens create" in text_of(response)
    assert not any("verity_session=" in c for c in response.headers.getlist("Set-Cookie"))


def test_a_form_posted_without_the_csrf_token_is_refused(browser):
    response = browser.post("/dashboard/logout")
    assert response.status_code == 403
    assert "reload the page" in text_of(response)
    assert browser.get("/dashboard/").status_code == 200  # still signed in


def test_a_form_posted_with_another_browsers_token_is_refused(app, browser, owner):
    other = app.test_client()
    token = csrf_of(other)
    assert browser.post("/dashboard/logout", data={"csrf_token": token}).status_code == 403


def test_htmx_requests_send_the_token_as_a_header(browser):
    token = csrf_of(browser, "/dashboard/")
    response = browser.post("/dashboard/logout", headers={"X-CSRF-Token": token})
    assert response.status_code == 302


def test_the_json_api_needs_no_csrf_token(client, owner):
    response = client.post("/organizations", json={"name": "Beta"}, headers=owner.headers())
    assert response.status_code == 201


def session_cookie(client) -> str:
    return client.get_cookie("verity_session", path="/dashboard").value


def test_signing_in_with_a_token_mints_a_session_of_its_own(browser, owner):
    # The pasted token never becomes the cookie: it stays the operator's (CLI, scripts).
    assert session_cookie(browser) != owner.token
    assert session_cookie(browser).startswith("vs_")


def test_signing_out_revokes_the_session_but_not_the_token_pasted_to_sign_in(
    app, browser, owner, client
):
    copied = session_cookie(browser)
    response = submit(browser, "/dashboard/logout")
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/login"
    assert browser.get("/dashboard/").status_code == 302
    # A copy of the cookie stops working too ...
    thief = app.test_client()
    thief.set_cookie("verity_session", copied, path="/dashboard")
    assert thief.get("/dashboard/").status_code == 302
    assert client.get("/me", headers={"Authorization": f"Bearer {copied}"}).status_code == 401
    # ... while the operator's own token, pasted to sign in, still works.
    assert client.get("/me", headers=owner.headers()).status_code == 200


def test_an_expired_token_sends_the_browser_back_to_sign_in(browser, owner):
    from datetime import timedelta

    from app import clock

    clock.set_source(lambda: clock._system_now() + timedelta(hours=13))
    assert browser.get("/dashboard/").status_code == 302


def test_pages_carry_a_strict_csp_and_refuse_framing(browser):
    response = browser.get("/dashboard/")
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Cache-Control"] == "no-store"


def test_the_overview_shows_counts_of_the_acting_organization(browser):
    page = text_of(browser.get("/dashboard/"))
    assert "Acme" in page
    assert "No one has presented a credential yet" in page


def test_a_user_without_an_organization_is_welcomed_with_what_to_do(app, client):
    from app.extensions import db
    from app.identity.operations import create_user, issue_session_token

    with app.app_context():
        token, _ = issue_session_token(create_user("new@example.test"), 12)
        db.session.commit()
    sign_in(client, token)
    assert "You do not belong to an organization yet" in text_of(client.get("/dashboard/"))


def _second_organization(client, owner) -> str:
    created = client.post("/organizations", json={"name": "Beta"}, headers=owner.headers())
    return created.get_json()["id"]


def test_the_switcher_sets_the_acting_organization_like_current_identity(
    app, browser, owner, client
):
    beta = _second_organization(client, owner)
    assert "Acme</option>" in text_of(browser.get("/dashboard/"))
    response = submit(browser, "/dashboard/switch", {"organization_id": beta})
    assert response.status_code == 302
    page = text_of(browser.get("/dashboard/"))
    assert "<h1>Beta</h1>" in page


def test_switching_to_an_organization_one_is_not_a_member_of_is_forbidden(app, browser):
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    response = submit(browser, "/dashboard/switch", {"organization_id": stranger.organization_id})
    assert response.status_code == 403
    assert "<h1>Acme</h1>" in text_of(browser.get("/dashboard/"))


def test_a_switch_to_a_garbage_value_is_forbidden(browser):
    assert submit(browser, "/dashboard/switch", {"organization_id": "x"}).status_code == 403


def test_an_unknown_dashboard_page_is_a_page_not_json(browser):
    response = browser.get("/dashboard/nope")
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/html")
