"""The dashboard's verifications: list, builder form, definition page, delete, individuals."""

from __future__ import annotations

import re
import uuid

from factories import PID_SCHEMA_ID, make_staff, make_verification
from flask import Flask
from staff_support import csrf_of, text_of
from trust.trust_support import make_cert

from app.organizations.models import Plan

NEW = "/dashboard/verifications/new"


def form_data(browser, path: str = NEW, **overrides) -> dict:
    """A filled-in builder form as a browser posts it: two conditions on the EU PID."""
    data = {
        "csrf_token": csrf_of(browser, "/dashboard/"),
        "name": "Adult residents",
        "description": "We check that you are of age and live in the EU.",
        "schema_id": PID_SCHEMA_ID,
        "claims": ["given_name", "family_name"],
        "conditions-0-attribute": "birthdate",
        "conditions-0-operator": "AGE_AT_LEAST",
        "conditions-0-value": "18",
        "conditions-1-attribute": "address.country",
        "conditions-1-operator": "IN",
        "conditions-1-value": "FR, DE ,NL",
        "trusted_issuers": "",
        "return_url": "https://acme.test/back",
    }
    data.update(overrides)
    return data


def created_id(response) -> str:
    assert response.status_code == 303, text_of(response)
    match = re.fullmatch(r"/dashboard/verifications/([0-9a-f-]{36})", response.headers["Location"])
    assert match, response.headers["Location"]
    return match.group(1)


def test_the_empty_list_says_to_create_one(browser):
    page = text_of(browser.get("/dashboard/verifications"))
    assert "<h1>Verifications</h1>" in page
    assert "No verifications yet. Create one" in page
    assert 'href="/dashboard/verifications/new"' in page


def test_the_list_shows_each_definition_linking_to_its_page(browser, client, owner):
    made = make_verification(client, owner)
    page = text_of(browser.get("/dashboard/verifications"))
    assert f'href="/dashboard/verifications/{made["id"]}"' in page
    assert "Adult residents" in page and "EU Person Identification Data" in page
    assert '<td data-label="Conditions">2</td>' in page  # two conditions


def test_the_list_is_paginated(browser, client, owner):
    for n in range(21):
        make_verification(client, owner, name=f"V{n:02d}")
    first = text_of(browser.get("/dashboard/verifications"))
    assert "Page 1 of 2" in first and "V20" in first and "V00" not in first
    second = text_of(browser.get("/dashboard/verifications?page=2"))
    assert "V00" in second and "V20" not in second


