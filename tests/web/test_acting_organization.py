"""The contract's sessions, acting organization, plans and its 402/403 answers: session, acting organization, plans."""

from __future__ import annotations

import uuid
from datetime import timedelta

from factories import PID_SCHEMA_ID, make_staff, verification_body

from app import clock
from app.extensions import db
from app.identity.operations import find_user_by_email
from app.organizations.models import Membership, Plan
from app.organizations.operations import create_organization

UPGRADE = {"code": "UPGRADE_REQUIRED", "tier": "FREE"}


def second_organization(app, staff, plan: Plan = Plan.FREE, name: str = "Second") -> str:
    with app.app_context():
        organization = create_organization(find_user_by_email(staff.email), name, plan)
        db.session.commit()
        return str(organization.id)


def test_session_token_in_authorization_bearer_header(app, client):
    staff = make_staff(app)
    response = client.get("/me", headers=staff.headers())
    assert response.status_code == 200
    assert response.get_json()["user"]["email"] == staff.email


def test_missing_or_invalid_bearer_token_is_401(client):
    for headers in ({}, {"Authorization": "Bearer vs_nope"}, {"Authorization": "Basic abc"}):
        response = client.get("/me", headers=headers)
        assert response.status_code == 401
        assert response.get_json()["code"] == "UNAUTHORIZED"


def test_expired_session_token_is_401(app, client):
    staff = make_staff(app)
    later = clock.now() + timedelta(hours=13)
    clock.set_source(lambda: later)
    assert client.get("/me", headers=staff.headers()).status_code == 401


def test_default_organization_is_the_one_joined_longest_ago(app, client):
    staff = make_staff(app)
    second = second_organization(app, staff)
    me = client.get("/me", headers=staff.headers()).get_json()
    assert me["default_organization_id"] == staff.organization_id
    assert me["acting_organization_id"] == staff.organization_id
    assert [m["organization"]["id"] for m in me["memberships"]] == [staff.organization_id, second]


def test_current_identity_header_sets_the_acting_organization(app, client):
    staff = make_staff(app)
    second = second_organization(app, staff)
    me = client.get("/me", headers=staff.headers(second)).get_json()
    assert me["acting_organization_id"] == second


def test_current_identity_that_is_not_an_organization_id_is_403_saying_so(app, client):
    staff = make_staff(app)
    response = client.get("/me", headers=staff.headers("acme"))
    assert response.status_code == 403
    assert response.get_json() == {
        "error": "current-identity 'acme' is not a valid organization ID",
        "code": "INVALID_IDENTITY",
    }


def test_current_identity_of_a_foreign_organization_is_403_saying_so(app, client):
    staff = make_staff(app)
    other = make_staff(app, "bob@example.test", org_name="Bob's")
    response = client.get("/me", headers=staff.headers(other.organization_id))
    assert response.status_code == 403
    body = response.get_json()
    assert body["code"] == "NOT_A_MEMBER"
    assert body["error"] == (
        f"current-identity {other.organization_id} names an organization you are not a member of"
    )
    unknown = str(uuid.uuid4())
    assert client.get("/me", headers=staff.headers(unknown)).get_json()["code"] == "NOT_A_MEMBER"


def test_post_verifications_on_the_free_plan_is_402_upgrade_required(app, client):
    staff = make_staff(app, plan=Plan.FREE)
    response = client.post("/verifications", json=verification_body(), headers=staff.headers())
    assert response.status_code == 402
    body = response.get_json()
    assert set(body) == {"error", "code", "tier"}
    assert {k: body[k] for k in ("code", "tier")} == UPGRADE
    assert isinstance(body["error"], str) and body["error"]


def test_every_gated_action_is_402_on_the_free_plan(app, client):
    staff = make_staff(app, plan=Plan.FREE)
    for path, body in [
        ("/verifications", verification_body()),
        ("/integrations", {"name": "backend"}),
        (f"/organizations/{staff.organization_id}/codes", {}),
    ]:
        response = client.post(path, json=body, headers=staff.headers())
        assert response.status_code == 402, path
        assert {k: response.get_json()[k] for k in ("code", "tier")} == UPGRADE


def test_plan_is_checked_against_the_acting_organization(app, client):
    staff = make_staff(app, plan=Plan.PRO)
    free = second_organization(app, staff, Plan.FREE)
    gated = client.post("/verifications", json=verification_body(), headers=staff.headers(free))
    assert gated.status_code == 402
    allowed = client.post(
        "/verifications", json=verification_body(), headers=staff.headers(staff.organization_id)
    )
    assert allowed.status_code == 201
    # The verification belongs to the organization that acted, not to the default one.
    listed = client.get("/verifications", headers=staff.headers(free)).get_json()
    assert listed["total"] == 0


def test_a_lapsed_voucher_period_falls_back_to_free(app, client):
    staff = make_staff(app, plan=Plan.FREE)
    with app.app_context():
        membership = db.session.query(Membership).one()
        membership.organization.plan = Plan.PRO
        membership.organization.plan_expires_at = clock.now() + timedelta(hours=1)
        db.session.commit()
    assert (
        client.post("/integrations", json={"name": "a"}, headers=staff.headers()).status_code == 201
    )
    later = clock.now() + timedelta(hours=2)
    clock.set_source(lambda: later)
    assert (
        client.post("/integrations", json={"name": "b"}, headers=staff.headers()).status_code == 402
    )


def test_premium_plus_schema_from_a_non_premium_plus_organization_is_403(app, client):
    staff = make_staff(app, plan=Plan.PRO)
    schema = client.post(
        "/schemas",
        json={
            "name": "Licensed nurse",
            "vct": "https://nurses.example/licence",
            "premium_plus": True,
            "attributes": [{"name": "licence_number"}],
        },
        headers=staff.headers(),
    ).get_json()
    response = client.post(
        "/verifications",
        json=verification_body(schema_id=schema["id"], claims=["licence_number"], attributes=[]),
        headers=staff.headers(),
    )
    assert response.status_code == 403
    assert response.get_json()["code"] == "PREMIUM_PLUS_REQUIRED"
    premium = make_staff(app, "pat@example.test", plan=Plan.PREMIUM_PLUS, org_name="Premium")
    own = client.post(
        "/schemas",
        json={
            "name": "Licensed nurse",
            "vct": "https://nurses.example/licence",
            "premium_plus": True,
            "attributes": [{"name": "licence_number"}],
        },
        headers=premium.headers(),
    ).get_json()
    allowed = client.post(
        "/verifications",
        json=verification_body(schema_id=own["id"], claims=["licence_number"], attributes=[]),
        headers=premium.headers(),
    )
    assert allowed.status_code == 201


def test_a_user_without_organization_is_told_to_create_one(app, client):
    staff = make_staff(app)
    with app.app_context():
        db.session.query(Membership).delete()
        db.session.commit()
    response = client.post("/verifications", json=verification_body(), headers=staff.headers())
    assert response.status_code == 403
    assert response.get_json()["code"] == "NO_ORGANIZATION"
    assert client.get("/me", headers=staff.headers()).get_json()["acting_organization_id"] is None


def test_public_schema_id_is_usable_by_every_organization(app, client):
    staff = make_staff(app)
    response = client.get(f"/schemas/{PID_SCHEMA_ID}", headers=staff.headers())
    assert response.status_code == 200
    assert response.get_json()["public"] is True
