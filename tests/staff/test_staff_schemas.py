"""The schemas section: the organization's drafts beside the public schemas, created, edited and
published through forms, as the JSON API sees them."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from factories import PID_SCHEMA_ID, make_staff
from staff_support import submit, text_of

from app.organizations.models import Plan

BADGE = {
    "name": "Employee badge",
    "description": "Issued to staff on their first day.",
    "vct": "https://acme.test/credentials/badge",
    "attribute_name": ["employee_id", "start_date"],
    "attribute_description": ["Payroll number", "First day"],
    "attribute_type": ["TEXT", "DATETIME"],
}


def create(browser, form: dict | None = None) -> str:
    """Create a schema through the form and return its id, read from the redirect."""
    response = submit(browser, "/dashboard/schemas", form or BADGE)
    assert response.status_code == 303, text_of(response)
    location = response.headers["Location"]
    assert location.startswith("/dashboard/schemas/")
    return location.rsplit("/", 1)[1]


def main_of(page: str) -> str:
    """The page's own content, without the header's switcher and sign-out forms."""
    return page.split('<main id="main"', 1)[1].split("</main>", 1)[0]


def api_schema(client, owner, schema_id: str) -> dict:
    return client.get(f"/schemas/{schema_id}", headers=owner.headers()).get_json()


def test_the_list_shows_the_public_schemas_marked_and_a_create_form(browser):
    response = browser.get("/dashboard/schemas")
    assert response.status_code == 200
    page = text_of(response)
    assert "<h1>Schemas</h1>" in page
    assert "EU Person Identification Data" in page and "Mobile driving licence" in page
    assert "Public, ships with Verity" in page and "Published" in page
    assert 'name="vct"' in page and 'name="attribute_name"' in page
    assert 'name="action" value="add-attribute"' in page
    assert 'hx-get="/dashboard/schemas/attribute-row"' in page


def test_creating_with_two_attributes_matches_the_json_api(browser, client, owner):
    schema_id = create(browser)
    stored = api_schema(client, owner, schema_id)
    assert {k: stored[k] for k in ("name", "description", "vct", "published", "public")} == {
        "name": "Employee badge",
        "description": "Issued to staff on their first day.",
        "vct": "https://acme.test/credentials/badge",
        "published": False,
        "public": False,
    }
    assert stored["attributes"] == [
        {"name": "employee_id", "description": "Payroll number", "type": "TEXT"},
        {"name": "start_date", "description": "First day", "type": "DATETIME"},
    ]
    page = text_of(browser.get(f"/dashboard/schemas/{schema_id}"))
    assert "Schema Employee badge created as a draft." in page
    assert "<code>employee_id</code>" in page and "Draft" in page
    listing = text_of(browser.get("/dashboard/schemas"))
    assert "Employee badge" in listing and "Yours" in listing


def test_without_javascript_add_an_attribute_re_renders_with_one_more_row(browser, client, owner):
    form = {**BADGE, "action": "add-attribute"}
    response = submit(browser, "/dashboard/schemas", form)
    assert response.status_code == 200
    page = text_of(response)
    assert page.count('name="attribute_name"') == 3
    assert 'value="employee_id"' in page and 'value="Payroll number"' in page
    assert '<option value="DATETIME" selected>' in page
    assert 'value="Employee badge"' in page
    assert client.get("/schemas", headers=owner.headers()).get_json()["total"] == 5  # public only


def test_with_htmx_add_an_attribute_returns_one_row_fragment(browser):
    response = browser.get("/dashboard/schemas/attribute-row", headers={"HX-Request": "true"})
    assert response.status_code == 200
    fragment = text_of(response)
    assert "<html" not in fragment
    assert fragment.count('name="attribute_name"') == 1
    for kind in ("TEXT", "NUMBER", "BOOLEAN", "URL", "DATETIME", "EMAIL"):
        assert f'<option value="{kind}"' in fragment
    # Name, description, type and the remove box, then the description in each of the eight
    # other languages.
    assert fragment.count("<label for=") == 4 + 8
    assert fragment.count('name="attribute_description_') == 8


def test_empty_rows_are_ignored_and_no_attribute_at_all_is_refused_with_the_values(
    browser, client, owner
):
    form = {**BADGE, "attribute_name": ["", ""], "attribute_description": ["", ""]}
    response = submit(browser, "/dashboard/schemas", form)
    assert response.status_code == 400
    page = text_of(response)
    assert "attributes: List should have at least 1 item" in page
    assert (
        'value="Employee badge"' in page and 'value="https://acme.test/credentials/badge"' in page
    )
    assert client.get("/schemas", headers=owner.headers()).get_json()["total"] == 5


def test_a_bad_attribute_name_and_duplicates_re_render_with_the_message(browser):
    bad = submit(browser, "/dashboard/schemas", {**BADGE, "attribute_name": ["has space", "ok"]})
    assert bad.status_code == 400
    assert "attributes.0.name: String should match pattern" in text_of(bad)
    assert 'value="has space"' in text_of(bad)
    twice = submit(browser, "/dashboard/schemas", {**BADGE, "attribute_name": ["same", "same"]})
    assert twice.status_code == 400
    assert "Duplicate attribute names: same" in text_of(twice)


def test_a_draft_is_edited_with_the_same_form(browser, client, owner):
    schema_id = create(browser)
    page = text_of(browser.get(f"/dashboard/schemas/{schema_id}"))
    assert f'action="/dashboard/schemas/{schema_id}"' in page and 'value="start_date"' in page
    edit = {
        **BADGE,
        "name": "Staff badge",
        "attribute_name": ["employee_id", "start_date", "email"],
        "attribute_description": ["Payroll number", "First day", "Work email"],
        "attribute_type": ["NUMBER", "DATETIME", "EMAIL"],
    }
    response = submit(browser, f"/dashboard/schemas/{schema_id}", edit)
    assert response.status_code == 303
    stored = api_schema(client, owner, schema_id)
    assert stored["name"] == "Staff badge"
    assert [(a["name"], a["type"]) for a in stored["attributes"]] == [
        ("employee_id", "NUMBER"),
        ("start_date", "DATETIME"),
        ("email", "EMAIL"),
    ]


def test_an_attribute_row_ticked_remove_is_dropped_from_the_draft(browser, client, owner):
    schema_id = create(browser)
    page = text_of(browser.get(f"/dashboard/schemas/{schema_id}"))
    keys = re.findall(r'name="attribute_key" value="([^"]+)"', page)
    assert len(keys) == 2
    assert page.count('data-testid="remove-attribute"') == 2
    edit = {**BADGE, "attribute_key": keys, "attribute_remove": [keys[0]]}
    response = submit(browser, f"/dashboard/schemas/{schema_id}", edit)
    assert response.status_code == 303, text_of(response)
    stored = api_schema(client, owner, schema_id)
    assert [a["name"] for a in stored["attributes"]] == ["start_date"]


def test_without_javascript_a_removed_row_leaves_the_redrawn_form(browser):
    form = {
        **BADGE,
        "attribute_key": ["0", "1"],
        "attribute_remove": ["1"],
        "action": "add-attribute",
    }
    page = text_of(submit(browser, "/dashboard/schemas", form))
    assert 'value="employee_id"' in page and 'value="start_date"' not in page
    assert page.count('name="attribute_name"') == 2, "the kept row and a new blank one"


def test_a_refused_edit_changes_nothing(browser, client, owner):
    schema_id = create(browser)
    edit = {**BADGE, "name": "Renamed", "attribute_name": ["same", "same"]}
    response = submit(browser, f"/dashboard/schemas/{schema_id}", edit)
    assert response.status_code == 400
    assert "Duplicate attribute names" in text_of(response)
    assert 'value="Renamed"' in text_of(response)
    assert api_schema(client, owner, schema_id)["name"] == "Employee badge"


def test_publishing_a_draft(browser, client, owner):
    schema_id = create(browser)
    response = submit(browser, f"/dashboard/schemas/{schema_id}/publish")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/dashboard/schemas/{schema_id}"
    assert api_schema(client, owner, schema_id)["published"] is True
    page = text_of(browser.get(f"/dashboard/schemas/{schema_id}"))
    assert "Schema Employee badge published." in page
    main = main_of(page)
    # Only the display form is left: no field for the format, the type or attribute names.
    assert main.count("<form") == 1 and 'data-testid="display-form"' in main
    assert f'action="/dashboard/schemas/{schema_id}/display"' in main
    for field in ("format", "vct", "attribute_name", "attribute_type", "validity_days"):
        assert f'name="{field}"' not in main, field


def test_a_public_schema_is_read_only(browser, client, owner):
    page = text_of(browser.get(f"/dashboard/schemas/{PID_SCHEMA_ID}"))
    assert "EU Person Identification Data" in page and "<code>birthdate</code>" in page
    assert "read-only" in page
    assert "<form" not in main_of(page)
    forged = submit(browser, f"/dashboard/schemas/{PID_SCHEMA_ID}", {**BADGE, "name": "Mine"})
    assert forged.status_code == 403
    assert "Public schemas that ship with the service cannot be changed" in text_of(forged)
    assert submit(browser, f"/dashboard/schemas/{PID_SCHEMA_ID}/publish").status_code == 403
    adding = submit(browser, f"/dashboard/schemas/{PID_SCHEMA_ID}", {"action": "add-attribute"})
    assert adding.status_code == 403
    assert api_schema(client, owner, PID_SCHEMA_ID)["name"] == "EU Person Identification Data"


def test_another_organizations_schema_reads_as_not_found(app, browser, client):
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    body = {
        "name": "Secret",
        "vct": "urn:evil:1",
        "attributes": [{"name": "x", "description": "", "type": "TEXT"}],
    }
    theirs = client.post("/schemas", json=body, headers=stranger.headers()).get_json()["id"]
    assert "Secret" not in text_of(browser.get("/dashboard/schemas"))
    response = browser.get(f"/dashboard/schemas/{theirs}")
    assert response.status_code == 404
    assert "belongs to another organization" in text_of(response)
    assert submit(browser, f"/dashboard/schemas/{theirs}", BADGE).status_code == 404
    assert submit(browser, f"/dashboard/schemas/{theirs}/publish").status_code == 404
    stored = client.get(f"/schemas/{theirs}", headers=stranger.headers()).get_json()
    assert (stored["name"], stored["published"]) == ("Secret", False)


def test_a_credential_validity_is_set_in_days_or_left_empty(browser, client, owner):
    dated = create(browser, {**BADGE, "validity_days": "30"})
    assert api_schema(client, owner, dated)["validity_days"] == 30
    undated = create(browser, {**BADGE, "validity_days": ""})
    assert api_schema(client, owner, undated)["validity_days"] is None
    refused = submit(browser, "/dashboard/schemas", {**BADGE, "validity_days": "soon"})
    assert refused.status_code == 400


def test_an_mdoc_schema_is_created_through_the_form_with_its_doctype_and_namespace(
    browser, client, owner
):
    form = {
        **BADGE,
        "format": "mso_mdoc",
        "vct": "",
        "doctype": "org.example.badge.1",
        "namespace": "org.example.badge.1",
    }
    schema_id = create(browser, form)
    stored = api_schema(client, owner, schema_id)
    assert (stored["format"], stored["doctype"], stored["namespace"], stored["vct"]) == (
        "mso_mdoc",
        "org.example.badge.1",
        "org.example.badge.1",
        "",
    )
    page = browser.get(f"/dashboard/schemas/{schema_id}").get_data(as_text=True)
    assert "ISO mdoc" in page and "<code>org.example.badge.1</code>" in page


def test_the_form_says_which_field_a_format_needs(browser):
    response = submit(browser, "/dashboard/schemas", {**BADGE, "format": "jwt_vc_json"})
    assert response.status_code == 400
    assert "types is required for a jwt_vc_json schema" in text_of(response)


def test_the_form_sets_how_wallets_show_the_schema_and_a_vct_left_empty_is_the_deployments(
    browser, client, owner
):
    shown = {
        "background_color": "#12107C",
        "text_color": "#FFFFFF",
        "logo_uri": "https://acme.test/badge.png",
        "logo_alt_text": "Acme badge",
    }
    schema_id = create(browser, {**BADGE, "vct": "", **shown})
    stored = api_schema(client, owner, schema_id)
    assert {name: stored[name] for name in shown} == shown
    assert stored["vct"].endswith(f"/types/{schema_id}")
    page = browser.get(f"/dashboard/schemas/{schema_id}")
    assert 'value="#12107C"' in text_of(page)

    # Emptied on the edit form, a display field says nothing any more.
    edited = submit(
        browser, f"/dashboard/schemas/{schema_id}", {**BADGE, **shown, "text_color": ""}
    )
    assert edited.status_code == 303, text_of(edited)
    assert api_schema(client, owner, schema_id)["text_color"] is None


def test_a_colour_that_is_not_rgb_is_refused_with_the_values(browser):
    response = submit(browser, "/dashboard/schemas", {**BADGE, "background_color": "navy"})
    assert response.status_code == 400
    page = text_of(response)
    assert "background_color" in page and 'value="navy"' in page


def test_the_issuing_settings_are_ticked_saved_and_shown_again(browser, client, owner):
    schema_id = create(
        browser, {**BADGE, "authorization_code_by_mail": "on", "key_attestations_required": "on"}
    )
    stored = api_schema(client, owner, schema_id)
    assert stored["authorization_code_by_mail"] is True
    assert stored["key_attestations_required"] is True
    page = main_of(text_of(browser.get(f"/dashboard/schemas/{schema_id}")))
    assert re.search(r'<input type="checkbox" id="schema-code-by-mail"[^>]* checked', page)
    assert re.search(r'<input type="checkbox" id="schema-key-attestations"[^>]* checked', page)

    # An unticked box is not sent: saving the form turns the setting off.
    edit = {**BADGE, "key_attestations_required": "on"}
    assert submit(browser, f"/dashboard/schemas/{schema_id}", edit).status_code == 303
    stored = api_schema(client, owner, schema_id)
    assert stored["authorization_code_by_mail"] is False
    assert stored["key_attestations_required"] is True
    page = main_of(text_of(browser.get(f"/dashboard/schemas/{schema_id}")))
    assert not re.search(r'id="schema-code-by-mail"[^>]* checked', page)
    assert re.search(r'id="schema-key-attestations"[^>]* checked', page)
    assert "Key attestations required: yes" in page


def test_a_new_schema_has_neither_issuing_setting_unless_ticked(browser, client, owner):
    form = text_of(browser.get("/dashboard/schemas"))
    assert 'name="authorization_code_by_mail"' in form
    assert 'name="key_attestations_required"' in form
    stored = api_schema(client, owner, create(browser))
    assert stored["authorization_code_by_mail"] is False
    assert stored["key_attestations_required"] is False


SHOWN = {
    "name": "Staff badge",
    "description": "Worn at all times.",
    "background_color": "#12107C",
    "text_color": "#FFFFFF",
    "logo_uri": "https://acme.test/badge.png",
    "logo_alt_text": "Acme badge",
    "attribute_description": ["Staff number", "Joined on"],
    "attribute_description_fr": ["Numéro", ""],
}


def published(browser, form: dict | None = None) -> str:
    schema_id = create(browser, form or {**BADGE, "vct": ""})
    assert submit(browser, f"/dashboard/schemas/{schema_id}/publish").status_code == 303
    return schema_id


def test_a_published_schemas_display_changes_through_its_form_and_its_type_metadata_follows(
    browser, client, owner
):
    schema_id = published(browser)
    vct = api_schema(client, owner, schema_id)["vct"]
    before = client.get(urlsplit(vct).path).get_json()
    assert before["name"] == "Employee badge" and "rendering" not in before["display"][0]

    response = submit(browser, f"/dashboard/schemas/{schema_id}/display", SHOWN)
    assert response.status_code == 303, text_of(response)
    assert response.headers["Location"] == f"/dashboard/schemas/{schema_id}"
    assert "How wallets show Staff badge saved." in text_of(
        browser.get(response.headers["Location"])
    )

    stored = api_schema(client, owner, schema_id)
    assert (stored["name"], stored["description"]) == ("Staff badge", "Worn at all times.")
    assert stored["attributes"] == [
        {
            "name": "employee_id",
            "description": "Staff number",
            "type": "TEXT",
            "description_translations": {"fr": "Numéro"},
        },
        {"name": "start_date", "description": "Joined on", "type": "DATETIME"},
    ]
    document = client.get(urlsplit(vct).path).get_json()
    assert document["name"] == "Staff badge"
    assert document["display"] == [
        {
            "locale": "en",
            "name": "Staff badge",
            "description": "Worn at all times.",
            "rendering": {
                "simple": {
                    "logo": {"uri": "https://acme.test/badge.png", "alt_text": "Acme badge"},
                    "background_color": "#12107C",
                    "text_color": "#FFFFFF",
                }
            },
        }
    ]
    assert [claim["display"][0]["label"] for claim in document["claims"]] == [
        "Staff number",
        "Joined on",
    ]

    # Like every write, the change is in the audit trail, by the staff member who made it.
    trail = client.get(
        "/audit-events", query_string={"action": "schema.updated"}, headers=owner.headers()
    ).get_json()["results"]
    assert [(event["record_id"], event["actor"]["type"]) for event in trail] == [
        (schema_id, "user")
    ]
    assert {"name", "background_color", "attributes"} <= set(trail[0]["changes"])


def test_the_display_form_changes_nothing_else_and_the_full_form_refuses_a_published_schema(
    browser, client, owner
):
    schema_id = published(browser)
    before = api_schema(client, owner, schema_id)
    forged = {
        **SHOWN,
        "format": "jwt_vc_json",
        "vct": "https://evil.test/type",
        "types": "EvilCredential",
        "validity_days": "1",
        "authorization_code_by_mail": "on",
        "key_attestations_required": "on",
        "attribute_name": ["evil", "worse"],
        "attribute_type": ["NUMBER", "BOOLEAN"],
        "public": "true",
    }
    assert submit(browser, f"/dashboard/schemas/{schema_id}/display", forged).status_code == 303
    after = api_schema(client, owner, schema_id)
    kept = (
        "format",
        "vct",
        "types",
        "validity_days",
        "authorization_code_by_mail",
        "key_attestations_required",
        "public",
        "published",
    )
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert [(a["name"], a["type"]) for a in after["attributes"]] == [
        ("employee_id", "TEXT"),
        ("start_date", "DATETIME"),
    ]
    assert after["name"] == "Staff badge"

    # One label per attribute, no more, no less; an empty name is refused with the values.
    extra = {**SHOWN, "attribute_description": ["a", "b", "c"]}
    refused = submit(browser, f"/dashboard/schemas/{schema_id}/display", extra)
    assert refused.status_code == 400
    assert "Send one label per attribute of the schema" in text_of(refused)
    nameless = submit(
        browser,
        f"/dashboard/schemas/{schema_id}/display",
        {**SHOWN, "name": "", "text_color": "white"},
    )
    assert nameless.status_code == 400 and 'value="white"' in text_of(nameless)
    assert api_schema(client, owner, schema_id)["text_color"] == "#FFFFFF"

    # The draft's whole form no longer applies once the schema is published.
    whole = submit(browser, f"/dashboard/schemas/{schema_id}", {**BADGE, "vct": "urn:other"})
    assert whole.status_code == 409
    assert "only how wallets show it can change" in text_of(whole)
    assert api_schema(client, owner, schema_id)["vct"] == before["vct"]

    # Like every dashboard form, it needs the page's CSRF token.
    unsigned = browser.post(f"/dashboard/schemas/{schema_id}/display", data=SHOWN)
    assert unsigned.status_code == 403


def test_the_display_form_is_not_for_public_or_other_organizations_schemas(app, browser, client):
    assert submit(browser, f"/dashboard/schemas/{PID_SCHEMA_ID}/display", SHOWN).status_code == 403
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    body = {
        "name": "Secret",
        "vct": "urn:evil:1",
        "attributes": [{"name": "x", "description": "", "type": "TEXT"}],
    }
    theirs = client.post("/schemas", json=body, headers=stranger.headers()).get_json()["id"]
    one = {**SHOWN, "attribute_description": ["X"]}
    assert submit(browser, f"/dashboard/schemas/{theirs}/display", one).status_code == 404
    assert (
        client.get(f"/schemas/{theirs}", headers=stranger.headers()).get_json()["name"] == "Secret"
    )