def test_creating_with_two_conditions_reads_back_exactly_through_the_json_api(
    browser, client, owner
):
    response = browser.post(NEW, data=form_data(browser))
    verification_id = created_id(response)
    page = text_of(browser.get(f"/dashboard/verifications/{verification_id}"))
    assert "Verification “Adult residents” created." in page and verification_id in page
    # Attributes by the schema's display names, with their keys beside them.
    assert "Date of birth (birthdate) shows an age of at least 18 years" in page
    assert "Country of residence (address.country) is one of: FR, DE, NL" in page
    assert "Current first names (given_name), Current last names (family_name)" in page

    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["attributes"] == [
        {"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18},
        {"name": "address.country", "operator": "IN", "value": ["FR", "DE", "NL"]},
    ]
    assert body["claims"] == ["given_name", "family_name"]
    assert body["description"] == "We check that you are of age and live in the EU."
    assert body["return_url"] == "https://acme.test/back"
    assert body["trusted_issuers"] == []


def test_values_are_typed_like_json_clients_send_them(browser, client, owner):
    data = form_data(
        browser,
        **{
            "conditions-0-attribute": "age_equal_or_over.18",
            "conditions-0-operator": "EQUAL",
            "conditions-0-value": "true",
            "conditions-1-attribute": "birthdate",
            "conditions-1-operator": "SMALLER",
            "conditions-1-value": "2007-01-31",
            "conditions-2-attribute": "given_name",
            "conditions-2-operator": "EXISTS",
            "conditions-2-value": "",
            "conditions-3-attribute": "",  # an added row left empty is not a condition
            "conditions-3-operator": "EQUAL",
            "conditions-3-value": "",
        },
    )
    verification_id = created_id(browser.post(NEW, data=data))
    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["attributes"] == [
        {"name": "age_equal_or_over.18", "operator": "EQUAL", "value": True},
        {"name": "birthdate", "operator": "SMALLER", "value": "2007-01-31"},
        {"name": "given_name", "operator": "EXISTS", "value": None},
    ]


def test_trusted_issuers_take_one_per_line_and_a_pem_block_as_one_entry(browser, client, owner):
    pem = make_cert("Issuer anchor", ca=True).pem.strip()
    text = f"https://issuer.example\n\n{pem}\r\ndid:web:issuer.example\n"
    verification_id = created_id(browser.post(NEW, data=form_data(browser, trusted_issuers=text)))
    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["trusted_issuers"] == ["https://issuer.example", pem, "did:web:issuer.example"]


def test_any_issuer_is_an_explicit_choice_warned_about_on_the_page(browser, client, owner):
    """Ticked "Accept any issuer": trusted_issuers [] and trust "any", and the verification's
    page warns that a key anyone can make passes."""
    verification_id = created_id(browser.post(NEW, data=form_data(browser, any_issuer="1")))
    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["trusted_issuers"] == [] and body["trust"] == "any"
    page = text_of(browser.get(f"/dashboard/verifications/{verification_id}"))
    assert 'data-testid="any-issuer"' in page and "did:jwk" in page
    # The edit form on the page shows the choice ticked, so saving it again keeps it.
    assert re.search(r'name="any_issuer" value="1"[^>]*checked', page), page


def test_an_own_schema_left_empty_is_pinned_to_the_own_issuer(app, browser, client, owner):
    schema = client.post(
        "/schemas",
        json={
            "name": "Staff card",
            "vct": "urn:example:staff:1",
            "attributes": [{"name": "employee_id", "type": "TEXT"}],
        },
        headers=owner.headers(),
    ).get_json()
    data = form_data(browser, schema_id=schema["id"], claims=["employee_id"])
    data = {k: v for k, v in data.items() if not k.startswith("conditions-")}
    verification_id = created_id(browser.post(NEW, data=data))
    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    own = f"{app.config['PUBLIC_URL']}/issuers/{owner.organization_id}"
    assert body["trusted_issuers"] == [own] and body["trust"] == "pinned"
    page = text_of(browser.get(f"/dashboard/verifications/{verification_id}"))
    assert 'data-testid="any-issuer"' not in page and own in page


def test_an_unterminated_certificate_is_refused_with_its_line(browser):
    text = "https://issuer.example\n-----BEGIN CERTIFICATE-----\nMIIB"
    response = browser.post(NEW, data=form_data(browser, trusted_issuers=text))
    assert response.status_code == 400
    assert "starting on line 2 has no" in text_of(response)


def test_a_condition_error_re_renders_the_form_with_the_message_and_the_values(
    browser, client, owner
):
    data = form_data(browser, name="Kept name", **{"conditions-1-value": ""})
    response = browser.post(NEW, data=data)
    assert response.status_code == 400
    page = text_of(response)
    assert "condition 2: IN on address.country needs a non-empty list of values" in page
    assert 'value="Kept name"' in page
    assert "We check that you are of age and live in the EU.</textarea>" in page
    assert 'value="given_name" checked' in page
    assert '<option value="AGE_AT_LEAST" selected>' in page
    assert 'name="conditions-0-value" value="18"' in page
    assert 'value="https://acme.test/back"' in page
    listed = client.get("/verifications", headers=owner.headers()).get_json()
    assert listed["total"] == 0


def field_message(page: str, field: str) -> str | None:
    found = re.search(
        rf'<small class="field-error" id="[^"]+" data-testid="field-error-{field}">([^<]*)</small>',
        page,
    )
    return found.group(1) if found else None


def test_a_refused_field_says_what_to_do_in_words_at_that_field(browser):
    response = browser.post(NEW, data=form_data(browser, name="", return_url="ftp://x"))
    assert response.status_code == 400
    page = text_of(response)
    assert field_message(page, "name") == "Fill this in."
    assert field_message(page, "return_url").startswith(
        "Enter an address that starts with https://"
    )
    # The field's message follows the field itself, which is marked invalid.
    assert re.search(
        r'id="v-name"[^>]*aria-invalid="true"[^>]*>\s*<small class="field-error"', page
    )
    assert "Invalid request" not in page and "String should" not in page
    assert 'value="ftp://x"' in page


def test_no_schema_chosen_is_asked_for_in_words_not_as_a_uuid_error(browser):
    response = browser.post(NEW, data=form_data(browser, schema_id=""))
    assert response.status_code == 400
    page = text_of(response)
    assert field_message(page, "schema_id") == "Choose a credential schema."
    assert "valid UUID" not in page and "invalid length" not in page


def test_a_number_out_of_range_is_refused_at_its_field(browser):
    response = browser.post(NEW, data=form_data(browser, retention_days="-1"))
    assert response.status_code == 400
    assert field_message(text_of(response), "retention_days") == "Enter 0 or more."


def test_a_premium_plus_schema_is_refused_with_its_message(app, browser, client, owner):
    schema = client.post(
        "/schemas",
        json={
            "name": "Gold",
            "vct": "urn:gold",
            "premium_plus": True,
            "attributes": [{"name": "tier"}],
        },
        headers=owner.headers(),
    ).get_json()
    response = browser.post(NEW, data=form_data(browser, schema_id=schema["id"], claims=["tier"]))
    assert response.status_code == 403
    page = text_of(response)
    assert (
        "Premium+" in page
        and 'data-testid="form-error"' in page
        and 'value="Adult residents"' in page
    )


def test_choosing_a_schema_without_javascript_redraws_its_claims_and_keeps_the_rest(browser):
    data = form_data(browser, action="choose", schema_id="5c4a3f3e-0b1d-4c7e-9a51-000000000002")
    response = browser.post(NEW, data=data)
    assert response.status_code == 200
    page = text_of(response)
    assert 'value="document_number"' in page  # the driving licence's attributes
    assert 'value="nationalities"' not in page
    assert 'value="given_name" checked' in page  # both schemas have it
    assert 'value="Adult residents"' in page
    assert "(not in this schema)" in page  # address.country is kept, and flagged


def test_the_schema_select_fetches_the_builder_fragment_with_htmx(browser):
    page = text_of(browser.get(NEW))
    assert 'hx-get="/dashboard/verifications/builder"' in page
    fragment = browser.get(
        "/dashboard/verifications/builder",
        query_string={
            "schema_id": "5c4a3f3e-0b1d-4c7e-9a51-000000000003",
            "claims": ["given_name"],
        },
        headers={"HX-Request": "true"},
    )
    assert fragment.status_code == 200
    html = text_of(fragment)
    assert html.lstrip().startswith('<div id="builder">') and "<html" not in html
    assert 'value="age_over_18"' in html and "given_name" not in html


def test_adding_a_condition_without_javascript_adds_an_empty_row(browser):
    data = form_data(browser, action="add-condition")
    response = browser.post(NEW, data=data)
    assert response.status_code == 200
    page = text_of(response)
    assert page.count('data-testid="condition-row"') == 3
    assert 'name="conditions-2-attribute"' in page


def test_adding_a_condition_with_htmx_returns_one_row_after_the_last(browser):
    fragment = browser.get(
        "/dashboard/verifications/row",
        query_string={"schema_id": PID_SCHEMA_ID, "conditions-4-attribute": "birthdate"},
        headers={"HX-Request": "true"},
    )
    html = text_of(fragment)
    assert html.count('data-testid="condition-row"') == 1
    assert 'name="conditions-5-attribute"' in html and 'value="birthdate"' in html
    assert 'hx-swap-oob="delete"' in html


def test_a_removed_row_is_not_saved(browser, client, owner):
    data = form_data(browser, **{"conditions-0-remove": "1"})
    verification_id = created_id(browser.post(NEW, data=data))
    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert [c["name"] for c in body["attributes"]] == ["address.country"]


def test_a_free_organization_gets_the_upgrade_prompt_on_get_and_post(app, client):
    from staff_support import sign_in

    free = make_staff(app, "bob@example.test", Plan.FREE, "Freebies")
    sign_in(client, free.token)
    shown = client.get(NEW)
    assert shown.status_code == 402
    assert 'data-testid="upgrade-prompt"' in text_of(shown)
    # Said once: the refusal names the organization and its plan, the page does not repeat it.
    assert text_of(shown).count("is on the Free plan") == 1, text_of(shown)
    posted = client.post(NEW, data=form_data(client))
    assert posted.status_code == 402
    assert 'data-testid="upgrade-prompt"' in text_of(posted)
    listed = client.get("/verifications", headers=free.headers()).get_json()
    assert listed["total"] == 0


def test_the_detail_page_shows_the_id_to_copy_and_the_prefilled_form(browser, client, owner):
    made = make_verification(client, owner, trusted_issuers=["https://issuer.example"])
    page = text_of(browser.get(f"/dashboard/verifications/{made['id']}"))
    assert f'<code id="verification-id">{made["id"]}</code>' in page
    assert 'data-copy="verification-id"' in page
    assert "https://issuer.example</textarea>" in page
    assert 'name="conditions-1-value" value="FR, DE, NL"' in page
    assert 'hx-confirm="Delete' in page


def test_claims_received_lists_every_claim_kept_with_those_conditions_read(browser, client, owner):
    # The default body asks for the names and has conditions on birthdate and the country:
    # all four are asked of the wallet and kept for retention_days.
    made = make_verification(client, owner)
    page = text_of(browser.get(f"/dashboard/verifications/{made['id']}"))
    received = re.search(r'data-testid="claims-received">(.*?)</dd>', page, re.S).group(1)
    for claim in ("given_name", "family_name", "birthdate", "address.country"):
        assert claim in received or claim.replace("_", " ") in received.lower()
    assert received.count("(read by a condition)") == 2


def test_editing_through_the_form_changes_what_the_json_api_returns(browser, client, owner):
    made = make_verification(client, owner)
    path = f"/dashboard/verifications/{made['id']}"
    data = form_data(
        browser,
        path,
        name="Renamed",
        claims=["given_name"],
        **{
            "conditions-0-value": "21",
            "conditions-1-attribute": "",
            "conditions-1-value": "",
        },
    )
    response = browser.post(path, data=data)
    assert response.status_code == 303 and response.headers["Location"] == path
    assert "Changes saved." in text_of(browser.get(path))
    body = client.get(f"/verifications/{made['id']}", headers=owner.headers()).get_json()
    assert body["name"] == "Renamed"
    assert body["claims"] == ["given_name"]
    assert body["attributes"] == [{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 21}]


def test_emptying_the_trusted_issuers_on_an_edit_needs_the_any_issuer_box(browser, client, owner):
    made = make_verification(client, owner, trusted_issuers=["https://issuer.example"])
    path = f"/dashboard/verifications/{made['id']}"
    refused = browser.post(path, data=form_data(browser, path, trusted_issuers=""))
    assert refused.status_code == 400
    assert "tick “Accept any issuer”" in text_of(refused)
    body = client.get(f"/verifications/{made['id']}", headers=owner.headers()).get_json()
    assert body["trusted_issuers"] == ["https://issuer.example"]

    ticked = browser.post(path, data=form_data(browser, path, trusted_issuers="", any_issuer="1"))
    assert ticked.status_code == 303
    body = client.get(f"/verifications/{made['id']}", headers=owner.headers()).get_json()
    assert body["trusted_issuers"] == [] and body["trust"] == "any"


def test_a_failed_edit_changes_nothing_and_keeps_the_input(browser, client, owner):
    made = make_verification(client, owner)
    path = f"/dashboard/verifications/{made['id']}"
    data = form_data(browser, path, name="Half saved", **{"conditions-0-attribute": "shoe_size"})
    response = browser.post(path, data=data)
    assert response.status_code == 400
    page = text_of(response)
    assert (
        "condition 1: attribute &#39;shoe_size&#39; is not in the verification&#39;s schema" in page
    )
    assert 'value="Half saved"' in page
    body = client.get(f"/verifications/{made['id']}", headers=owner.headers()).get_json()
    assert body["name"] == "Adult residents"


def test_deleting_asks_first_without_javascript_then_hides_it(browser, client, owner):
    made = make_verification(client, owner)
    path = f"/dashboard/verifications/{made['id']}"
    confirm = browser.get(f"{path}/delete")
    assert confirm.status_code == 200 and "Delete this verification" in text_of(confirm)
    response = browser.post(f"{path}/delete", data={"csrf_token": csrf_of(browser, path)})
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/verifications"
    listing = text_of(browser.get("/dashboard/verifications"))
    assert "deleted" in listing and "No verifications yet" in listing
    assert browser.get(path).status_code == 404
    assert client.get(f"/verifications/{made['id']}", headers=owner.headers()).status_code == 400


def test_deleting_with_htmx_redirects_the_page(browser, client, owner):
    made = make_verification(client, owner)
    path = f"/dashboard/verifications/{made['id']}"
    response = browser.post(
        f"{path}/delete",
        headers={"HX-Request": "true", "X-CSRF-Token": csrf_of(browser, path)},
    )
    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == "/dashboard/verifications"


def test_another_organizations_verification_is_a_not_found_page(app, browser, client):
    stranger = make_staff(app, "mallory@example.test", Plan.PRO, "Evil")
    theirs = make_verification(client, stranger)
    base = f"/dashboard/verifications/{theirs['id']}"
    for path in (base, f"{base}/individuals", f"{base}/delete"):
        response = browser.get(path)
        assert response.status_code == 404, path
        assert "belongs to another organization" in text_of(response)
    token = csrf_of(browser, "/dashboard/")
    edit = browser.post(base, data=form_data(browser, base))
    assert edit.status_code == 404
    assert browser.post(f"{base}/delete", data={"csrf_token": token}).status_code == 404
    still = client.get(f"/verifications/{theirs['id']}", headers=stranger.headers()).get_json()
    assert still["name"] == "Adult residents"


def test_a_garbage_id_is_a_not_found_page(browser):
    assert browser.get("/dashboard/verifications/nope").status_code == 404
    assert browser.get(f"/dashboard/verifications/{uuid.uuid4()}").status_code == 404


def test_individuals_page_explains_how_individuals_appear(browser, client, owner):
    made = make_verification(client, owner)
    page = text_of(browser.get(f"/dashboard/verifications/{made['id']}/individuals"))
    assert "No individuals yet" in page and "POST /verifications/individuals" in page
    assert made["id"] in page


def failed_presentation(app: Flask, verification_id: str, customer_id: str, reason: str) -> None:
    """An individual whose presentation failed, as the presentation operations record it."""
    from app.extensions import db
    from app.presentations import operations as presentations
    from app.presentations.decide import Decision
    from app.verifications.operations import open_individual

    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification_id), customer_id)
        request = presentations.connect(individual, 120, 300)
        assert request is not None
        presentations.record(
            presentations.consume(request.id),
            Decision(False, reason, "https://issuer.example"),
        )
        db.session.commit()
        db.session.remove()


