"""What the API answers for the method, the media type and the address a client chose: the
documented partial update is PATCH, a method an address refuses is a 405 with ``Allow``, a body
without Content-Type is JSON (as the errors page says), and an unknown address is a page for a
browser and JSON for everyone else."""

from __future__ import annotations

import json
from pathlib import Path

from factories import make_staff, make_verification

ROOT = Path(__file__).resolve().parents[2]
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_patch_is_the_documented_partial_update_and_put_still_works(app, client):
    staff = make_staff(app)
    made = make_verification(client, staff)
    patched = client.patch(
        f"/verifications/{made['id']}", json={"name": "Renamed"}, headers=staff.headers()
    )
    assert patched.status_code == 200, patched.get_json()
    assert patched.get_json()["name"] == "Renamed"
    # Fields left out keep their value.
    assert patched.get_json()["description"] == made["description"]
    put = client.put(
        f"/verifications/{made['id']}", json={"description": "Again"}, headers=staff.headers()
    )
    assert put.status_code == 200, put.get_json()
    assert put.get_json()["name"] == "Renamed"
    assert put.get_json()["description"] == "Again"


def test_the_openapi_document_names_patch_and_put_for_the_update(client):
    path = client.get("/openapi.json").get_json()["paths"]["/verifications/{verification_id}"]
    assert {"get", "patch", "put", "delete"} <= set(path)
    assert path["patch"]["requestBody"] == path["put"]["requestBody"]


def test_the_docs_list_patch_beside_put_for_a_verification():
    text = (ROOT / "docs/reference/api-behaviour.md").read_text()
    assert "| GET, PUT, PATCH, DELETE | `/verifications/{verification_id}` |" in text


def test_a_method_the_individuals_address_refuses_is_405_with_allow(app, client):
    staff = make_staff(app)
    for method in ("PUT", "PATCH", "DELETE", "GET"):
        response = client.open(
            "/verifications/individuals", method=method, json={}, headers=staff.headers()
        )
        assert response.status_code == 405, (method, response.get_json())
        assert response.get_json()["code"] == "METHOD_NOT_ALLOWED"
        assert "POST" in response.headers["Allow"]
    # Without a session token too: the address, not the caller, decides.
    response = client.put("/verifications/individuals", json={})
    assert response.status_code == 405
    assert "POST" in response.headers["Allow"]


def test_an_id_that_is_not_the_collection_word_still_reaches_the_verification(app, client):
    staff = make_staff(app)
    response = client.get("/verifications/individualsx", headers=staff.headers())
    assert response.status_code == 400
    assert response.get_json()["code"] == "NOT_FOUND"


def test_a_json_body_without_content_type_is_read_as_json(app, client):
    """Kept on purpose: clients (curl --data-binary, wallets' and backends' bare posts) send
    JSON without a Content-Type and rely on it; only another declared type is a 415."""
    staff = make_staff(app)
    made = make_verification(client, staff)
    body = json.dumps({"customer_id": "c-1", "verification_id": made["id"]})
    response = client.post("/verifications/individuals", data=body)
    assert response.status_code in (200, 201), response.get_json()
    refused = client.post(
        "/verifications/individuals", data=body, headers={"Content-Type": "text/plain"}
    )
    assert refused.status_code == 415


def test_the_errors_page_says_what_a_body_without_content_type_is():
    text = (ROOT / "docs/reference/errors.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 415 |"))
    assert "no `Content-Type`" in row and "read as JSON" in row


def test_an_unknown_address_is_a_page_for_a_browser(client):
    response = client.get("/no-such-page", headers={"Accept": BROWSER_ACCEPT})
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "This page does not exist" in page
    assert "Content-Security-Policy" in response.headers


def test_an_unknown_address_is_a_translated_page_in_the_browsers_language(client):
    response = client.get(
        "/no-such-page", headers={"Accept": BROWSER_ACCEPT, "Accept-Language": "de"}
    )
    assert response.status_code == 404
    assert "This page does not exist" not in response.get_data(as_text=True)
    assert 'lang="de"' in response.get_data(as_text=True)


def test_an_unknown_address_is_json_for_an_api_client(client):
    for accept in (None, "*/*", "application/json", "application/json, text/html;q=0.5"):
        headers = {"Accept": accept} if accept else {}
        response = client.get("/no-such-page", headers=headers)
        assert response.status_code == 404, accept
        assert response.get_json() == {"error": "No such endpoint", "code": "NOT_FOUND"}


def test_the_didcomm_door_keeps_its_own_media_type_even_without_content_type(client):
    """The JSON API's leniency is not the DIDComm door's: a message must say what it is."""
    response = client.post("/didcomm", data=b"{}")
    assert response.status_code == 415
    assert response.get_json()["code"] == "UNSUPPORTED_MEDIA_TYPE"
