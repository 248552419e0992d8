"""Idempotency-Key on the JSON creates: a retry answers what the first request answered."""

from __future__ import annotations

from datetime import timedelta

import pytest
from factories import make_apikey, make_staff, make_verification, verification_body
from issuance.issuance_support import make_org
from sqlalchemy import func, select
from support.race import all_at_once

from app import clock
from app.extensions import db
from app.idempotency import jobs as idempotency_jobs
from app.idempotency.models import IdempotentRequest
from app.issuance.models import Credential
from app.policies.models import PolicyRequest
from app.recipients.models import Recipient
from app.verifications.models import Individual, Verification

ADA = {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"}


@pytest.fixture
def backend(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    return {"apikey": make_apikey(app, staff.organization_id)}, verification, staff


def keyed(headers: dict[str, str], key: str) -> dict[str, str]:
    return {**headers, "Idempotency-Key": key}


def count(app, model) -> int:
    with app.app_context():
        total = db.session.scalar(select(func.count()).select_from(model))
        db.session.remove()
    return total


def test_a_retried_recipient_create_returns_the_first_answer_and_makes_one_record(
    app, client, backend
):
    headers, _, _ = backend
    body = {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"}
    first = client.post("/recipients", json=body, headers=keyed(headers, "retry-1"))
    again = client.post("/recipients", json=body, headers=keyed(headers, "retry-1"))
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert count(app, Recipient) == 1


def test_the_same_key_with_another_body_is_422_idempotency_key_reused(app, client, backend):
    headers, _, _ = backend
    client.post("/recipients", json=ADA, headers=keyed(headers, "k"))
    other = client.post(
        "/recipients", json={**ADA, "first_name": "Grace"}, headers=keyed(headers, "k")
    )
    assert other.status_code == 422
    assert other.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert count(app, Recipient) == 1


def test_a_key_belongs_to_its_organization(app, client, backend):
    headers, _, _ = backend
    other = make_staff(app, "bob@example.test", org_name="Other")
    other_headers = {"apikey": make_apikey(app, other.organization_id)}
    body = ADA
    mine = client.post("/recipients", json=body, headers=keyed(headers, "shared"))
    theirs = client.post("/recipients", json=body, headers=keyed(other_headers, "shared"))
    assert theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs.headers
    assert theirs.get_json()["id"] != mine.get_json()["id"]


def test_a_refused_create_is_not_kept_so_the_fixed_retry_runs(app, client, backend):
    headers, _, _ = backend
    refused = client.post(
        "/policy-requests", json={"verification_id": "nope"}, headers=keyed(headers, "k2")
    )
    assert refused.status_code == 400
    assert count(app, IdempotentRequest) == 0


def test_policy_request_replay_returns_the_same_token_and_page(app, client, backend):
    headers, verification, _ = backend
    body = {"verification_id": verification["id"]}
    first = client.post("/policy-requests", json=body, headers=keyed(headers, "p-1"))
    again = client.post("/policy-requests", json=body, headers=keyed(headers, "p-1"))
    assert again.status_code == 201
    assert again.get_json()["token"] == first.get_json()["token"]
    assert count(app, PolicyRequest) == 1


def test_the_stored_answer_is_sealed(app, client, backend):
    headers, verification, _ = backend
    first = client.post(
        "/policy-requests",
        json={"verification_id": verification["id"]},
        headers=keyed(headers, "sealed"),
    )
    with app.app_context():
        row = db.session.scalars(select(IdempotentRequest)).one()
        assert first.get_json()["token"].encode() not in row.sealed_body
        db.session.remove()


def test_session_creates_honour_the_key(app, client):
    staff = make_staff(app)
    headers = keyed(staff.headers(), "v-1")
    first = client.post("/verifications", json=verification_body(), headers=headers)
    again = client.post("/verifications", json=verification_body(), headers=headers)
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["id"] == first.get_json()["id"]
    assert count(app, Verification) == 1


def test_opening_an_individual_honours_the_key(app, client, backend):
    _, verification, _ = backend
    body = {"customer_id": "c-1", "verification_id": verification["id"]}
    first = client.post("/verifications/individuals", json=body, headers={"Idempotency-Key": "o"})
    again = client.post("/verifications/individuals", json=body, headers={"Idempotency-Key": "o"})
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    other = client.post(
        "/verifications/individuals",
        json={**body, "customer_id": "c-2"},
        headers={"Idempotency-Key": "o"},
    )
    assert other.status_code == 422


def test_an_unauthenticated_opening_shares_no_key_with_the_organizations_backend(
    app, client, backend
):
    headers, verification, _ = backend
    mine = {"customer_id": "c-backend", "verification_id": verification["id"]}
    theirs = {"customer_id": "c-guess", "verification_id": verification["id"]}
    # The backend's key, sent again by anyone without the apikey: neither replayed nor refused.
    backend_first = client.post(
        "/verifications/individuals", json=mine, headers=keyed(headers, "k")
    )
    assert backend_first.status_code == 201
    probe = client.post("/verifications/individuals", json=theirs, headers={"Idempotency-Key": "k"})
    assert probe.status_code == 201, probe.get_json()
    assert "Idempotent-Replayed" not in probe.headers
    assert probe.get_json()["customer_id"] == "c-guess"
    same_body = client.post(
        "/verifications/individuals", json=mine, headers={"Idempotency-Key": "k"}
    )
    assert "Idempotent-Replayed" not in same_body.headers
    # And the other way: a key burned unauthenticated first still works for the backend.
    burned = {"customer_id": "c-burn", "verification_id": verification["id"]}
    later = {"customer_id": "c-later", "verification_id": verification["id"]}
    assert (
        client.post("/verifications/individuals", json=burned, headers={"Idempotency-Key": "b"})
    ).status_code == 201
    backend_later = client.post(
        "/verifications/individuals", json=later, headers=keyed(headers, "b")
    )
    assert backend_later.status_code == 201, backend_later.get_json()
    assert "Idempotent-Replayed" not in backend_later.headers
    assert backend_later.get_json()["customer_id"] == "c-later"
    # Each sender's own retry still replays.
    again = client.post("/verifications/individuals", json=later, headers=keyed(headers, "b"))
    assert again.headers["Idempotent-Replayed"] == "true"
    assert count(app, Individual) == 4


@pytest.mark.parametrize("key", ["", "x" * 256, "with space", "ünïcode"])
def test_a_malformed_key_is_400(client, backend, key):
    headers, _, _ = backend
    response = client.post("/recipients", json={}, headers=keyed(headers, key))
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_two_requests_with_one_key_at_once_make_one_record(app, backend):
    headers, _, _ = backend
    body = {**ADA, "last_name": "Racer"}

    def create(_: int) -> tuple[int, str, str | None]:
        response = app.test_client().post("/recipients", json=body, headers=keyed(headers, "race"))
        return (
            response.status_code,
            response.get_json()["id"],
            response.headers.get("Idempotent-Replayed"),
        )

    results = all_at_once(8, create)
    assert {status for status, _, _ in results} == {201}
    assert len({record for _, record, _ in results}) == 1
    assert sorted(str(replayed) for _, _, replayed in results) == ["None"] + ["true"] * 7
    assert count(app, Recipient) == 1


def test_two_credential_issues_with_one_key_at_once_issue_once(app, client):
    org = make_org(app)
    headers = keyed(org.headers, "issue-race")

    def issue(_: int) -> tuple[int, str]:
        response = app.test_client().post("/credentials", json=org.body(), headers=headers)
        return response.status_code, response.get_json()["id"]

    results = all_at_once(4, issue)
    assert {status for status, _ in results} == {201}
    assert len({record for _, record in results}) == 1
    assert count(app, Credential) == 1


def test_keys_expire_after_a_day_and_the_housekeeping_sweeps_them(app, client, backend):
    headers, _, _ = backend
    body = ADA
    client.post("/recipients", json=body, headers=keyed(headers, "old"))
    later = clock.now() + timedelta(hours=24, seconds=1)
    clock.set_source(lambda: later)
    again = client.post("/recipients", json=body, headers=keyed(headers, "old"))
    assert again.status_code == 201
    assert "Idempotent-Replayed" not in again.headers
    client.post("/recipients", json=body, headers=keyed(headers, "other"))
    assert count(app, Recipient) == 3
    clock.set_source(lambda: later + timedelta(hours=24, seconds=1))
    with app.app_context():
        assert idempotency_jobs.sweep() == 2
        db.session.commit()
        db.session.remove()
    clock.set_source(None)
    assert count(app, IdempotentRequest) == 0


def test_a_create_without_a_key_is_unchanged(app, client, backend):
    headers, _, _ = backend
    client.post("/recipients", json=ADA, headers=headers)
    client.post("/recipients", json=ADA, headers=headers)
    assert count(app, Recipient) == 2
    assert count(app, Individual) == 0