def test_individuals_page_shows_the_reason_of_a_failed_presentation(app, browser, client, owner):
    made = make_verification(client, owner)
    reason = "Attribute birthdate does not satisfy AGE_AT_LEAST 18"
    failed_presentation(app, made["id"], "cust-42", reason)
    backend_open = client.get(
        f"/verifications/{made['id']}/individuals", headers=owner.headers()
    ).get_json()
    assert backend_open["total"] == 1
    page = text_of(browser.get(f"/dashboard/verifications/{made['id']}/individuals"))
    assert "cust-42" in page
    assert ">Failed</span>" in page  # the status in words, not only a colour
    assert "<details>" in page and "1 attempt</summary>" in page
    assert page.count(reason) == 2  # the individual's reason and its attempt's
    assert "https://issuer.example" in page


def test_individuals_page_shows_received_claims_by_display_name(app, browser, client, owner):
    from app.extensions import db
    from app.presentations import operations as presentations
    from app.presentations.decide import Decision
    from app.verifications.operations import open_individual

    made = make_verification(client, owner)
    claims = {"given_name": "Erika", "birthdate": "1984-01-26", "address": {"country": "DE"}}
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(made["id"]), "cust-7")
        request = presentations.connect(individual, 120, 300)
        assert request is not None
        presentations.record(
            presentations.consume(request.id), Decision(True, None, "did:example:1", claims)
        )
        db.session.commit()
        db.session.remove()
    page = text_of(browser.get(f"/dashboard/verifications/{made['id']}/individuals"))
    assert "<dt>Current first names (given_name)</dt><dd>Erika</dd>" in page
    assert "<dt>Date of birth (birthdate)</dt><dd>1984-01-26</dd>" in page
    assert "<dt>Country of residence (address.country)</dt><dd>DE</dd>" in page


