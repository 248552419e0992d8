"""Operator commands: JSON on stdout, non-zero exit with a message on bad input."""

from __future__ import annotations

import json

from app.extensions import db
from app.identity.models import User
from app.organizations.models import Organization


def run(app, *args: str):
    return app.test_cli_runner().invoke(args=list(args))


def run_json(app, *args: str) -> dict:
    result = run(app, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_users_create_prints_the_user(app):
    user = run_json(app, "users", "create", "--email", "ops@example.test", "--name", "Ops")
    assert user["email"] == "ops@example.test" and user["name"] == "Ops"


def test_users_create_twice_exits_non_zero_with_a_message(app):
    run_json(app, "users", "create", "--email", "ops@example.test")
    result = run(app, "users", "create", "--email", "ops@example.test")
    assert result.exit_code == 1
    assert "already exists" in result.stderr


def test_tokens_create_gives_a_working_session_token(app, client):
    run_json(app, "users", "create", "--email", "ops@example.test")
    token = run_json(app, "tokens", "create", "--email", "ops@example.test", "--hours", "2")
    assert set(token) == {"token", "expires_at"}
    me = client.get("/me", headers={"Authorization": f"Bearer {token['token']}"})
    assert me.status_code == 200
    with app.app_context():
        assert token["token"] not in {u.email for u in db.session.query(User)}


def test_tokens_create_for_an_unknown_user_fails(app):
    result = run(app, "tokens", "create", "--email", "ghost@example.test")
    assert result.exit_code == 1
    assert "No user" in result.stderr


def test_orgs_create_and_set_plan(app):
    run_json(app, "users", "create", "--email", "ops@example.test")
    org = run_json(app, "orgs", "create", "--name", "Acme", "--owner-email", "ops@example.test")
    assert org["plan"] == "FREE"
    changed = run_json(app, "orgs", "set-plan", org["id"], "PREMIUM_PLUS")
    assert changed["plan"] == "PREMIUM_PLUS"
    with app.app_context():
        assert db.session.query(Organization).one().plan.value == "PREMIUM_PLUS"


def test_orgs_set_plan_rejects_bad_input(app):
    assert run(app, "orgs", "set-plan", "not-an-id", "PRO").exit_code == 1
    assert (
        run(app, "orgs", "set-plan", "00000000-0000-0000-0000-000000000000", "GOLD").exit_code == 2
    )


def test_vouchers_mint_prints_codes_that_redeem(app, client):
    codes = run_json(app, "vouchers", "mint", "--plan", "PRO", "--days", "30", "--count", "3")[
        "codes"
    ]
    assert len(set(codes)) == 3
    run_json(app, "users", "create", "--email", "ops@example.test")
    run_json(app, "orgs", "create", "--name", "Acme", "--owner-email", "ops@example.test")
    token = run_json(app, "tokens", "create", "--email", "ops@example.test")["token"]
    response = client.post(
        "/vouchers/exchange", json={"code": codes[0]}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.get_json()["plan"] == "PRO"


def test_vouchers_mint_refuses_the_free_plan(app):
    result = run(app, "vouchers", "mint", "--plan", "FREE", "--days", "30")
    assert result.exit_code == 1


def test_schemas_seed_is_idempotent(app):
    assert run_json(app, "schemas", "seed") == {"added": 0}
