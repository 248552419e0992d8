"""Records for tests, made through the domain operations and committed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import Flask

from app.extensions import db
from app.identity.operations import create_user, issue_session_token
from app.integrations.operations import create_integration
from app.organizations.models import Plan
from app.organizations.operations import create_organization
from app.schemas.public import PUBLIC_SCHEMAS

PID_SCHEMA_ID = str(PUBLIC_SCHEMAS[0]["id"])


@dataclass
class Staff:
    """A signed-in user with one organization, and the headers to act as them."""

    user_id: str
    email: str
    token: str
    organization_id: str
    extra_orgs: list[str] = field(default_factory=list)

    def headers(self, organization_id: str | None = None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}"}
        if organization_id:
            headers["current-identity"] = organization_id
        return headers


def make_staff(
    app: Flask, email: str = "alice@example.test", plan: Plan = Plan.PRO, org_name: str = "Acme"
) -> Staff:
    with app.app_context():
        user = create_user(email, email.split("@")[0].title())
        organization = create_organization(user, org_name, plan)
        token, _ = issue_session_token(user, 12)
        staff = Staff(str(user.id), user.email, token, str(organization.id))
        db.session.commit()
        db.session.remove()
    return staff


def make_apikey(app: Flask, organization_id: str, name: str = "backend") -> str:
    from app.organizations.models import Organization

    with app.app_context():
        organization = db.session.get(Organization, __import__("uuid").UUID(organization_id))
        key, _ = create_integration(organization, name)
        db.session.commit()
        db.session.remove()
    return key


def verification_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Adult residents",
        "description": "We check that you are of age and live in the EU.",
        "schema_id": PID_SCHEMA_ID,
        "claims": ["given_name", "family_name"],
        "attributes": [
            {"attribute_id": "birthdate", "operator": "AGE_AT_LEAST", "value": 18},
            {"name": "address.country", "operator": "IN", "value": ["FR", "DE", "NL"]},
        ],
        "trusted_issuers": [],
    }
    body.update(overrides)
    return body


def make_verification(client, staff: Staff, **overrides: Any) -> dict[str, Any]:
    response = client.post(
        "/verifications", json=verification_body(**overrides), headers=staff.headers()
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()