def test_individuals_are_paginated_newest_first(app, browser, client, owner):
    made = make_verification(client, owner)
    from datetime import timedelta

    from app import clock

    start = clock._system_now()
    for n in range(21):
        clock.set_source(lambda n=n: start + timedelta(minutes=n))
        failed_presentation(app, made["id"], f"cust-{n:02d}", "no")
    first = text_of(browser.get(f"/dashboard/verifications/{made['id']}/individuals"))
    assert first.index("cust-20") < first.index("cust-19")
    assert "cust-00" not in first and "Page 1 of 2" in first
    second = text_of(browser.get(f"/dashboard/verifications/{made['id']}/individuals?page=2"))
    assert "cust-00" in second


def test_a_forged_operator_is_refused_naming_the_condition(browser):
    response = browser.post(NEW, data=form_data(browser, **{"conditions-0-operator": "LIKE"}))
    assert response.status_code == 400
    message = field_message(text_of(response), "attributes")
    assert message.startswith("Condition 1: Choose one of: "), message
    assert "EQUAL" in message


def test_the_edit_form_adds_a_row_without_javascript_and_saves_nothing(browser, client, owner):
    made = make_verification(client, owner)
    path = f"/dashboard/verifications/{made['id']}"
    response = browser.post(
        path, data=form_data(browser, path, name="Not yet", action="add-condition")
    )
    assert response.status_code == 200
    page = text_of(response)
    assert page.count('data-testid="condition-row"') == 3 and 'value="Not yet"' in page
    body = client.get(f"/verifications/{made['id']}", headers=owner.headers()).get_json()
    assert body["name"] == "Adult residents"


