"""What /openapi.json says in words where a new integrator would read it wrong.

``sql: no rows in result set`` is the interface's fixed text for "not found": every 400 of
the document shows it as an example under the code NOT_FOUND and says it means not found;
the live answer carries that code. ``return_url`` and its placeholders are described.
"""

from __future__ import annotations

import uuid

from factories import make_staff

from app.errors import NOT_FOUND_TEXT


def test_every_400_shows_the_not_found_text_as_not_found(client):
    document = client.get("/openapi.json").get_json()
    four_hundreds = [
        operation["responses"]["400"]
        for item in document["paths"].values()
        for operation in item.values()
        if "400" in operation.get("responses", {})
    ]
    assert four_hundreds
    for response in four_hundreds:
        assert "not found" in response["description"]
        example = response["content"]["application/json"]["examples"]["not_found"]
        assert example["value"] == {"error": NOT_FOUND_TEXT, "code": "NOT_FOUND"}
        assert "Not found" in example["summary"]
    error = document["components"]["schemas"]["ErrorOut"]["properties"]
    assert "not found" in error["error"]["description"]
    assert "NOT_FOUND" in error["code"]["description"]


def test_a_missing_record_answers_the_fixed_text_with_code_not_found(app, client):
    staff = make_staff(app)
    response = client.get(f"/verifications/{uuid.uuid4()}", headers=staff.headers())
    assert response.status_code == 400
    assert response.get_json() == {"error": NOT_FOUND_TEXT, "code": "NOT_FOUND"}
