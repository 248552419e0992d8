"""Condition values as clients send them, through HTTP: read by the schema attribute's type when
the verification is saved, refused with a 400 naming the condition when they cannot be read,
echoed as sent under the key the client used, and compared by type in a full presentation."""

from __future__ import annotations

from typing import Any

import pytest
from factories import make_staff, verification_body
from wallets import Issuer, post_response, python_presentation, read_request

MEMBER_VCT = "https://verity.test/vct/member"
ATTRIBUTES = [
    {"name": "points", "description": "Points collected", "type": "NUMBER"},
    {"name": "member", "description": "Member in good standing", "type": "BOOLEAN"},
    {"name": "since", "description": "Member since", "type": "DATETIME"},
    {"name": "renewed", "description": "Last renewal", "type": "DATETIME"},
    {"name": "homepage", "description": "Profile page", "type": "URL"},
    {"name": "email", "description": "E-mail address", "type": "EMAIL"},
    {"name": "given_name", "description": "First name", "type": "TEXT"},
    {"name": "address", "description": "Address", "type": "TEXT"},
]
MEMBER = {
    "points": 17,
    "member": True,
    "since": "2000-01-31",
    "renewed": "2020-05-01T10:00:00Z",
    "homepage": "https://example.com/members/17",
    "email": "erika@example.com",
    "given_name": "Erika",
    "address": {"zip": "10115"},
}


@pytest.fixture
def staff(app):
    return make_staff(app)


@pytest.fixture
def schema_id(client, staff) -> str:
    """The organization's own member-card schema, one attribute of each type, published."""
    created = client.post(
        "/schemas",
        json={"name": "Member card", "vct": MEMBER_VCT, "attributes": ATTRIBUTES},
        headers=staff.headers(),
    )
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    assert client.post(f"/schemas/{schema_id}/publish", headers=staff.headers()).status_code == 200
    return schema_id


def save(client, staff, schema_id: str, conditions: list[dict[str, Any]]):
    body = verification_body(schema_id=schema_id, claims=[], attributes=conditions)
    return client.post("/verifications", json=body, headers=staff.headers())


SENT_AS_TEXT = [
    {"attribute_id": "points", "operator": "BIGGER", "value": "9"},
    {"name": "points", "operator": "SMALLER", "value": "17.5"},
    {"attribute_id": "member", "operator": "EQUAL", "value": "true"},
    {"name": "since", "operator": "EQUAL", "value": "2000-01-31T08:00:00Z"},
    {"attribute_id": "renewed", "operator": "BIGGER", "value": "2020-05-01T11:00:00+02:00"},
    {"name": "homepage", "operator": "EQUAL", "value": "HTTPS://EXAMPLE.COM/members/17"},
    {"attribute_id": "email", "operator": "EQUAL", "value": "Erika@Example.COM"},
    {"name": "given_name", "operator": "IN", "value": ["Max", "Erika"]},
    {"attribute_id": "address.zip", "operator": "BIGGER", "value": "10000"},
    {"name": "given_name", "operator": "EXISTS"},
]


def test_text_values_are_accepted_and_echoed_as_sent_under_the_clients_key(
    client, staff, schema_id
):
    response = save(client, staff, schema_id, SENT_AS_TEXT)
    assert response.status_code == 201, response.get_json()
    echoed = response.get_json()["attributes"]
    expected = [{"value": None, **condition} for condition in SENT_AS_TEXT]
    assert echoed == expected
    verification_id = response.get_json()["id"]
    read = client.get(f"/verifications/{verification_id}", headers=staff.headers()).get_json()
    assert read["attributes"] == expected
    # What was read back can be sent back unchanged (a client's round trip).
    again = client.put(
        f"/verifications/{verification_id}",
        json={"attributes": read["attributes"]},
        headers=staff.headers(),
    )
    assert again.status_code == 200 and again.get_json()["attributes"] == expected


def test_both_keys_naming_one_attribute_are_echoed_both(client, staff, schema_id):
    condition = {"attribute_id": "points", "name": "points", "operator": "EQUAL", "value": "17"}
    response = save(client, staff, schema_id, [condition])
    assert response.status_code == 201
    assert response.get_json()["attributes"] == [condition]


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (
            {"name": "points", "operator": "EQUAL", "value": "seventeen"},
            'attributes[1]: EQUAL on points (NUMBER) cannot read "seventeen"',
        ),
        (
            {"name": "points", "operator": "BIGGER", "value": True},
            "attributes[1]: BIGGER on points (NUMBER) cannot read true",
        ),
        (
            {"name": "member", "operator": "EQUAL", "value": "yes"},
            'attributes[1]: EQUAL on member (BOOLEAN) cannot read "yes"',
        ),
        (
            {"name": "since", "operator": "SMALLER", "value": "31/01/2000"},
            'attributes[1]: SMALLER on since (DATETIME) cannot read "31/01/2000"',
        ),
        (
            {"name": "since", "operator": "EQUAL", "value": "2000-02-30"},
            'attributes[1]: EQUAL on since (DATETIME) cannot read "2000-02-30"',
        ),
        (
            {"name": "homepage", "operator": "EQUAL", "value": "example.com"},
            'attributes[1]: EQUAL on homepage (URL) cannot read "example.com"',
        ),
        (
            {"name": "email", "operator": "EQUAL", "value": "erika"},
            'attributes[1]: EQUAL on email (EMAIL) cannot read "erika"',
        ),
        (
            {"name": "points", "operator": "IN", "value": ["1", "two"]},
            'attributes[1]: IN on points (NUMBER) cannot read "two"',
        ),
        (
            {"name": "member", "operator": "BIGGER", "value": "true"},
            "attributes[1]: BIGGER on member cannot order BOOLEAN values",
        ),
        (
            {"name": "given_name", "operator": "SMALLER", "value": "M"},
            'attributes[1]: SMALLER on given_name needs a number or a date, not "M"',
        ),
        (
            {"name": "since", "operator": "AGE_AT_LEAST", "value": "18.5"},
            "attributes[1]: AGE_AT_LEAST on since needs a whole number of years",
        ),
        (
            {"name": "points", "operator": "AGE_AT_LEAST", "value": "18"},
            "attributes[1]: AGE_AT_LEAST on points reads a date, and this attribute is NUMBER",
        ),
        (
            {"attribute_id": "points", "name": "member", "operator": "EXISTS"},
            "attributes[1]: 'name' and 'attribute_id' name different attributes",
        ),
    ],
    ids=lambda value: value.get("value", value.get("operator")) if isinstance(value, dict) else "",
)
def test_a_value_that_cannot_be_read_as_its_type_is_refused_naming_the_condition(
    client, staff, schema_id, condition, message
):
    good = {"name": "given_name", "operator": "EXISTS"}
    response = save(client, staff, schema_id, [good, condition])
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "INVALID_REQUEST"
    assert body["error"].startswith(message), body["error"]
    listed = client.get("/verifications", headers=staff.headers()).get_json()
    assert listed["total"] == 0


