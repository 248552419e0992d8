"""An organization's ``api_compatibility``: with ``socious-verify`` the apikey lookup and the
answer of an open made with the organization's own key carry Socious Verify's lookup fields
(``socious-io/shin-api`` docs/VERIFICATION.md) beside Verity's; anonymous opens, other
organizations' keys and the unauthenticated poll and connect never do."""

from __future__ import annotations

import json
import uuid
from contextlib import contextmanager

import pytest
from factories import make_apikey, make_staff, make_verification
from sqlalchemy import event
from wallets import Issuer, post_response, python_presentation, read_request

from app.extensions import db
from app.identity.operations import create_user, issue_session_token
from app.organizations.models import Membership, Role

SOCIOUS_FIELDS = {
    "body",
    "user_id",
    "recipient_id",
    "connection_id",
    "present_id",
    "verification",
}
# Socious Verify's lookup (docs/VERIFICATION.md): every field an old client reads.
SOCIOUS_LOOKUP = SOCIOUS_FIELDS | {
    "id",
    "verification_id",
    "status",
    "validation_error",
    "connection_url",
    "connection_at",
    "verified_at",
    "created_at",
    "updated_at",
}


def set_compatibility(client, staff, value: str = "socious-verify"):
    return client.patch(
        f"/organizations/{staff.organization_id}",
        json={"api_compatibility": value},
        headers=staff.headers(),
    )


def open_individual(client, verification_id: str, customer_id: str = "crm-1", **headers):
    return client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification_id},
        headers=headers,
    )


