"""A small world of records for the hostile-input tests, and the JSON endpoints it can reach.

The JSON endpoints come from the running app's OpenAPI document (every documented request
body), plus the browser's Digital Credentials API answer, which is not part of the public API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from factories import Staff, make_apikey, make_staff, make_verification
from flask import Flask
from flask.testing import FlaskClient
from signing_certificates import make_pki, pem

PARAM = re.compile(r"\{([a-z_]+)\}")


@dataclass
class World:
    """A PRO organization's owner, their key and one record of each kind a path can name."""

    staff: Staff
    apikey: str
    ids: dict[str, str]
    connection_url: str

    def headers(self) -> dict[str, str]:
        """Both credentials: each endpoint reads the one it wants and ignores the other."""
        return {**self.staff.headers(), "apikey": self.apikey}


def make_world(app: Flask, client: FlaskClient) -> World:
    staff = make_staff(app)
    apikey = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff)
    recipient = client.post(
        "/recipients",
        json={"first_name": "Ada", "last_name": "L", "email": "ada@example.test"},
        headers={"apikey": apikey},
    ).get_json()
    schema = client.post(
        "/schemas",
        json={
            "name": "Member",
            "description": "A member card",
            "vct": "urn:example.test:member:1",
            "attributes": [{"name": "level", "description": "Level", "type": "TEXT"}],
        },
        headers=staff.headers(),
    ).get_json()
    source = client.post(
        "/trust/sources",
        json={"name": "Our CAs", "kind": "PEM", "certificates": pem(make_pki().ca).decode()},
        headers=staff.headers(),
    ).get_json()
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": "c-1", "verification_id": verification["id"]},
    ).get_json()
    connect = client.get(f"/verifications/{opened['id']}/connect").get_json()
    request_id = connect_request_id(connect)
    ids = {
        "organization_id": staff.organization_id,
        "verification_id": verification["id"],
        "recipient_id": recipient["id"],
        "schema_id": schema["id"],
        "request_id": request_id,
        "source_id": source["id"],
    }
    return World(staff, apikey, ids, connect["connection_url"])


def connect_request_id(connect: dict[str, Any]) -> str:
    """The presentation request's ID inside a connection link (``.../requests/<id>`` by
    reference, ``.../responses/<id>`` by value)."""
    match = re.search(
        r"(?:requests|responses)%2F([0-9a-f-]{36})|(?:requests|responses)/([0-9a-f-]{36})",
        str(connect),
    )
    assert match, connect
    return match.group(1) or match.group(2)


def json_endpoints(client: FlaskClient) -> list[tuple[str, str]]:
    """(method, path template) of every endpoint that reads a JSON body."""
    document = client.get("/openapi.json").get_json()
    found = [
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    ]
    found.append(("POST", "/oid4vp/dc-responses/{request_id}"))
    return sorted(found)


def fill(path: str, ids: dict[str, str]) -> str:
    return PARAM.sub(lambda m: ids[m.group(1)], path)


def send(client: FlaskClient, world: World, method: str, path: str, **kwargs: Any):
    headers = {**world.headers(), "Origin": "https://verity.test", **kwargs.pop("headers", {})}
    return client.open(fill(path, world.ids), method=method, headers=headers, **kwargs)


def assert_error(response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.get_data()[:300])
    assert response.content_type == "application/json"
    body = response.get_json()
    assert isinstance(body["error"], str) and body["error"]
    assert body["code"] == code, body
    return body


CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(client: FlaskClient, path: str = "/dashboard/login") -> str:
    """The CSRF token a dashboard page hands this browser."""
    match = CSRF_FIELD.search(client.get(path).get_data(as_text=True))
    assert match, f"{path} carries no CSRF token"
    return match.group(1)


def sign_in(client: FlaskClient, token: str):
    """Sign in to the dashboard with the sign-in page's token form."""
    response = client.post(
        "/dashboard/login/token", data={"token": token, "csrf_token": csrf_of(client)}
    )
    assert response.status_code == 302, response.get_data(as_text=True)
    return response


def submit(client: FlaskClient, path: str, data: dict[str, Any] | None = None):
    """Post a dashboard form with the token a dashboard page gave this browser."""
    return client.post(path, data={**(data or {}), "csrf_token": csrf_of(client, "/dashboard/")})
