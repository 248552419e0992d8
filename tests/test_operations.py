"""Health, readiness, the request log, and models that agree with their migrations."""

from __future__ import annotations

import json
import logging

from factories import make_apikey, make_staff
from flask_migrate import check

from app.request_log import redacted_path


def test_healthz_and_readyz(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ready"}


def test_models_and_migrations_agree(app):
    """``flask db check``: it exits non-zero (failing this test) when models and migrations drift."""
    with app.app_context():
        check()


def request_lines(caplog) -> list[dict]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "verity.request"]


def test_one_structured_line_per_request(app, client, caplog):
    with caplog.at_level(logging.INFO, logger="verity.request"):
        response = client.get("/healthz", headers={"X-Request-ID": "req-42"})
    (line,) = request_lines(caplog)
    assert line["request_id"] == "req-42" == response.headers["X-Request-ID"]
    assert (line["method"], line["path"], line["status"]) == ("GET", "/healthz", 200)
    assert isinstance(line["duration_ms"], float)


def test_apikey_query_strings_are_redacted_from_the_log(app, client, caplog):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    with caplog.at_level(logging.INFO):
        client.get(f"/recipients?apikey={key}&page=1")
    assert key not in caplog.text
    (line,) = request_lines(caplog)
    assert line["path"] == "/recipients?apikey=[redacted]&page=1"


def test_redaction_keeps_other_parameters():
    path = redacted_path("/x", b"apikey=vk_secret&APIKEY=vk_2&limit=5")
    assert "vk_secret" not in path and "vk_2" not in path and "limit=5" in path