def test_a_value_the_attribute_type_cannot_read_is_refused_naming_the_condition(
    browser, client, owner
):
    data = form_data(
        browser,
        **{
            "conditions-1-attribute": "age_equal_or_over.18",
            "conditions-1-operator": "EQUAL",
            "conditions-1-value": "yes",
        },
    )
    response = browser.post(NEW, data=data)
    assert response.status_code == 400
    page = text_of(response)
    assert "condition 2: EQUAL on age_equal_or_over.18 (BOOLEAN) cannot read" in page
    assert client.get("/verifications", headers=owner.headers()).get_json()["total"] == 0


def test_a_date_time_typed_in_the_form_is_saved_and_described_as_a_date(browser, client, owner):
    data = form_data(
        browser,
        **{
            "conditions-1-attribute": "birthdate",
            "conditions-1-operator": "SMALLER",
            "conditions-1-value": "2007-01-31T00:00:00Z",
        },
    )
    verification_id = created_id(browser.post(NEW, data=data))
    page = text_of(browser.get(f"/dashboard/verifications/{verification_id}"))
    assert "Date of birth (birthdate) is before 2007-01-31T00:00:00Z" in page


def test_recommended_wallets_are_given_a_line_each_and_shown_again_to_edit(browser, client, owner):
    wallets = "Acme Wallet | https://wallet.acme.example/get\n\nOther | https://other.example/\n"
    verification_id = created_id(
        browser.post(NEW, data=form_data(browser, recommended_wallets=wallets))
    )
    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["recommended_wallets"] == [
        {"name": "Acme Wallet", "url": "https://wallet.acme.example/get"},
        {"name": "Other", "url": "https://other.example/"},
    ]
    edit = text_of(browser.get(f"/dashboard/verifications/{verification_id}"))
    assert "Acme Wallet | https://wallet.acme.example/get\nOther | https://other.example/" in edit


