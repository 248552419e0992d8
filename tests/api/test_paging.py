"""Lists page by ``offset`` and ``limit`` (or ``page``), and refuse a query parameter they do
not know rather than ignore it."""

from __future__ import annotations

import pytest
from factories import make_apikey, make_staff, make_verification

ADA = {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"}


@pytest.fixture
def five_recipients(app, client):
    staff = make_staff(app)
    headers = {"apikey": make_apikey(app, staff.organization_id)}
    for number in range(5):
        created = client.post(
            "/recipients", json={**ADA, "last_name": f"L{number}"}, headers=headers
        )
        assert created.status_code == 201
    return headers, staff


def ids(response) -> list[str]:
    assert response.status_code == 200, response.get_json()
    return [row["id"] for row in response.get_json()["results"]]


def test_offset_and_limit_walk_the_whole_list(client, five_recipients):
    headers, _ = five_recipients
    everything = ids(client.get("/recipients?limit=100", headers=headers))
    walked = []
    for offset in range(0, 5, 2):
        walked += ids(client.get(f"/recipients?offset={offset}&limit=2", headers=headers))
    assert walked == everything
    assert len(set(walked)) == 5
    assert client.get("/recipients?offset=5&limit=2", headers=headers).get_json() == {
        "results": [],
        "total": 5,
    }


def test_page_still_pages_as_before(client, five_recipients):
    headers, _ = five_recipients
    assert ids(client.get("/recipients?page=2&limit=2", headers=headers)) == ids(
        client.get("/recipients?offset=2&limit=2", headers=headers)
    )


@pytest.mark.parametrize(
    "query", ["offset=-1", "offset=x", "limit=0", "limit=101", "offset=1&page=2"]
)
def test_bad_paging_is_400(client, five_recipients, query):
    headers, _ = five_recipients
    response = client.get(f"/recipients?{query}", headers=headers)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


@pytest.mark.parametrize(
    "path",
    [
        "/recipients",
        "/credentials",
        "/schemas",
        "/verifications",
        "/organizations",
        "/integrations",
        "/webhooks/endpoints",
        "/trust/sources",
        "/audit-events",
    ],
)
def test_an_unknown_query_parameter_is_400_on_every_list(app, client, path):
    staff = make_staff(app)
    headers = {**staff.headers(), "apikey": make_apikey(app, staff.organization_id)}
    response = client.get(f"{path}?ofset=20", headers=headers)
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "UNKNOWN_QUERY_PARAMETER"
    assert "ofset" in body["error"]


def test_unknown_parameter_on_a_verification_s_individuals_and_deliveries(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    individuals = client.get(
        f"/verifications/{verification['id']}/individuals?status=FAILED", headers=staff.headers()
    )
    assert individuals.status_code == 400
    assert individuals.get_json()["code"] == "UNKNOWN_QUERY_PARAMETER"
    paged = client.get(
        f"/verifications/{verification['id']}/individuals?offset=0&limit=5",
        headers=staff.headers(),
    )
    assert paged.status_code == 200


def test_the_apikey_query_parameter_is_not_unknown(client, five_recipients):
    headers, _ = five_recipients
    response = client.get(f"/recipients?apikey={headers['apikey']}&offset=1&limit=1")
    assert response.status_code == 200
    assert response.get_json()["total"] == 5


def test_credential_filters_are_known(app, client):
    staff = make_staff(app)
    response = client.get("/credentials?status=ISSUED&offset=0", headers=staff.headers())
    assert response.status_code == 200


def test_the_audit_trail_pages_by_offset(app, client):
    staff = make_staff(app)
    for _ in range(3):
        make_verification(client, staff)
    everything = ids(client.get("/audit-events?limit=100", headers=staff.headers()))
    assert len(everything) >= 3
    walked = []
    for offset in range(0, len(everything), 2):
        walked += ids(client.get(f"/audit-events?offset={offset}&limit=2", headers=staff.headers()))
    assert walked == everything
    assert ids(client.get("/audit-events?offset=1&limit=1", headers=staff.headers())) == [
        everything[1]
    ]


def test_the_audit_trail_documents_offset(client):
    listed = client.get("/openapi.json").get_json()["paths"]["/audit-events"]["get"]
    names = {parameter["name"] for parameter in listed["parameters"]}
    assert {"offset", "limit", "page", "actor", "from", "to"} <= names
