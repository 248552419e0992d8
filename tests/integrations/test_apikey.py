"""The integration key, and the authenticated lookup it reaches."""

from __future__ import annotations

import uuid

from factories import make_apikey, make_staff, make_verification

from app.extensions import db
from app.integrations.models import Integration

NOT_FOUND = {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


def opened(app, client, customer_id: str = "customer-1"):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification["id"]},
    )
    return staff, verification


def test_get_individual_lookup_with_apikey_header(app, client):
    staff, verification = opened(app, client)
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/customer-1", headers={"apikey": key}
    )
    assert response.status_code == 200
    body = response.get_json()
    assert body["customer_id"] == "customer-1"
    assert body["status"] == "CREATED"
    assert body["claims"] is None and body["issuer"] is None


def test_get_individual_lookup_with_apikey_query_parameter(app, client):
    staff, verification = opened(app, client)
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/customer-1?apikey={key}"
    )
    assert response.status_code == 200


def test_get_individual_lookup_without_apikey_is_401(app, client):
    _, verification = opened(app, client)
    response = client.get(f"/verifications/{verification['id']}/individuals/customer-1")
    assert response.status_code == 401
    assert response.get_json()["code"] == "UNAUTHORIZED"


def test_get_individual_lookup_with_a_wrong_apikey_is_401(app, client):
    _, verification = opened(app, client)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/customer-1", headers={"apikey": "vk_nope"}
    )
    assert response.status_code == 401


def test_get_individual_lookup_refuses_a_session_token(app, client):
    staff, verification = opened(app, client)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/customer-1", headers=staff.headers()
    )
    assert response.status_code == 401


def test_get_individual_lookup_for_a_customer_never_opened_is_400_not_found(app, client):
    staff, verification = opened(app, client)
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/stranger", headers={"apikey": key}
    )
    assert response.status_code == 400
    assert response.get_json() == NOT_FOUND


def test_get_individual_lookup_with_a_wrong_verification_id_is_400_not_found(app, client):
    staff, _ = opened(app, client)
    key = make_apikey(app, staff.organization_id)
    for verification_id in (str(uuid.uuid4()), "nope"):
        response = client.get(
            f"/verifications/{verification_id}/individuals/customer-1", headers={"apikey": key}
        )
        assert response.status_code == 400
        assert response.get_json() == NOT_FOUND


def test_another_organizations_individual_looks_missing(app, client):
    _, verification = opened(app, client)
    stranger = make_staff(app, "mallory@example.test", org_name="Other")
    key = make_apikey(app, stranger.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/customer-1", headers={"apikey": key}
    )
    assert response.status_code == 400
    assert response.get_json() == NOT_FOUND


def test_keys_are_stored_only_as_a_hash_and_shown_once(app, client):
    staff = make_staff(app)
    created = client.post("/integrations", json={"name": "backend"}, headers=staff.headers())
    assert created.status_code == 201
    key = created.get_json()["key"]
    assert key.startswith("vk_") and created.get_json()["key_prefix"] == key[:10]
    with app.app_context():
        stored = db.session.query(Integration).one()
        assert key not in (stored.key_hash, stored.key_prefix, stored.name)
    listed = client.get("/integrations", headers=staff.headers())
    assert key not in listed.get_data(as_text=True)
    assert listed.get_json()["results"][0]["key_prefix"] == key[:10]


def test_a_key_deleted_in_the_dashboard_fails_with_401(app, client):
    staff, verification = opened(app, client)
    created = client.post("/integrations", json={"name": "old"}, headers=staff.headers()).get_json()
    url = f"/verifications/{verification['id']}/individuals/customer-1"
    assert client.get(url, headers={"apikey": created["key"]}).status_code == 200
    assert (
        client.delete(f"/integrations/{created['id']}", headers=staff.headers()).status_code == 204
    )
    assert client.get(url, headers={"apikey": created["key"]}).status_code == 401


def test_rotation_with_two_integrations(app, client):
    staff, verification = opened(app, client)
    first = client.post("/integrations", json={"name": "a"}, headers=staff.headers()).get_json()
    second = client.post("/integrations", json={"name": "b"}, headers=staff.headers()).get_json()
    url = f"/verifications/{verification['id']}/individuals/customer-1"
    client.delete(f"/integrations/{first['id']}", headers=staff.headers())
    assert client.get(url, headers={"apikey": second["key"]}).status_code == 200
    assert client.get(url, headers={"apikey": first["key"]}).status_code == 401


def test_session_only_resources_refuse_an_apikey(app, client):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    for method, path in [
        ("get", "/verifications"),
        ("post", "/verifications"),
        ("get", "/schemas"),
        ("get", "/organizations"),
        ("get", "/integrations"),
        ("post", "/integrations"),
        ("get", "/me"),
    ]:
        response = getattr(client, method)(path, headers={"apikey": key}, json={})
        assert response.status_code == 401, path


def test_apikey_resources_refuse_a_session_token(app, client):
    staff = make_staff(app)
    for method, path in [
        ("post", "/policy-requests"),
        ("get", f"/policy-requests/{uuid.uuid4()}/status"),
        ("get", "/recipients"),
        ("post", "/recipients"),
        ("put", "/recipients"),
        ("delete", "/recipients"),
    ]:
        response = getattr(client, method)(path, headers=staff.headers(), json={})
        assert response.status_code == 401, path
