"""The integrations section: keys created on the page, shown once, deleted with a confirmation."""

from __future__ import annotations

import re
import uuid

from factories import make_staff
from staff_support import sign_in, submit, text_of

from app.organizations.models import Plan

KEY_SHOWN = re.compile(r'<code id="new-key">([^<]+)</code>')


def create_key(browser, name: str = "Production backend") -> str:
    response = submit(browser, "/dashboard/integrations", {"name": name}, follow_redirects=True)
    assert response.status_code == 200, text_of(response)
    match = KEY_SHOWN.search(text_of(response))
    assert match, "the key is shown on the page the creation redirects to"
    return match.group(1)


def lookup_with(client, key: str):
    """An authenticated backend call; an unknown verification proves the key was accepted."""
    return client.get(
        f"/verifications/{uuid.uuid4()}/individuals/customer-1", headers={"apikey": key}
    )


def test_the_list_page_renders_with_an_empty_state_and_a_create_form(browser):
    response = browser.get("/dashboard/integrations")
    assert response.status_code == 200
    page = text_of(response)
    assert "<h1>Integrations</h1>" in page
    assert "No integrations yet. Create one to get a key for your backend." in page
    assert 'action="/dashboard/integrations"' in page and 'for="integration-name"' in page
    assert 'aria-current="page"' in page and ">Integrations</a>" in page


def test_the_created_key_is_shown_once_with_a_copy_button_and_how_to_send_it(browser):
    posted = submit(browser, "/dashboard/integrations", {"name": "Production backend"})
    assert posted.status_code == 303
    assert posted.headers["Location"] == "/dashboard/integrations"
    response = browser.get(posted.headers["Location"])
    page = text_of(response)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    key = KEY_SHOWN.search(page).group(1)
    assert key.startswith("vk_")
    assert f'<code id="new-key">{key}</code> <button type="button" data-copy="new-key">' in page
    assert "will not be shown again" in page and "<code>apikey</code> header" in page
    assert key not in posted.headers["Location"]
    assert key not in text_of(browser.get("/dashboard/integrations")), "shown once"
    assert not any(key in c for c in response.headers.getlist("Set-Cookie"))


def test_the_key_shown_authenticates_against_the_json_api(browser, client):
    key = create_key(browser)
    response = lookup_with(client, key)
    assert response.status_code == 400
    assert response.get_json()["error"] == "sql: no rows in result set"
    assert lookup_with(client, "vk_not-a-key").status_code == 401


def test_the_list_shows_name_prefix_and_use_but_never_the_key(browser, client):
    key = create_key(browser, "Billing service")
    page = text_of(browser.get("/dashboard/integrations"))
    assert key not in page
    assert "Billing service" in page and f"<code>{key[:10]}…</code>" in page
    assert "never" in page
    assert client.get("/recipients", headers={"apikey": key}).status_code == 200
    page = text_of(browser.get("/dashboard/integrations"))
    assert key not in page and "never" not in page


def test_the_integration_is_visible_through_the_json_api(browser, client, owner):
    key = create_key(browser, "Billing service")
    listed = client.get("/integrations", headers=owner.headers()).get_json()
    assert [(r["name"], r["key_prefix"]) for r in listed["results"]] == [
        ("Billing service", key[:10])
    ]


def test_an_empty_name_re_renders_the_form_with_the_message(browser, client, owner):
    response = submit(browser, "/dashboard/integrations", {"name": "   "})
    assert response.status_code == 400
    page = text_of(response)
    assert "name: String should have at least 1 character" in page
    assert 'id="new-key"' not in page
    assert client.get("/integrations", headers=owner.headers()).get_json()["total"] == 0


def test_deleting_asks_first_and_then_the_key_fails_with_401(browser, client, owner):
    key = create_key(browser)
    integration_id = client.get("/integrations", headers=owner.headers()).get_json()["results"][0][
        "id"
    ]
    list_page = text_of(browser.get("/dashboard/integrations"))
    assert f'hx-post="/dashboard/integrations/{integration_id}/delete"' in list_page
    assert "hx-confirm=" in list_page
    confirm = browser.get(f"/dashboard/integrations/{integration_id}/delete")
    assert confirm.status_code == 200 and "stops working at once" in text_of(confirm)

    response = submit(browser, f"/dashboard/integrations/{integration_id}/delete")
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/integrations"
    assert "deleted" in text_of(browser.get("/dashboard/integrations"))
    assert lookup_with(client, key).status_code == 401


def test_an_htmx_delete_navigates_back_to_the_list(browser, owner, client):
    create_key(browser)
    integration_id = client.get("/integrations", headers=owner.headers()).get_json()["results"][0][
        "id"
    ]
    response = submit(
        browser, f"/dashboard/integrations/{integration_id}/delete", headers={"HX-Request": "true"}
    )
    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == "/dashboard/integrations"


def test_a_free_organization_sees_the_upgrade_prompt_instead_of_the_form(app, client):
    free = make_staff(app, "bob@example.test", Plan.FREE, "Tiny")
    sign_in(client, free.token)
    page = client.get("/dashboard/integrations")
    assert page.status_code == 200
    assert "Creating an integration key needs a paid plan" in text_of(page)
    assert 'action="/dashboard/integrations"' not in text_of(page)

    response = submit(client, "/dashboard/integrations", {"name": "Sneaky"})
    assert response.status_code == 402
    assert 'data-testid="upgrade-prompt"' in text_of(response)
    assert 'id="new-key"' not in text_of(response)
    assert client.get("/integrations", headers=free.headers()).get_json()["total"] == 0


def test_another_organizations_integration_reads_as_not_found(app, browser, client):
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    created = client.post("/integrations", json={"name": "theirs"}, headers=stranger.headers())
    their_id = created.get_json()["id"]
    assert browser.get(f"/dashboard/integrations/{their_id}/delete").status_code == 404
    response = submit(browser, f"/dashboard/integrations/{their_id}/delete")
    assert response.status_code == 404
    assert "belongs to another organization" in text_of(response)
    assert lookup_with(client, created.get_json()["key"]).status_code == 400
    assert submit(browser, "/dashboard/integrations/not-an-id/delete").status_code == 404


# -- the answer shape ------------------------------------------------------------------------


def test_the_answer_shape_is_chosen_on_the_integrations_page(app, browser, client, owner):
    page = text_of(browser.get("/dashboard/integrations"))
    assert 'action="/dashboard/integrations/api-compatibility"' in page
    assert re.search(r'value="verity" data-testid="api-compatibility-verity"\s+checked', page)

    saved = submit(
        browser,
        "/dashboard/integrations/api-compatibility",
        {"api_compatibility": "socious-verify"},
    )
    assert saved.status_code in (302, 303), text_of(saved)
    page = text_of(browser.get("/dashboard/integrations"))
    assert "Answer shape saved." in page
    assert re.search(
        r'value="socious-verify" data-testid="api-compatibility-socious-verify"\s+checked', page
    )
    shown = client.get(f"/organizations/{owner.organization_id}", headers=owner.headers())
    assert shown.get_json()["api_compatibility"] == "socious-verify"
    audit = text_of(browser.get("/dashboard/audit"))
    assert "api_compatibility" in audit

    refused = submit(
        browser, "/dashboard/integrations/api-compatibility", {"api_compatibility": "x"}
    )
    assert refused.status_code == 400
    assert 'id="compatibility-error"' in text_of(refused)
    shown = client.get(f"/organizations/{owner.organization_id}", headers=owner.headers())
    assert shown.get_json()["api_compatibility"] == "socious-verify"