def lookup(client, verification_id: str, key: str, customer_id: str = "crm-1"):
    response = client.get(
        f"/verifications/{verification_id}/individuals/{customer_id}", headers={"apikey": key}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def socious(app, client):
    """A socious-verify organization, its key and a verification of the EU PID."""
    staff = make_staff(app)
    assert set_compatibility(client, staff).status_code == 200
    verification = make_verification(client, staff)
    return staff, make_apikey(app, staff.organization_id), verification


# -- the setting ----------------------------------------------------------------------------


def test_the_setting_defaults_to_verity_and_owners_change_it(app, client):
    staff = make_staff(app)
    shown = client.get(f"/organizations/{staff.organization_id}", headers=staff.headers())
    assert shown.get_json()["api_compatibility"] == "verity"

    changed = set_compatibility(client, staff)
    assert changed.status_code == 200, changed.get_json()
    assert changed.get_json()["api_compatibility"] == "socious-verify"
    # A PATCH of another setting keeps it.
    client.patch(
        f"/organizations/{staff.organization_id}",
        json={"support_contact": "help@acme.test"},
        headers=staff.headers(),
    )
    shown = client.get(f"/organizations/{staff.organization_id}", headers=staff.headers())
    assert shown.get_json()["api_compatibility"] == "socious-verify"
    assert set_compatibility(client, staff, "verity").get_json()["api_compatibility"] == "verity"


@pytest.mark.parametrize("value", ["socious", "", None, 3])
def test_an_unknown_shape_is_refused_with_a_code(app, client, value):
    staff = make_staff(app)
    refused = set_compatibility(client, staff, value)
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "INVALID_REQUEST"
    shown = client.get(f"/organizations/{staff.organization_id}", headers=staff.headers())
    assert shown.get_json()["api_compatibility"] == "verity"


def test_a_member_who_is_not_owner_or_admin_cannot_change_it(app, client):
    staff = make_staff(app)
    with app.app_context():
        user = create_user("bob@example.test", "Bob")
        db.session.add(
            Membership(
                user_id=user.id,
                organization_id=uuid.UUID(staff.organization_id),
                role=Role.MEMBER,
            )
        )
        token, _ = issue_session_token(user, 1)
        db.session.commit()
    refused = client.patch(
        f"/organizations/{staff.organization_id}",
        json={"api_compatibility": "socious-verify"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert refused.status_code == 403


def test_the_change_is_audited(app, client):
    staff = make_staff(app)
    set_compatibility(client, staff)
    events = client.get("/audit-events", headers=staff.headers()).get_json()["results"]
    changed = [e for e in events if e["record_type"] == "organization"]
    assert changed, events
    assert "api_compatibility" in changed[0]["fields"]
    assert "socious-verify" in changed[0]["changes"]["api_compatibility"]


# -- the lookup -----------------------------------------------------------------------------


def test_with_verity_the_lookup_carries_none_of_socious_verifys_fields(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    open_individual(client, verification["id"])
    found = lookup(client, verification["id"], make_apikey(app, staff.organization_id))
    assert not SOCIOUS_FIELDS & set(found)


def test_with_socious_verify_the_lookup_carries_socious_verifys_fields(app, client, socious):
    staff, key, verification = socious
    opened = open_individual(client, verification["id"]).get_json()
    found = lookup(client, verification["id"], key)

    assert set(found) >= SOCIOUS_LOOKUP
    # Verity's own fields stay as they are.
    assert found["claims"] is None and found["individual_id"] == opened["id"]
    assert found["body"] is None
    assert found["user_id"] == staff.organization_id
    assert found["recipient_id"] is None
    assert found["connection_id"] is None and found["present_id"] is None
    nested = found["verification"]
    assert nested["id"] == verification["id"]
    assert nested["name"] == verification["name"]
    assert nested["description"] == verification["description"]
    assert nested["type"] == "SINGLE"
    assert nested["created_at"] == verification["created_at"]
    assert nested["updated_at"] == verification["updated_at"]
    assert nested["user_id"] == staff.organization_id
    assert nested["user"] == {"id": staff.organization_id}
    schema = client.get(f"/schemas/{verification['schema_id']}", headers=staff.headers()).get_json()
    assert nested["schema_id"] == nested["schema"]["id"] == schema["id"]
    assert nested["schema"]["name"] == schema["name"]
    assert nested["schema"]["description"] == schema["description"]
    assert nested["schema"]["created_at"] == schema["created_at"]
    attributes = nested["schema"]["attributes"]
    assert [a["name"] for a in attributes] == [a["name"] for a in schema["attributes"]]
    for attribute, declared in zip(attributes, schema["attributes"], strict=True):
        assert attribute == {
            "id": declared["name"],
            "name": declared["name"],
            "description": declared["description"],
            "type": declared["type"],
            "created_at": schema["created_at"],
        }
    # No staff member's email or name in a customer's record.
    assert staff.email not in json.dumps(found)
    assert "Alice" not in json.dumps(found)


def test_the_lookup_reads_the_link_the_presentation_and_the_claims_as_body(app, client, socious):
    _staff, key, verification = socious
    opened = open_individual(client, verification["id"]).get_json()
    link = client.get(f"/verifications/{opened['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    linked = lookup(client, verification["id"], key)
    assert linked["connection_id"] == request.request_id
    assert linked["connection_url"] == link
    assert linked["present_id"] is None and linked["body"] is None

    answered = post_response(client, request, python_presentation(request, Issuer()))
    assert answered.status_code == 200, answered.get_json()
    found = lookup(client, verification["id"], key)
    assert found["status"] == "VERIFIED"
    assert found["present_id"] == request.request_id
    # The claims the verification asks for, keyed by attribute name.
    assert found["body"] == {
        "given_name": found["claims"]["given_name"],
        "family_name": found["claims"]["family_name"],
        "birthdate": found["claims"]["birthdate"],
        "address.country": found["claims"]["address"]["country"],
    }
    assert found["verified_at"] is not None

    # The unauthenticated answers never carry them, whatever the setting.
    for path in (f"/verifications/{opened['id']}/verify", f"/verifications/{opened['id']}/connect"):
        answer = client.get(path).get_json()
        assert answer["status"] == "VERIFIED"
        assert not (SOCIOUS_FIELDS | {"claims"}) & set(answer), path
        assert found["claims"]["given_name"] not in json.dumps(answer)


def test_recipient_id_names_the_organizations_recipient_of_that_customer(app, client, socious):
    _staff, key, verification = socious
    recipient = client.post(
        "/recipients",
        json={
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "ada@example.test",
            "customer_id": "crm-1",
        },
        headers={"apikey": key},
    ).get_json()
    open_individual(client, verification["id"])
    open_individual(client, verification["id"], "crm-2")
    assert lookup(client, verification["id"], key)["recipient_id"] == recipient["id"]
    assert lookup(client, verification["id"], key, "crm-2")["recipient_id"] is None


# -- the open -------------------------------------------------------------------------------


def test_an_open_with_the_organizations_key_carries_the_fields(app, client, socious):
    _staff, key, verification = socious
    created = open_individual(client, verification["id"], apikey=key)
    assert created.status_code == 201
    assert set(created.get_json()) >= SOCIOUS_LOOKUP
    assert created.get_json()["verification"]["id"] == verification["id"]
    again = open_individual(client, verification["id"], apikey=key)
    assert again.status_code == 200
    assert again.get_json() == created.get_json()


def test_an_open_without_the_organizations_key_never_carries_them(app, client, socious):
    _staff, _key, verification = socious
    anonymous = open_individual(client, verification["id"])
    assert anonymous.status_code == 201
    assert not SOCIOUS_FIELDS & set(anonymous.get_json())

    stranger = make_staff(app, "eve@example.test", org_name="Other")
    set_compatibility(client, stranger)
    other_key = make_apikey(app, stranger.organization_id)
    for headers in ({"apikey": other_key}, {"apikey": "vk_not-a-key"}):
        answer = open_individual(client, verification["id"], **headers)
        assert not SOCIOUS_FIELDS & set(answer.get_json()), headers


# -- the performance bar ----------------------------------------------------------------------


@contextmanager
def counted(app):
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_the_lookup_costs_one_statement_more_with_the_fields_and_none_without(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    key = make_apikey(app, staff.organization_id)
    for customer in ("crm-1", "crm-2", "crm-3"):
        open_individual(client, verification["id"], customer)
    lookup(client, verification["id"], key)  # the key's last use is noted once, not here

    with counted(app) as verity:
        lookup(client, verification["id"], key, "crm-2")
    set_compatibility(client, staff)
    with counted(app) as socious:
        lookup(client, verification["id"], key, "crm-3")
    assert len(verity) == 2, verity  # the key, then the individual with the setting
    assert len(socious) == len(verity) + 1, socious


# -- the OpenAPI document --------------------------------------------------------------------


def test_the_openapi_document_names_the_fields_where_they_are_answered(client):
    document = client.get("/openapi.json").get_json()
    schemas = document["components"]["schemas"]

    def answered(path: str, method: str, status: str) -> set[str]:
        content = document["paths"][path][method]["responses"][status]["content"]
        name = content["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        return set(schemas[name]["properties"])

    lookup_path = "/verifications/{verification_id}/individuals/{customer_id}"
    assert answered(lookup_path, "get", "200") >= SOCIOUS_LOOKUP
    assert answered("/verifications/individuals", "post", "201") >= SOCIOUS_LOOKUP
    assert not SOCIOUS_FIELDS & answered("/verifications/{individual_id}/verify", "get", "200")
    assert not SOCIOUS_FIELDS & answered("/verifications/{individual_id}/connect", "get", "200")
    nested = schemas["SociousVerificationOut"]["properties"]
    assert {"id", "name", "description", "type", "schema", "created_at", "updated_at"} <= set(
        nested
    )
    assert set(schemas["SociousAttributeOut"]["properties"]) == {
        "id",
        "name",
        "description",
        "type",
        "created_at",
    }
    patch = schemas["OrganizationPatch"]["properties"]["api_compatibility"]
    assert patch["enum"] == ["verity", "socious-verify"]
