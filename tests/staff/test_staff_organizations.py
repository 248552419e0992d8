"""The organizations section: memberships, creating and joining, members, invitation codes."""

from __future__ import annotations

import re

from factories import Staff, make_staff
from flask import Flask
from flask.testing import FlaskClient
from staff_support import sign_in, submit, text_of

from app.extensions import db
from app.identity.operations import create_user, issue_session_token
from app.organizations.models import Plan

NEW_CODE = re.compile(r'<code id="new-code">(vo_[^<]+)</code>')


def browser_for(app: Flask, token: str) -> FlaskClient:
    client = app.test_client()
    assert sign_in(client, token).status_code == 302
    return client


def newcomer(app: Flask, email: str = "newcomer@example.test") -> tuple[str, FlaskClient]:
    """A signed-in user who belongs to no organization yet, and their browser."""
    with app.app_context():
        token, _ = issue_session_token(create_user(email, "Newcomer"), 12)
        db.session.commit()
        db.session.remove()
    return token, browser_for(app, token)


def api_code(client: FlaskClient, staff: Staff, role: str = "MEMBER") -> str:
    response = client.post(
        f"/organizations/{staff.organization_id}/codes",
        json={"role": role, "days": 7},
        headers=staff.headers(),
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["code"]


def detail(organization_id: str) -> str:
    return f"/dashboard/organizations/{organization_id}"


# -- the list, creating, joining -------------------------------------------------------------


def test_the_page_lists_memberships_with_role_plan_and_the_acting_marker(browser, owner, client):
    client.post("/organizations", json={"name": "Beta"}, headers=owner.headers())
    response = browser.get("/dashboard/organizations")
    assert response.status_code == 200
    page = text_of(response)
    assert page.count('data-testid="membership-row"') == 2
    assert "Acme" in page and "Beta" in page
    assert "Owner" in page and ">Pro<" in page and ">Free<" in page
    assert page.count('data-testid="acting-marker"') == 1
    # One switch form in the table (for Beta, not the acting Acme), posting to the switcher.
    assert page.count("Switch<span") == 1
    assert 'action="/dashboard/switch"' in page
    assert 'name="next" value="/dashboard/organizations"' in page
    assert 'aria-current="page"' in page


def test_creating_an_organization_through_the_form_makes_it_the_acting_one(browser, owner, client):
    response = submit(browser, "/dashboard/organizations", {"name": "  Globex  "})
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/organizations"
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if "verity_org=" in c)
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/dashboard" in cookie
    assert "Created Globex" in text_of(browser.get("/dashboard/organizations"))
    assert "<h1>Globex</h1>" in text_of(browser.get("/dashboard/"))
    created = next(
        m
        for m in client.get("/organizations", headers=owner.headers()).get_json()["results"]
        if m["organization"]["name"] == "Globex"
    )
    assert created["role"] == "OWNER" and created["organization"]["plan"] == "FREE"


def test_an_empty_name_re_renders_the_form_with_the_message(browser, owner, client):
    response = submit(browser, "/dashboard/organizations", {"name": "   "})
    assert response.status_code == 400
    assert 'data-testid="create-error"' in text_of(response)
    assert "name" in text_of(response)
    listed = client.get("/organizations", headers=owner.headers()).get_json()
    assert listed["total"] == 1


def test_a_user_without_an_organization_can_create_one_here(app):
    _, browser = newcomer(app)
    page = text_of(browser.get("/dashboard/organizations"))
    assert "You do not belong to an organization yet" in page
    response = submit(browser, "/dashboard/organizations", {"name": "Fresh Start"})
    assert response.status_code == 303
    assert "<h1>Fresh Start</h1>" in text_of(browser.get("/dashboard/"))


def test_joining_with_a_code_minted_through_the_json_api(app, client):
    globex = make_staff(app, "gina@example.test", Plan.PRO, "Globex")
    code = api_code(client, globex)
    token, browser = newcomer(app)
    response = submit(browser, "/dashboard/organizations/join", {"code": code})
    assert response.status_code == 303
    page = text_of(browser.get("/dashboard/organizations"))
    assert "Globex" in page and "You are a member of Globex as member" in page
    assert "You are now acting for it" in page
    assert 'data-testid="acting-marker"' in page
    assert 'data-testid="membership-row"' in page
    me = client.get("/me", headers={"Authorization": f"Bearer {token}"}).get_json()
    assert [m["organization"]["name"] for m in me["memberships"]] == ["Globex"]


def test_an_unknown_code_is_a_404_page_with_the_message(browser):
    response = submit(browser, "/dashboard/organizations/join", {"code": "vo_nope"})
    assert response.status_code == 404
    page = text_of(response)
    assert "No such organization code" in page
    assert 'data-testid="join-error"' in page
    assert 'value="vo_nope"' in page


def test_an_expired_code_is_refused_like_an_unknown_one(app, client, browser):
    from datetime import timedelta

    from app import clock

    code = api_code(client, make_staff(app, "gina@example.test", Plan.PRO, "Globex"))
    clock.set_source(lambda: clock._system_now() + timedelta(days=8))
    _, late = newcomer(app)
    assert submit(late, "/dashboard/organizations/join", {"code": code}).status_code == 404