def test_an_unreadable_value_on_update_changes_nothing(client, staff, schema_id):
    made = save(client, staff, schema_id, SENT_AS_TEXT[:1]).get_json()
    refused = client.put(
        f"/verifications/{made['id']}",
        json={
            "name": "Renamed",
            "attributes": [{"name": "points", "operator": "EQUAL", "value": "x"}],
        },
        headers=staff.headers(),
    )
    assert refused.status_code == 400 and refused.get_json()["code"] == "INVALID_REQUEST"
    read = client.get(f"/verifications/{made['id']}", headers=staff.headers()).get_json()
    assert (read["name"], read["attributes"]) == (made["name"], made["attributes"])


def test_choosing_another_schema_reads_the_kept_conditions_by_its_types(client, staff, schema_id):
    # "17" is a NUMBER on the member card; the EU PID has no points attribute at all.
    made = save(client, staff, schema_id, [{"name": "points", "operator": "EQUAL", "value": "17"}])
    moved = client.put(
        f"/verifications/{made.get_json()['id']}",
        json={"schema_id": verification_body()["schema_id"]},
        headers=staff.headers(),
    )
    assert moved.status_code == 400
    assert "attribute 'points' is not in the verification's schema" in moved.get_json()["error"]


# -- compared by type in a full presentation --------------------------------------------------


def present_member(client, staff, schema_id, conditions, claims=None):
    made = save(client, staff, schema_id, conditions)
    assert made.status_code == 201, made.get_json()
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": made.get_json()["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    person = claims or MEMBER
    reveal = {name: True for name in person if name != "address"} | {"address": {"zip": True}}
    presentation = python_presentation(
        request, Issuer(), claims=person, reveal=reveal, vct=MEMBER_VCT
    )
    assert post_response(client, request, presentation).status_code == 200
    body = client.get(f"/verifications/{individual['id']}/verify").get_json()
    return body["status"], body["validation_error"]


def test_text_values_verify_a_credential_that_meets_them_by_type(client, staff, schema_id):
    assert present_member(client, staff, schema_id, SENT_AS_TEXT) == ("VERIFIED", None)


@pytest.mark.parametrize(
    ("condition", "claims", "reason"),
    [
        # As text "17" > "9" is false; as numbers it holds, and "17" == 17.
        ({"name": "points", "operator": "BIGGER", "value": "9"}, {"points": "17"}, None),
        ({"name": "points", "operator": "EQUAL", "value": "17"}, {"points": 17.0}, None),
        (
            {"name": "points", "operator": "SMALLER", "value": "9"},
            {"points": 17},
            "Attribute points does not satisfy SMALLER 9",
        ),
        # A full-date against a date-time compares calendar days; two date-times, instants.
        (
            {"name": "since", "operator": "EQUAL", "value": "2000-01-31"},
            {"since": "2000-01-31T23:00:00Z"},
            None,
        ),
        (
            {"name": "renewed", "operator": "SMALLER", "value": "2020-05-01T11:00:00+02:00"},
            {"renewed": "2020-05-01T10:00:00Z"},
            'Attribute renewed does not satisfy SMALLER "2020-05-01T11:00:00+02:00"',
        ),
        ({"name": "member", "operator": "EQUAL", "value": "true"}, {"member": "true"}, None),
        (
            {"name": "member", "operator": "EQUAL", "value": "false"},
            {"member": True},
            "Attribute member does not satisfy EQUAL false",
        ),
    ],
    ids=[
        "number-text-claim",
        "number-float-claim",
        "number-unmet",
        "day-vs-instant",
        "instants",
        "boolean-text-claim",
        "boolean-unmet",
    ],
)
def test_presented_claims_are_compared_by_type(client, staff, schema_id, condition, claims, reason):
    status = "VERIFIED" if reason is None else "FAILED"
    assert present_member(client, staff, schema_id, [condition], claims) == (status, reason)


def test_the_openapi_document_describes_the_value_typing_and_the_echo(client):
    schemas = client.get("/openapi.json").get_json()["components"]["schemas"]
    value = schemas["Condition"]["properties"]["value"]["description"]
    assert "Read by the type of the schema attribute" in value
    assert "400 INVALID_REQUEST naming the condition" in value
    echo = schemas["ConditionOut"]
    assert "under the key it used" in echo["description"]
    assert set(echo["properties"]) == {"attribute_id", "name", "operator", "value"}
