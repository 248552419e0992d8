"""The recipients section: list, add, edit and delete through forms, as the JSON API sees them."""

from __future__ import annotations

from factories import make_apikey, make_staff
from staff_support import submit, text_of

from app.organizations.models import Plan

ADA = {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"}


def backend(app, owner) -> dict[str, str]:
    """Headers of the organization's backend: recipients are served to integration keys."""
    return {"apikey": make_apikey(app, owner.organization_id)}


def recipients_of(client, headers) -> list[dict]:
    return client.get("/recipients?limit=100", headers=headers).get_json()["results"]


def test_the_list_page_renders_with_an_empty_state_and_the_add_form(browser):
    response = browser.get("/dashboard/recipients")
    assert response.status_code == 200
    page = text_of(response)
    assert "<h1>Recipients</h1>" in page
    assert "No recipients yet." in page
    for field in ("first_name", "last_name", "email", "customer_id"):
        assert f'name="{field}"' in page


def test_adding_a_recipient_through_the_form_shows_it_here_and_in_the_json_api(
    app, browser, client, owner
):
    response = submit(browser, "/dashboard/recipients", {**ADA, "customer_id": "cus-42"})
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/recipients"
    page = text_of(browser.get("/dashboard/recipients"))
    assert "Ada Lovelace added." in page
    assert "Ada Lovelace" in page and "ada@example.test" in page and "cus-42" in page
    [stored] = recipients_of(client, backend(app, owner))
    assert {k: stored[k] for k in (*ADA, "customer_id")} == {**ADA, "customer_id": "cus-42"}


def test_an_empty_customer_id_is_left_out_as_the_api_allows(app, browser, client, owner):
    submit(browser, "/dashboard/recipients", {**ADA, "customer_id": "  "})
    [stored] = recipients_of(client, backend(app, owner))
    assert stored["customer_id"] is None


def test_a_bad_email_re_renders_the_form_with_the_values_and_the_message(
    app, browser, client, owner
):
    response = submit(
        browser, "/dashboard/recipients", {**ADA, "email": "not an email", "customer_id": "c-1"}
    )
    assert response.status_code == 400
    page = text_of(response)
    assert "email: String should match pattern" in page
    assert 'value="Ada"' in page and 'value="Lovelace"' in page
    assert 'value="not an email"' in page and 'value="c-1"' in page
    assert recipients_of(client, backend(app, owner)) == []


def test_editing_a_recipient_changes_it_for_the_json_api_too(app, browser, client, owner):
    headers = backend(app, owner)
    created = client.post("/recipients", json=ADA, headers=headers).get_json()
    form = text_of(browser.get(f"/dashboard/recipients/{created['id']}"))
    assert 'value="ada@example.test"' in form and "<h1>Edit Ada Lovelace</h1>" in form

    response = submit(
        browser,
        f"/dashboard/recipients/{created['id']}",
        {**ADA, "last_name": "King", "customer_id": "cus-7"},
    )
    assert response.status_code == 303
    assert "Ada King saved." in text_of(browser.get("/dashboard/recipients"))
    stored = client.get(f"/recipients/{created['id']}", headers=headers).get_json()
    assert (stored["last_name"], stored["customer_id"]) == ("King", "cus-7")


def test_an_invalid_edit_re_renders_with_the_values_and_changes_nothing(
    app, browser, client, owner
):
    headers = backend(app, owner)
    created = client.post("/recipients", json=ADA, headers=headers).get_json()
    response = submit(
        browser,
        f"/dashboard/recipients/{created['id']}",
        {**ADA, "first_name": "Augusta", "email": "nope"},
    )
    assert response.status_code == 400
    page = text_of(response)
    assert "email: String should match pattern" in page
    assert 'value="Augusta"' in page and 'value="nope"' in page
    stored = client.get(f"/recipients/{created['id']}", headers=headers).get_json()
    assert (stored["first_name"], stored["email"]) == ("Ada", "ada@example.test")


def test_deleting_asks_first_then_removes_the_recipient(app, browser, client, owner):
    headers = backend(app, owner)
    created = client.post("/recipients", json=ADA, headers=headers).get_json()
    listing = text_of(browser.get("/dashboard/recipients"))
    assert f'hx-post="/dashboard/recipients/{created["id"]}/delete"' in listing
    assert "hx-confirm=" in listing
    confirm = browser.get(f"/dashboard/recipients/{created['id']}/delete")
    assert confirm.status_code == 200 and "Delete Ada Lovelace?" in text_of(confirm)

    response = submit(browser, f"/dashboard/recipients/{created['id']}/delete")
    assert response.status_code == 303
    assert "Ada Lovelace deleted." in text_of(browser.get("/dashboard/recipients"))
    assert recipients_of(client, headers) == []


def test_the_list_is_paginated(app, browser, client, owner):
    headers = backend(app, owner)
    for n in range(3):
        body = {"first_name": f"Person{n}", "last_name": "Test", "email": f"p{n}@example.test"}
        client.post("/recipients", json=body, headers=headers)
    first = text_of(browser.get("/dashboard/recipients?limit=2"))
    assert "Person0" in first and "Person1" in first and "Person2" not in first
    assert "Page 1 of 2" in first and 'href="/dashboard/recipients?page=2&amp;limit=2"' in first
    second = text_of(browser.get("/dashboard/recipients?page=2&limit=2"))
    assert "Person2" in second and "Person0" not in second and "Previous page" in second


def test_another_organizations_recipient_reads_as_not_found(app, browser, client):
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    headers = {"apikey": make_apikey(app, stranger.organization_id)}
    theirs = client.post("/recipients", json=ADA, headers=headers).get_json()["id"]

    assert "Ada" not in text_of(browser.get("/dashboard/recipients"))
    assert browser.get(f"/dashboard/recipients/{theirs}").status_code == 404
    assert browser.get(f"/dashboard/recipients/{theirs}/delete").status_code == 404
    edit = submit(browser, f"/dashboard/recipients/{theirs}", {**ADA, "first_name": "Eve"})
    assert edit.status_code == 404 and "belongs to another organization" in text_of(edit)
    assert submit(browser, f"/dashboard/recipients/{theirs}/delete").status_code == 404
    stored = client.get(f"/recipients/{theirs}", headers=headers).get_json()
    assert stored["first_name"] == "Ada"