def test_a_recommended_wallet_without_an_https_address_is_refused_by_name(browser):
    response = browser.post(
        NEW, data=form_data(browser, recommended_wallets="Acme Wallet http://wallet.example")
    )
    assert response.status_code == 400
    page = text_of(response)
    assert "recommended_wallets" in page and "Acme Wallet http://wallet.example" in page


def test_the_wallet_protocols_chosen_are_saved_in_order_and_shown_again(browser, client, owner):
    schema = client.post(
        "/schemas",
        json={
            "name": "Membership (W3C)",
            "format": "jwt_vc_json",
            "types": ["MembershipCredential"],
            "attributes": [{"name": "member", "description": "Member", "type": "TEXT"}],
        },
        headers=owner.headers(),
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=owner.headers())
    data = form_data(browser, schema_id=schema["id"], wallet_protocols="didcomm,openid4vp")
    data.update({"claims": ["member"], "conditions-0-attribute": "", "conditions-0-value": ""})
    data.update({"conditions-1-attribute": "", "conditions-1-value": ""})
    verification_id = created_id(browser.post(NEW, data=data))

    body = client.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["wallet_protocols"] == ["didcomm", "openid4vp"]
    edit = browser.get(f"/dashboard/verifications/{verification_id}").get_data(as_text=True)
    assert 'value="didcomm,openid4vp" checked' in edit


def test_didcomm_for_a_schema_it_cannot_carry_is_refused_with_the_reason(browser):
    response = browser.post(NEW, data=form_data(browser, wallet_protocols="didcomm"))
    assert response.status_code == 400
    assert "DIDComm carries W3C VC-JWT credentials only" in text_of(response)
