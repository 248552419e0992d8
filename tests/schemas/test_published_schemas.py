"""What a published schema promises stays as it is, and only an operator makes a schema public.

Verifications of every organization that sees a schema ask wallets for its type and judge
claims by its attribute types, and issued credentials carry them: once published, a schema's
format, type, attribute names and types and Premium+ flag are refused with 409
``SCHEMA_PUBLISHED``; how wallets show it and how its next credentials are issued still change. An organization sending
``"public": true`` is refused with 403 ``PUBLIC_SCHEMA_OPERATOR_ONLY``; the operator command
``schemas publish-public`` makes a schema public.
"""

from __future__ import annotations

import json

import pytest
from factories import make_staff
from sqlalchemy import func, select

from app.extensions import db
from app.schemas.models import Schema

BADGE = {
    "name": "Badge",
    "description": "A member badge",
    "vct": "urn:acme.example:badge:1",
    "attributes": [
        {"name": "level", "description": "Level", "type": "TEXT"},
        {"name": "points", "description": "Points", "type": "NUMBER"},
    ],
}


def schema_count(app) -> int:
    with app.app_context():
        total = db.session.scalar(select(func.count()).select_from(Schema))
        db.session.remove()
    return total


def published_badge(client, staff) -> dict:
    created = client.post("/schemas", json=BADGE, headers=staff.headers())
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    published = client.post(f"/schemas/{schema_id}/publish", headers=staff.headers())
    assert published.status_code == 200, published.get_json()
    return published.get_json()


def assert_refused(response, status: int, code: str) -> None:
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    assert body["code"] == code, body
    assert isinstance(body["error"], str) and body["error"]


def test_an_organization_cannot_create_a_public_schema(app, client):
    staff = make_staff(app)
    before = schema_count(app)
    refused = client.post("/schemas", json={**BADGE, "public": True}, headers=staff.headers())
    assert_refused(refused, 403, "PUBLIC_SCHEMA_OPERATOR_ONLY")
    assert "publish-public" in refused.get_json()["error"]
    assert schema_count(app) == before
    # Saying it is not public is what it is: accepted.
    kept = client.post("/schemas", json={**BADGE, "public": False}, headers=staff.headers())
    assert kept.status_code == 201 and kept.get_json()["public"] is False


@pytest.mark.parametrize("publish", [False, True])
def test_an_organization_cannot_make_its_schema_public(app, client, publish):
    staff = make_staff(app)
    created = client.post("/schemas", json=BADGE, headers=staff.headers()).get_json()
    if publish:
        client.post(f"/schemas/{created['id']}/publish", headers=staff.headers())
    refused = client.put(
        f"/schemas/{created['id']}", json={"public": True}, headers=staff.headers()
    )
    assert_refused(refused, 403, "PUBLIC_SCHEMA_OPERATOR_ONLY")
    other = make_staff(app, "bob@example.test", org_name="Other")
    assert client.get(f"/schemas/{created['id']}", headers=other.headers()).status_code == 400


FROZEN_CHANGES = {
    "vct": {"vct": "urn:acme.example:badge:2"},
    "format": {"format": "mso_mdoc", "doctype": "org.acme.badge", "namespace": "org.acme"},
    "attribute type": {
        "attributes": [
            {"name": "level", "description": "Level", "type": "NUMBER"},
            {"name": "points", "description": "Points", "type": "NUMBER"},
        ]
    },
    "attribute renamed": {
        "attributes": [
            {"name": "rank", "description": "Level", "type": "TEXT"},
            {"name": "points", "description": "Points", "type": "NUMBER"},
        ]
    },
    "attribute added": {"attributes": [*BADGE["attributes"], {"name": "team", "type": "TEXT"}]},
    "premium_plus": {"premium_plus": True},
}


@pytest.mark.parametrize("change", FROZEN_CHANGES.values(), ids=FROZEN_CHANGES.keys())
def test_a_published_schema_refuses_what_verifications_rely_on(app, client, change):
    staff = make_staff(app)
    schema = published_badge(client, staff)
    refused = client.put(f"/schemas/{schema['id']}", json=change, headers=staff.headers())
    assert_refused(refused, 409, "SCHEMA_PUBLISHED")
    assert client.get(f"/schemas/{schema['id']}", headers=staff.headers()).get_json() == schema


def test_a_published_schema_still_changes_how_wallets_show_it(app, client):
    staff = make_staff(app)
    schema = published_badge(client, staff)
    relabelled = [
        {"name": "level", "description": "Membership level", "type": "TEXT"},
        {"name": "points", "description": "Points earned", "type": "NUMBER"},
    ]
    changed = client.put(
        f"/schemas/{schema['id']}",
        json={"name": "Member badge", "background_color": "#12107C", "attributes": relabelled},
        headers=staff.headers(),
    )
    assert changed.status_code == 200, changed.get_json()
    body = changed.get_json()
    assert body["name"] == "Member badge" and body["vct"] == BADGE["vct"]
    assert [a["description"] for a in body["attributes"]] == ["Membership level", "Points earned"]
    # What a client read, sent back whole with a new description, changes only that.
    sent_back = {
        key: body[key] for key in ("name", "vct", "format", "premium_plus", "public", "attributes")
    }
    again = client.put(
        f"/schemas/{schema['id']}",
        json={**sent_back, "description": "Shown on the card"},
        headers=staff.headers(),
    )
    assert again.status_code == 200, again.get_json()
    assert again.get_json()["description"] == "Shown on the card"
    # How its next credentials are issued is the issuer's to tighten or loosen.
    issuing = {"validity_days": 30, "key_attestations_required": True}
    settings = client.put(f"/schemas/{schema['id']}", json=issuing, headers=staff.headers())
    assert settings.status_code == 200, settings.get_json()


def test_the_operator_makes_a_schema_public_and_it_stays_frozen(app, client):
    owner = make_staff(app)
    other = make_staff(app, "bob@example.test", org_name="Other")
    schema = client.post("/schemas", json=BADGE, headers=owner.headers()).get_json()

    result = app.test_cli_runner().invoke(args=["schemas", "publish-public", schema["id"]])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert (printed["id"], printed["public"], printed["published"]) == (schema["id"], True, True)

    seen = client.get(f"/schemas/{schema['id']}", headers=other.headers())
    assert seen.status_code == 200 and seen.get_json()["public"] is True
    # Its organization can no longer move what the other organization's verifications ask.
    moved = client.put(
        f"/schemas/{schema['id']}",
        json={"vct": "urn:acme.example:badge:2", "premium_plus": True},
        headers=owner.headers(),
    )
    assert_refused(moved, 409, "SCHEMA_PUBLISHED")
    withdrawn = client.put(
        f"/schemas/{schema['id']}", json={"public": False}, headers=owner.headers()
    )
    assert_refused(withdrawn, 403, "PUBLIC_SCHEMA_OPERATOR_ONLY")
    assert client.get(f"/schemas/{schema['id']}", headers=other.headers()).status_code == 200


def test_publish_public_of_an_unknown_schema_exits_non_zero(app):
    result = app.test_cli_runner().invoke(
        args=["schemas", "publish-public", "5c4a3f3e-0b1d-4c7e-9a51-0000000000ff"]
    )
    assert result.exit_code == 1
    assert "No schema with ID" in result.output
