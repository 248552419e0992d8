"""Organizations, memberships and invitation codes."""

from __future__ import annotations

from datetime import timedelta

from factories import make_staff

from app import clock
from app.extensions import db
from app.organizations.models import OrganizationCode, Plan


def test_creating_an_organization_makes_the_creator_owner_on_free(app, client):
    staff = make_staff(app)
    response = client.post("/organizations", json={"name": "Beta"}, headers=staff.headers())
    assert response.status_code == 201
    created = response.get_json()
    assert created["plan"] == "FREE"
    detail = client.get(f"/organizations/{created['id']}", headers=staff.headers()).get_json()
    assert detail["role"] == "OWNER"
    assert [m["email"] for m in detail["members"]] == [staff.email]
    listed = client.get("/organizations", headers=staff.headers()).get_json()
    assert listed["total"] == 2


def test_an_organization_you_do_not_belong_to_looks_missing(app, client):
    staff = make_staff(app)
    other = make_staff(app, "bob@example.test", org_name="Bob's")
    response = client.get(f"/organizations/{other.organization_id}", headers=staff.headers())
    assert response.status_code == 400
    assert response.get_json()["error"] == "sql: no rows in result set"


def mint(client, staff, organization_id=None, **body):
    organization_id = organization_id or staff.organization_id
    return client.post(
        f"/organizations/{organization_id}/codes", json=body, headers=staff.headers()
    )


def test_minting_a_code_and_joining_with_it(app, client):
    owner = make_staff(app)
    response = mint(client, owner)
    assert response.status_code == 201
    code = response.get_json()["code"]
    with app.app_context():
        assert db.session.query(OrganizationCode).one().code_hash != code
    newcomer = make_staff(app, "carol@example.test", org_name="Carol's")
    joined = client.post("/organizations/join", json={"code": code}, headers=newcomer.headers())
    assert joined.status_code == 200
    assert joined.get_json()["organization"]["id"] == owner.organization_id
    assert joined.get_json()["role"] == "MEMBER"
    again = client.post("/organizations/join", json={"code": code}, headers=newcomer.headers())
    assert again.status_code == 200
    # Joining does not change the newcomer's default organization (the oldest membership).
    me = client.get("/me", headers=newcomer.headers()).get_json()
    assert me["default_organization_id"] == newcomer.organization_id


def test_joining_with_an_unknown_code_is_404(app, client):
    staff = make_staff(app)
    response = client.post("/organizations/join", json={"code": "vo_nope"}, headers=staff.headers())
    assert response.status_code == 404
    assert response.get_json()["code"] == "NOT_FOUND"


def test_joining_with_an_expired_code_is_404(app, client):
    owner = make_staff(app)
    code = mint(client, owner, days=1).get_json()["code"]
    newcomer = make_staff(app, "carol@example.test", org_name="Carol's")
    later = clock.now() + timedelta(days=1, minutes=1)
    clock.set_source(lambda: later)
    with app.app_context():
        from app.identity.operations import find_user_by_email, issue_session_token

        token, _ = issue_session_token(find_user_by_email(newcomer.email), 1)
        db.session.commit()
    response = client.post(
        "/organizations/join", json={"code": code}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 404


def test_members_cannot_mint_codes(app, client):
    owner = make_staff(app)
    code = mint(client, owner).get_json()["code"]
    member = make_staff(app, "dave@example.test", plan=Plan.PRO, org_name="Dave's")
    client.post("/organizations/join", json={"code": code}, headers=member.headers())
    response = client.post(
        f"/organizations/{owner.organization_id}/codes",
        json={},
        headers=member.headers(owner.organization_id),
    )
    assert response.status_code == 403


def test_codes_are_minted_for_the_acting_organization_only(app, client):
    owner = make_staff(app)
    second = client.post(
        "/organizations", json={"name": "Beta"}, headers=owner.headers()
    ).get_json()
    response = mint(client, owner, second["id"])
    assert response.status_code == 403
    assert response.get_json()["code"] == "NOT_ACTING_ORGANIZATION"
