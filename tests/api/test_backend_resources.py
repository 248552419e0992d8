"""Policy requests and recipients, reached with an integration key."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from factories import make_apikey, make_staff, make_verification

from app import clock
from app.extensions import db
from app.policies.models import PolicyRequest
from app.verifications.models import Status

NOT_FOUND = {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


@pytest.fixture
def backend(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    return {"apikey": make_apikey(app, staff.organization_id)}, verification, staff


def recipient_body(**overrides):
    return {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test", **overrides}


def test_post_policy_requests_creates_a_policy_request(client, backend):
    headers, verification, _ = backend
    response = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    )
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"id", "token", "url", "expires_at", "status"}
    assert body["url"] == f"https://verity.test/p/{body['token']}"
    assert body["status"] == "CREATED"


def test_policy_request_token_is_stored_only_as_a_hash(app, client, backend):
    headers, verification, _ = backend
    body = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    with app.app_context():
        assert db.session.get(PolicyRequest, uuid.UUID(body["id"])).token_hash != body["token"]


def test_get_policy_request_status(client, backend):
    headers, verification, _ = backend
    created = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    response = client.get(f"/policy-requests/{created['id']}/status", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["status"] == "CREATED"


def test_policy_request_status_is_410_once_its_token_expired(client, backend):
    headers, verification, _ = backend
    created = client.post(
        "/policy-requests",
        json={"verification_id": verification["id"], "expires_in": 60},
        headers=headers,
    ).get_json()
    later = clock.now() + timedelta(seconds=61)
    clock.set_source(lambda: later)
    response = client.get(f"/policy-requests/{created['id']}/status", headers=headers)
    assert response.status_code == 410
    assert response.get_json()["code"] == "EXPIRED"


def test_a_finished_policy_request_still_answers_after_expiry(app, client, backend):
    headers, verification, _ = backend
    created = client.post(
        "/policy-requests",
        json={"verification_id": verification["id"], "expires_in": 60},
        headers=headers,
    ).get_json()
    with app.app_context():
        db.session.get(PolicyRequest, uuid.UUID(created["id"])).status = Status.VERIFIED
        db.session.commit()
    later = clock.now() + timedelta(hours=1)
    clock.set_source(lambda: later)
    assert (
        client.get(f"/policy-requests/{created['id']}/status", headers=headers).status_code == 200
    )


@pytest.mark.parametrize("expires_in", [0, 86401, "soon"])
def test_policy_request_expiry_is_bounded(client, backend, expires_in):
    headers, verification, _ = backend
    response = client.post(
        "/policy-requests",
        json={"verification_id": verification["id"], "expires_in": expires_in},
        headers=headers,
    )
    assert response.status_code == 400


def test_policy_request_for_unknown_verification_or_recipient_is_400_not_found(client, backend):
    headers, verification, _ = backend
    for body in (
        {"verification_id": str(uuid.uuid4())},
        {"verification_id": verification["id"], "recipient_id": str(uuid.uuid4())},
    ):
        response = client.post("/policy-requests", json=body, headers=headers)
        assert (response.status_code, response.get_json()) == (400, NOT_FOUND)


def test_another_organizations_policy_request_looks_missing(app, client, backend):
    headers, verification, _ = backend
    created = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    stranger = make_staff(app, "mallory@example.test", org_name="Other")
    other = {"apikey": make_apikey(app, stranger.organization_id)}
    response = client.get(f"/policy-requests/{created['id']}/status", headers=other)
    assert (response.status_code, response.get_json()) == (400, NOT_FOUND)
    response = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=other
    )
    assert (response.status_code, response.get_json()) == (400, NOT_FOUND)


def test_policy_request_for_a_recipient(client, backend):
    headers, verification, _ = backend
    recipient = client.post("/recipients", json=recipient_body(), headers=headers).get_json()
    created = client.post(
        "/policy-requests",
        json={"verification_id": verification["id"], "recipient_id": recipient["id"]},
        headers=headers,
    ).get_json()
    status = client.get(f"/policy-requests/{created['id']}/status", headers=headers).get_json()
    assert status["recipient_id"] == recipient["id"]


def test_recipients_crud_with_id_in_body_or_query(client, backend):
    headers, _, _ = backend
    created = client.post("/recipients", json=recipient_body(), headers=headers)
    assert created.status_code == 201
    recipient = created.get_json()
    listed = client.get("/recipients", headers=headers).get_json()
    assert listed["total"] == 1 and listed["results"][0] == recipient
    one = client.get(f"/recipients?id={recipient['id']}", headers=headers).get_json()
    assert one == recipient
    renamed = client.put(
        "/recipients", json={"id": recipient["id"], "first_name": "Augusta"}, headers=headers
    )
    assert renamed.get_json()["first_name"] == "Augusta"
    by_query = client.put(
        f"/recipients?id={recipient['id']}", json={"last_name": "King"}, headers=headers
    )
    assert by_query.get_json()["last_name"] == "King"
    assert (
        client.delete("/recipients", json={"id": recipient["id"]}, headers=headers).status_code
        == 204
    )
    assert client.get("/recipients", headers=headers).get_json()["total"] == 0


def test_recipients_crud_on_their_own_path(client, backend):
    headers, _, _ = backend
    recipient = client.post(
        "/recipients", json=recipient_body(customer_id="crm-7"), headers=headers
    ).get_json()
    path = f"/recipients/{recipient['id']}"
    assert client.get(path, headers=headers).get_json()["customer_id"] == "crm-7"
    assert (
        client.put(path, json={"email": "ada@Example.TEST"}, headers=headers).get_json()["email"]
        == "ada@example.test"
    )
    assert client.delete(path, headers=headers).status_code == 204
    assert client.get(path, headers=headers).get_json() == NOT_FOUND
    assert (
        client.delete(f"/recipients?id={recipient['id']}", headers=headers).get_json() == NOT_FOUND
    )


def test_recipient_without_id_to_update_is_400(client, backend):
    headers, _, _ = backend
    response = client.put("/recipients", json={"first_name": "X"}, headers=headers)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_recipient_fields_are_validated(client, backend):
    headers, _, _ = backend
    response = client.post(
        "/recipients", json=recipient_body(email="not-an-email"), headers=headers
    )
    assert response.status_code == 400


def test_another_organizations_recipient_looks_missing(app, client, backend):
    headers, _, _ = backend
    recipient = client.post("/recipients", json=recipient_body(), headers=headers).get_json()
    stranger = make_staff(app, "mallory@example.test", org_name="Other")
    other = {"apikey": make_apikey(app, stranger.organization_id)}
    for method in ("get", "put", "delete"):
        response = getattr(client, method)(f"/recipients/{recipient['id']}", json={}, headers=other)
        assert (response.status_code, response.get_json()) == (400, NOT_FOUND), method
    assert client.get("/recipients", headers=other).get_json()["total"] == 0
