"""Every error is JSON with a stable code, whatever went wrong."""

from __future__ import annotations

import logging
import uuid

import pytest
from factories import make_staff

from app import create_app


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status
    assert response.content_type == "application/json"
    body = response.get_json()
    assert isinstance(body["error"], str) and body["error"]
    assert body["code"] == code
    return body


def test_unknown_route_is_json_404(client):
    assert_error(client.get("/nowhere"), 404, "NOT_FOUND")


def test_wrong_method_is_json_405_with_allow(client):
    response = client.delete("/healthz")
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert "GET" in response.headers["Allow"]


def test_oversized_body_is_json_413(client):
    response = client.post(
        "/verifications/individuals",
        data=b"{" + b" " * (2 * 1024 * 1024) + b"}",
        content_type="application/json",
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


def test_malformed_json_is_400_invalid_request(client):
    response = client.post(
        "/verifications/individuals", data=b'{"customer_id": ', content_type="application/json"
    )
    body = assert_error(response, 400, "INVALID_REQUEST")
    assert "JSON" in body["error"]


def test_a_json_array_body_is_400_invalid_request(client):
    assert_error(client.post("/verifications/individuals", json=[1, 2]), 400, "INVALID_REQUEST")


def test_unknown_fields_are_refused_by_name(app, client):
    staff = make_staff(app)
    response = client.post(
        "/organizations", json={"name": "A", "plan": "PRO"}, headers=staff.headers()
    )
    body = assert_error(response, 400, "INVALID_REQUEST")
    assert "plan" in body["error"]


def test_unknown_uuid_is_400_sql_no_rows(app, client):
    staff = make_staff(app)
    response = client.get(f"/verifications/{uuid.uuid4()}", headers=staff.headers())
    assert assert_error(response, 400, "NOT_FOUND")["error"] == "sql: no rows in result set"


def test_unhandled_exception_is_json_500_without_stack_trace(make_app, caplog):
    broken = make_app(TESTING=False)

    @broken.get("/boom")
    def boom():
        raise RuntimeError("secret internals")

    with caplog.at_level(logging.ERROR):
        response = broken.test_client().get("/boom")
    body = assert_error(response, 500, "INTERNAL")
    assert "secret internals" not in response.get_data(as_text=True)
    assert "Traceback" not in response.get_data(as_text=True)
    assert body == {"error": "Internal server error", "code": "INTERNAL"}


def test_production_refuses_the_development_secret(monkeypatch):
    monkeypatch.setenv("VERITY_ENV", "production")
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(RuntimeError, match="SECRET_KEY"):
        create_app({"SQLALCHEMY_DATABASE_URI": "sqlite://"})
