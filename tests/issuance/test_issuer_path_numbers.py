"""A number in a path that no INTEGER column can hold names nothing: 404, never a 500.

Werkzeug's ``int`` converter took any run of digits, and the database driver failed on the
query (SQLite: OverflowError; PostgreSQL: NumericValueOutOfRange), a traceback per request.
"""

from __future__ import annotations

import logging

import pytest
from issuance.issuance_support import Wallet, issue, make_org, receive

from app.web.converters import MAX_DATABASE_INTEGER

BEYOND = [
    str(MAX_DATABASE_INTEGER + 1),  # past PostgreSQL's integer
    "9223372036854775808",  # past a signed 64-bit integer (SQLite's and the drivers')
    "1" + "0" * 5000,  # more digits than int() converts
]


@pytest.fixture
def issuing_org(app, client):
    """An organization with its first credential signed, so its status list 0 exists."""
    org = make_org(app)
    receive(client, org, Wallet(), issue(client, org))
    return org


@pytest.mark.parametrize("number", BEYOND, ids=["int32+1", "int64+1", "5000-digits"])
def test_a_status_list_number_out_of_range_is_404(client, issuing_org, caplog, number) -> None:
    with caplog.at_level(logging.ERROR):
        response = client.get(issuing_org.path(f"/status-lists/{number}"))
    assert response.status_code == 404
    assert response.is_json and response.get_json()["error"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_the_largest_storable_number_is_an_unknown_list(client, issuing_org) -> None:
    response = client.get(issuing_org.path(f"/status-lists/{MAX_DATABASE_INTEGER}"))
    assert response.status_code == 404
    assert response.get_json() == {"error": "not_found", "error_description": "No such status list"}


@pytest.mark.parametrize(
    "number", ["\u0660", "\uff10"], ids=["arabic-indic-zero", "fullwidth-zero"]
)
def test_only_ascii_digits_name_a_status_list(client, issuing_org, number) -> None:
    assert client.get(issuing_org.path("/status-lists/0")).status_code == 200
    assert client.get(issuing_org.path(f"/status-lists/{number}")).status_code == 404


def test_openapi_documents_the_bound_of_a_number_in_a_path(client) -> None:
    operation = client.get("/openapi.json").get_json()["paths"][
        "/issuers/{org_id}/status-lists/{number}"
    ]["get"]
    number = next(p for p in operation["parameters"] if p["name"] == "number")
    assert number["schema"] == {"type": "integer", "minimum": 0, "maximum": MAX_DATABASE_INTEGER}