# -- one organization and its invitation codes ------------------------------------------------


def test_the_detail_page_lists_members_with_their_roles(app, browser, owner, client):
    _, bob = newcomer(app, "bob@example.test")
    submit(bob, "/dashboard/organizations/join", {"code": api_code(client, owner, "ADMIN")})
    response = browser.get(detail(owner.organization_id))
    assert response.status_code == 200
    page = text_of(response)
    assert page.count('data-testid="member-row"') == 2
    assert "alice@example.test" in page and "bob@example.test" in page
    assert ">Owner<" in page and ">Admin<" in page
    assert "Mint an invitation code" in page
    assert 'aria-current="page"' in page


def test_minting_a_code_shows_it_once_and_it_works_on_the_json_api(app, browser, owner, client):
    response = submit(
        browser,
        f"{detail(owner.organization_id)}/codes",
        {"role": "ADMIN", "days": "3"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert response.history[0].status_code == 303
    page = text_of(response)
    code = NEW_CODE.search(page).group(1)
    assert '<button type="button" data-copy="new-code">Copy</button>' in page
    assert "It expires on" in page
    assert not any(code in c for c in response.headers.getlist("Set-Cookie"))
    assert code not in text_of(browser.get(detail(owner.organization_id)))
    token, _ = newcomer(app, "carol@example.test")
    joined = client.post(
        "/organizations/join", json={"code": code}, headers={"Authorization": f"Bearer {token}"}
    )
    assert joined.status_code == 200
    assert joined.get_json()["role"] == "ADMIN"
    assert joined.get_json()["organization"]["id"] == owner.organization_id


def test_days_out_of_range_re_render_the_form_with_the_message(browser, owner):
    response = submit(
        browser, f"{detail(owner.organization_id)}/codes", {"role": "MEMBER", "days": "91"}
    )
    assert response.status_code == 400
    page = text_of(response)
    assert "days" in page and 'value="91"' in page
    assert 'id="new-code"' not in page


def test_an_ordinary_member_cannot_mint_a_code(app, owner, client):
    _, member = newcomer(app, "dave@example.test")
    submit(member, "/dashboard/organizations/join", {"code": api_code(client, owner)})
    page = text_of(member.get(detail(owner.organization_id)))
    assert "Only owners and admins can mint invitation codes" in page
    assert "Mint an invitation code</button>" not in page
    response = submit(member, f"{detail(owner.organization_id)}/codes", {"role": "MEMBER"})
    assert response.status_code == 403
    assert 'id="new-code"' not in text_of(response)


def test_a_free_organization_sees_the_upgrade_prompt(app):
    free = make_staff(app, "fred@example.test", Plan.FREE, "Freebies")
    browser = browser_for(app, free.token)
    page = text_of(browser.get(detail(free.organization_id)))
    assert 'data-testid="upgrade-needed"' in page and "Free plan" in page
    response = submit(browser, f"{detail(free.organization_id)}/codes", {"role": "MEMBER"})
    assert response.status_code == 402
    assert 'data-testid="upgrade-prompt"' in text_of(response)


def test_codes_are_minted_for_the_acting_organization_only(browser, owner, client):
    beta = client.post("/organizations", json={"name": "Beta"}, headers=owner.headers())
    beta_id = beta.get_json()["id"]
    page = text_of(browser.get(detail(beta_id)))
    assert "Invitation codes are minted for the organization you are acting for" in page
    assert f'name="organization_id" value="{beta_id}"' in page
    response = submit(browser, f"{detail(beta_id)}/codes", {"role": "MEMBER", "days": "7"})
    assert response.status_code == 403
    assert "switch to Beta first" in text_of(response)
    assert 'id="new-code"' not in text_of(response)


def test_another_organizations_page_reads_as_not_found(app, browser):
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    response = browser.get(detail(stranger.organization_id))
    assert response.status_code == 404
    assert "Evil" not in text_of(response)
    minted = submit(browser, f"{detail(stranger.organization_id)}/codes", {"role": "MEMBER"})
    assert minted.status_code == 404
    assert browser.get(detail("not-a-uuid")).status_code == 404


# -- the credential issuer's settings --------------------------------------------------------


def test_owners_set_the_issuers_wallet_attestation_on_the_page(browser, owner, client):
    page = text_of(browser.get(detail(owner.organization_id)))
    assert 'name="wallet_attestation"' in page
    assert '<option value="optional" selected>' in page

    saved = submit(
        browser,
        f"/dashboard/organizations/{owner.organization_id}/issuer",
        {"wallet_attestation": "required"},
    )

    assert saved.status_code == 303
    shown = client.get(f"/organizations/{owner.organization_id}", headers=owner.headers())
    assert shown.get_json()["wallet_attestation"] == "required"
    metadata = client.get(
        f"/.well-known/oauth-authorization-server/issuers/{owner.organization_id}"
    ).get_json()
    assert metadata["token_endpoint_auth_methods_supported"] == ["attest_jwt_client_auth"]
    refused = submit(
        browser,
        f"/dashboard/organizations/{owner.organization_id}/issuer",
        {"wallet_attestation": "sometimes"},
    )
    assert refused.status_code == 400
