"""The dashboard's words for the person, per language, and the organization's support contact:
what the forms save is what the JSON API reads back and what the person's page shows."""

from __future__ import annotations

import re

from factories import make_staff
from staff_support import submit, text_of
from test_staff_schemas import BADGE, api_schema, create
from test_staff_verifications import created_id, form_data

from app.web.language import LANGUAGES

OTHER_LANGUAGES = [code for code in LANGUAGES if code != "en"]


def person_page(client, verification_id: str, language: str) -> str:
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": f"crm-{language}", "verification_id": verification_id},
    ).get_json()
    return text_of(client.get(f"/i/{individual['id']}", headers={"Accept-Language": language}))


# -- a verification's purpose ----------------------------------------------------------------


def test_the_verification_form_has_a_purpose_field_per_language(browser):
    page = text_of(browser.get("/dashboard/verifications/new"))
    for code in OTHER_LANGUAGES:
        assert f'name="description-{code}"' in page
    assert (
        'name="description-ar" rows="2" maxlength="5000"\n              lang="ar" dir="rtl"' in page
    )


def test_a_purpose_per_language_is_saved_read_back_and_shown_with_english_as_fallback(
    browser, client, owner
):
    data = form_data(
        browser, **{"description-de": "  Um Ihr Alter zu prüfen ", "description-fr": ""}
    )
    verification_id = created_id(browser.post("/dashboard/verifications/new", data=data))
    stored = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert stored["description_translations"] == {"de": "Um Ihr Alter zu prüfen"}
    assert "Um Ihr Alter zu prüfen" in person_page(client, verification_id, "de")
    french = person_page(client, verification_id, "fr")
    assert "We check that you are of age and live in the EU." in french
    # The edit form shows what was saved; emptying a language removes it.
    path = f"/dashboard/verifications/{verification_id}"
    assert ">Um Ihr Alter zu prüfen</textarea>" in text_of(browser.get(path))
    edited = browser.post(path, data=form_data(browser, path, **{"description-de": ""}))
    assert edited.status_code == 303, text_of(edited)
    stored = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert stored["description_translations"] == {}


# -- a schema's display names ----------------------------------------------------------------


def test_schema_display_names_per_language_line_up_with_their_rows(browser, client, owner):
    form = {
        **BADGE,
        "attribute_description_de": ["Personalnummer", ""],
        "attribute_description_ar": ["", "اليوم الأول"],
        **{
            f"attribute_description_{code}": ["", ""]
            for code in ("fr", "es", "it", "nl", "pt", "pl")
        },
    }
    schema_id = create(browser, form)
    assert api_schema(client, owner, schema_id)["attributes"] == [
        {
            "name": "employee_id",
            "description": "Payroll number",
            "type": "TEXT",
            "description_translations": {"de": "Personalnummer"},
        },
        {
            "name": "start_date",
            "description": "First day",
            "type": "DATETIME",
            "description_translations": {"ar": "اليوم الأول"},
        },
    ]
    page = text_of(browser.get(f"/dashboard/schemas/{schema_id}"))
    assert 'name="attribute_description_de" value="Personalnummer"' in page
    assert 'name="attribute_description_ar" value="اليوم الأول"' in page


def test_a_schema_display_name_per_language_reaches_the_person_with_english_as_fallback(
    browser, client, owner
):
    form = {
        **BADGE,
        "attribute_description_de": ["Personalnummer", ""],
    }
    schema_id = create(browser, form)
    published = client.post(f"/schemas/{schema_id}/publish", headers=owner.headers())
    assert published.status_code == 200, published.get_json()
    made = client.post(
        "/verifications",
        json={"name": "Staff", "schema_id": schema_id, "claims": ["employee_id", "start_date"]},
        headers=owner.headers(),
    )
    assert made.status_code == 201, made.get_json()
    german = person_page(client, made.get_json()["id"], "de")
    assert "<bdi>Personalnummer</bdi>, <bdi>First day</bdi>." in german
    assert "<bdi>Payroll number</bdi>, <bdi>First day</bdi>." in person_page(
        client, made.get_json()["id"], "nl"
    )


# -- the organization's support contact ------------------------------------------------------


def contact_page(organization_id: str) -> str:
    return f"/dashboard/organizations/{organization_id}"


