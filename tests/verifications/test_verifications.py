"""Verification definitions and schemas, by session token only (6 and 7)."""

from __future__ import annotations

import uuid

import pytest
from factories import PID_SCHEMA_ID, make_staff, make_verification, verification_body

NOT_FOUND = {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


def test_post_verifications_creates_a_verification(app, client):
    staff = make_staff(app)
    response = client.post("/verifications", json=verification_body(), headers=staff.headers())
    assert response.status_code == 201
    body = response.get_json()
    assert body["schema_id"] == PID_SCHEMA_ID
    assert body["type"] == "SINGLE"
    # Each condition is echoed under the key the client used for it.
    assert body["attributes"] == [
        {"attribute_id": "birthdate", "operator": "AGE_AT_LEAST", "value": 18},
        {"name": "address.country", "operator": "IN", "value": ["FR", "DE", "NL"]},
    ]


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (
            {"name": "shoe_size", "operator": "EQUAL", "value": 42},
            "not in the verification's schema",
        ),
        ({"name": "birthdate", "operator": "ABOUT", "value": 1}, "operator"),
        (
            {"name": "birthdate", "operator": "BIGGER", "value": "soon"},
            '(DATETIME) cannot read "soon"',
        ),
        ({"name": "address.country", "operator": "IN", "value": "FR"}, "non-empty list"),
        ({"name": "birthdate", "operator": "AGE_AT_LEAST", "value": "18 years"}, "whole number"),
        ({"name": "given_name", "operator": "EQUAL"}, "needs a value"),
        ({"operator": "EXISTS"}, "'name' or 'attribute_id'"),
    ],
)
def test_conditions_are_checked_against_the_schema(app, client, condition, message):
    staff = make_staff(app)
    response = client.post(
        "/verifications", json=verification_body(attributes=[condition]), headers=staff.headers()
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"
    assert message in response.get_json()["error"]


@pytest.mark.parametrize(
    "condition",
    [
        {"attribute_id": "given_name", "operator": "EQUAL", "value": "Erika"},
        {"name": "family_name", "operator": "NOT", "value": "Doe"},
        {"name": "birthdate", "operator": "SMALLER", "value": "2008-01-01"},
        {"name": "address.country", "operator": "EXISTS"},
        {"name": "age_equal_or_over.18", "operator": "EQUAL", "value": True},
    ],
)
def test_every_operator_is_accepted_with_a_fitting_value(app, client, condition):
    staff = make_staff(app)
    response = client.post(
        "/verifications", json=verification_body(attributes=[condition]), headers=staff.headers()
    )
    assert response.status_code == 201, response.get_json()


def test_claims_outside_the_schema_are_refused(app, client):
    staff = make_staff(app)
    response = client.post(
        "/verifications", json=verification_body(claims=["password"]), headers=staff.headers()
    )
    assert response.status_code == 400


def test_get_put_delete_a_verification(app, client):
    staff = make_staff(app)
    created = make_verification(client, staff)
    path = f"/verifications/{created['id']}"
    assert client.get(path, headers=staff.headers()).get_json() == created
    updated = client.put(
        path,
        json={"name": "Renamed", "trusted_issuers": ["https://issuer.example"]},
        headers=staff.headers(),
    )
    assert updated.status_code == 200
    assert updated.get_json()["name"] == "Renamed"
    assert updated.get_json()["attributes"] == created["attributes"]
    assert client.delete(path, headers=staff.headers()).status_code == 204
    assert client.get(path, headers=staff.headers()).get_json() == NOT_FOUND
    opened = client.post(
        "/verifications/individuals", json={"customer_id": "c", "verification_id": created["id"]}
    )
    assert opened.status_code == 400


def test_list_verifications_pages(app, client):
    staff = make_staff(app)
    for index in range(3):
        make_verification(client, staff, name=f"V{index}")
    page = client.get("/verifications?limit=2&page=2", headers=staff.headers()).get_json()
    assert page["total"] == 3 and len(page["results"]) == 1
    assert client.get("/verifications?limit=1000", headers=staff.headers()).status_code == 400


def test_another_organizations_verification_is_indistinguishable_from_missing(app, client):
    owner = make_staff(app)
    created = make_verification(client, owner)
    stranger = make_staff(app, "mallory@example.test", org_name="Other")
    for method in ("get", "put", "delete"):
        response = getattr(client, method)(
            f"/verifications/{created['id']}", json={"name": "x"}, headers=stranger.headers()
        )
        assert (response.status_code, response.get_json()) == (400, NOT_FOUND), method
    missing = client.get(f"/verifications/{uuid.uuid4()}", headers=stranger.headers())
    assert missing.get_json() == NOT_FOUND
    individuals = client.get(
        f"/verifications/{created['id']}/individuals", headers=stranger.headers()
    )
    assert individuals.get_json() == NOT_FOUND


def test_list_individuals_of_a_verification(app, client):
    staff = make_staff(app)
    created = make_verification(client, staff)
    for customer in ("a", "b"):
        client.post(
            "/verifications/individuals",
            json={"customer_id": customer, "verification_id": created["id"]},
        )
    listed = client.get(
        f"/verifications/{created['id']}/individuals", headers=staff.headers()
    ).get_json()
    assert listed["total"] == 2
    assert {row["customer_id"] for row in listed["results"]} == {"a", "b"}


def test_schemas_create_update_publish(app, client):
    staff = make_staff(app)
    body = {
        "name": "Nursing licence",
        "vct": "https://nurses.example/licence",
        "attributes": [
            {"name": "licence_number", "type": "TEXT"},
            {"name": "valid_until", "type": "DATETIME"},
        ],
    }
    created = client.post("/schemas", json=body, headers=staff.headers())
    assert created.status_code == 201
    schema = created.get_json()
    assert schema["published"] is False and schema["premium_plus"] is False
    updated = client.put(
        f"/schemas/{schema['id']}", json={"description": "RN"}, headers=staff.headers()
    )
    assert updated.get_json()["description"] == "RN"
    published = client.post(f"/schemas/{schema['id']}/publish", headers=staff.headers())
    assert published.get_json()["published"] is True
    listed = client.get("/schemas", headers=staff.headers()).get_json()
    assert listed["total"] == 6  # five public schemas ship with the service


def test_schema_attribute_names_must_be_unique(app, client):
    staff = make_staff(app)
    body = {"name": "X", "vct": "x", "attributes": [{"name": "a"}, {"name": "a"}]}
    response = client.post("/schemas", json=body, headers=staff.headers())
    assert response.status_code == 400


def test_public_schemas_cannot_be_changed(app, client):
    staff = make_staff(app)
    response = client.put(
        f"/schemas/{PID_SCHEMA_ID}", json={"name": "Mine"}, headers=staff.headers()
    )
    assert response.status_code == 403


def test_another_organizations_schema_is_missing(app, client):
    owner = make_staff(app)
    schema = client.post(
        "/schemas",
        json={"name": "X", "vct": "x", "attributes": [{"name": "a"}]},
        headers=owner.headers(),
    ).get_json()
    stranger = make_staff(app, "mallory@example.test", org_name="Other")
    response = client.get(f"/schemas/{schema['id']}", headers=stranger.headers())
    assert response.get_json() == NOT_FOUND


def test_a_trusted_issuer_pem_without_a_certificate_is_refused_when_saved(client, app):
    staff = make_staff(app)
    bad = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----"
    response = client.post(
        "/verifications", json=verification_body(trusted_issuers=[bad]), headers=staff.headers()
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"
    assert "trusted_issuers" in response.get_json()["error"]
