"""The webhook endpoints API: session token, creation tier-gated, the secret shown once and
stored sealed, another organization's endpoints out of reach, bad input refused with 400."""

from __future__ import annotations

import uuid
from datetime import timedelta
from itertools import pairwise

import pytest
from factories import make_apikey, make_staff

from app.extensions import db
from app.organizations.models import Plan
from app.webhooks import settings
from app.webhooks.models import WebhookDelivery, WebhookEndpoint
from app.webhooks.sealing import SealedSecretError, open_sealed

URL = "https://hooks.example.test/verity"


def create(client, staff, **body):
    return client.post("/webhooks/endpoints", json={"url": URL, **body}, headers=staff.headers())


def test_creating_returns_the_secret_once_and_stores_it_sealed(app, client):
    staff = make_staff(app)
    response = create(client, staff, events=["individual.verified"], description="CRM")
    assert response.status_code == 201
    created = response.get_json()
    assert created["secret"].startswith("whsec_")
    assert created["url"] == URL and created["events"] == ["individual.verified"]
    assert created["enabled"] is True and created["include_claims"] is False

    listed = client.get("/webhooks/endpoints", headers=staff.headers()).get_json()
    assert listed["total"] == 1
    assert "secret" not in listed["results"][0]
    assert listed["results"][0]["id"] == created["id"]

    with app.app_context():
        row = db.session.get(WebhookEndpoint, uuid.UUID(created["id"]))
        assert created["secret"].encode() not in row.sealed_secret
        kek = settings.current().kek
        assert open_sealed(row.sealed_secret, kek) == created["secret"]
        with pytest.raises(SealedSecretError):
            open_sealed(row.sealed_secret, bytes(32))


def test_creating_is_tier_gated(app, client):
    staff = make_staff(app, plan=Plan.FREE)
    response = create(client, staff)
    assert response.status_code == 402
    assert response.get_json()["code"] == "UPGRADE_REQUIRED"
    assert client.get("/webhooks/endpoints", headers=staff.headers()).status_code == 200


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"url": "http://hooks.example.test/"}, "https"),
        ({"url": "ftp://hooks.example.test/"}, "https"),
        ({"url": "https://user:pw@hooks.example.test/"}, "password"),
        ({"url": "not a url"}, "https"),
        ({"url": URL, "events": ["individual.deleted"]}, "events"),
        ({"url": URL, "unknown": 1}, "unknown"),
        ({"url": URL, "events": "individual.verified"}, "events"),
        ({}, "url"),
    ],
)
def test_bad_bodies_are_400(app, client, body, words):
    staff = make_staff(app)
    response = client.post("/webhooks/endpoints", json=body, headers=staff.headers())
    assert response.status_code == 400, response.get_json()
    assert words in response.get_json()["error"].lower()


def test_an_integration_key_or_no_token_is_401(app, client):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    assert client.get("/webhooks/endpoints").status_code == 401
    assert (
        client.get("/webhooks/endpoints", headers={"Authorization": f"Bearer {key}"}).status_code
        == 401
    )


def missing(response) -> bool:
    """The contract's answer for an unknown record: 400 with code NOT_FOUND."""
    return response.status_code == 400 and response.get_json()["code"] == "NOT_FOUND"


def test_another_organizations_endpoint_reads_as_missing(app, client):
    owner = make_staff(app)
    other = make_staff(app, "bob@example.test", org_name="Other")
    endpoint = create(client, owner).get_json()
    path = f"/webhooks/endpoints/{endpoint['id']}"
    assert missing(client.delete(path, headers=other.headers()))
    assert missing(client.get(f"{path}/deliveries", headers=other.headers()))
    assert client.get("/webhooks/endpoints", headers=other.headers()).get_json()["total"] == 0
    assert missing(client.delete(f"/webhooks/endpoints/{uuid.uuid4()}", headers=owner.headers()))
    assert (
        client.delete("/webhooks/endpoints/not-an-id", headers=owner.headers()).status_code == 400
    )


def test_deleting_removes_the_endpoint_and_its_deliveries(app, client):
    staff = make_staff(app)
    endpoint = create(client, staff).get_json()
    path = f"/webhooks/endpoints/{endpoint['id']}"
    assert client.get(f"{path}/deliveries", headers=staff.headers()).get_json() == {
        "results": [],
        "total": 0,
    }
    assert client.delete(path, headers=staff.headers()).status_code == 204
    assert client.get("/webhooks/endpoints", headers=staff.headers()).get_json()["total"] == 0
    assert missing(client.get(f"{path}/deliveries", headers=staff.headers()))
    with app.app_context():
        assert db.session.query(WebhookDelivery).count() == 0


def test_the_endpoints_are_in_the_openapi_document(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert set(paths["/webhooks/endpoints"]) == {"get", "post"}
    assert set(paths["/webhooks/endpoints/{endpoint_id}"]) == {"delete"}
    assert set(paths["/webhooks/endpoints/{endpoint_id}/deliveries"]) == {"get"}


@pytest.mark.parametrize("rand", [0.0, 0.5, 0.999])
def test_retry_waits_grow_from_under_a_minute_to_at_most_twelve_hours(rand):
    from app.webhooks.delivery import LONGEST_WAIT, retry_delay

    waits = [retry_delay(attempt, rand) for attempt in range(1, 30)]
    assert timedelta(seconds=30) <= waits[0] < timedelta(minutes=1)
    assert all(wait <= LONGEST_WAIT for wait in waits)
    assert waits[-1] > LONGEST_WAIT - timedelta(minutes=1)
    growing = waits[: next(i for i, wait in enumerate(waits) if wait >= LONGEST_WAIT / 2)]
    assert all(later > earlier for earlier, later in pairwise(growing))