def test_owners_set_the_support_contact_and_the_json_api_reads_it(browser, client, owner):
    path = contact_page(owner.organization_id)
    saved = submit(browser, f"{path}/support-contact", {"support_contact": " help@acme.test "})
    assert saved.status_code == 303 and saved.headers["Location"] == path
    page = text_of(browser.get(path))
    assert "Support contact saved." in page and 'value="help@acme.test"' in page
    read = client.get(f"/organizations/{owner.organization_id}", headers=owner.headers())
    assert read.get_json()["support_contact"] == "help@acme.test"
    cleared = submit(browser, f"{path}/support-contact", {"support_contact": ""})
    assert cleared.status_code == 303
    read = client.get(f"/organizations/{owner.organization_id}", headers=owner.headers())
    assert read.get_json()["support_contact"] is None


def test_a_contact_that_is_neither_an_email_nor_https_is_refused_with_what_was_typed(
    browser, client, owner
):
    path = contact_page(owner.organization_id)
    for typed in ("http://acme.test/help", "javascript:alert(1)", "call us", "https://"):
        refused = submit(browser, f"{path}/support-contact", {"support_contact": typed})
        assert refused.status_code == 400, typed
        page = text_of(refused)
        assert "must be an email address or an https:// address" in page
        assert 'aria-invalid="true"' in page
    read = client.get(f"/organizations/{owner.organization_id}", headers=owner.headers())
    assert read.get_json()["support_contact"] is None


def test_the_json_api_sets_and_validates_the_support_contact(client, owner):
    path = f"/organizations/{owner.organization_id}"
    answer = client.patch(
        path, json={"support_contact": "https://acme.test/help"}, headers=owner.headers()
    )
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["support_contact"] == "https://acme.test/help"
    assert answer.get_json()["role"] == "OWNER" and answer.get_json()["members"]
    # Left out keeps it; the organization list carries it too.
    assert client.patch(path, json={}, headers=owner.headers()).get_json()["support_contact"] == (
        "https://acme.test/help"
    )
    listed = client.get("/organizations", headers=owner.headers()).get_json()["results"]
    assert listed[0]["organization"]["support_contact"] == "https://acme.test/help"
    refused = client.patch(
        path, json={"support_contact": "ftp://acme.test"}, headers=owner.headers()
    )
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "INVALID_REQUEST"
    assert "https://" in refused.get_json()["error"]
    unknown = client.patch(path, json={"support": "x"}, headers=owner.headers())
    assert unknown.status_code == 400
    cleared = client.patch(path, json={"support_contact": None}, headers=owner.headers())
    assert cleared.get_json()["support_contact"] is None


def test_only_owners_and_admins_change_the_support_contact(app, client, owner):
    outsider = make_staff(app, "eve@example.test")
    path = f"/organizations/{owner.organization_id}"
    hidden = client.patch(path, json={"support_contact": "a@b.test"}, headers=outsider.headers())
    # To a non-member it does not exist, exactly as reading it answers.
    read = client.get(path, headers=outsider.headers())
    assert (hidden.status_code, hidden.get_json()) == (read.status_code, read.get_json())
    code = client.post(
        f"{path}/codes", json={"role": "MEMBER", "days": 7}, headers=owner.headers()
    ).get_json()["code"]
    assert (
        client.post(
            "/organizations/join", json={"code": code}, headers=outsider.headers()
        ).status_code
        == 200
    )
    member = {**outsider.headers(), "current-identity": owner.organization_id}
    refused = client.patch(path, json={"support_contact": "a@b.test"}, headers=member)
    assert refused.status_code == 403


def test_the_forms_hold_texts_per_language_to_the_json_api_s_rule(browser, client, owner):
    """The forms offer only the pages' languages; a text longer than its English field is
    refused on the form with nothing saved, as the JSON API refuses it."""
    page = text_of(browser.get("/dashboard/verifications/new"))
    offered = set(re.findall(r'name="description-([a-z-]+)"', page))
    assert offered == set(OTHER_LANGUAGES)
    data = form_data(browser, **{"description-de": "x" * 5001, "description-xx": "Hallo"})
    refused = browser.post("/dashboard/verifications/new", data=data)
    assert refused.status_code == 400
    assert "Purpose in de: Use at most 5000 characters." in text_of(refused)
    listed = client.get("/verifications", headers=owner.headers()).get_json()
    assert listed["total"] == 0
    form = {
        **BADGE,
        "attribute_description_de": ["x" * 1001, ""],
        **{
            f"attribute_description_{code}": ["", ""]
            for code in ("fr", "es", "it", "nl", "pt", "pl", "ar")
        },
    }
    refused = submit(browser, "/dashboard/schemas", form)
    assert refused.status_code == 400
    assert "at most 1000 characters" in text_of(refused)
    schemas = client.get("/schemas?limit=100", headers=owner.headers()).get_json()["results"]
    assert "Employee badge" not in {schema["name"] for schema in schemas}
