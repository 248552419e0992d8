"""Policy requests complete the same way as individuals; their outcome shows on .../status."""

from __future__ import annotations

import pytest
from factories import make_apikey, make_staff, make_verification
from wallets import Issuer, node_presentation, post_response, read_request

from app.extensions import db
from app.policies.operations import connect_policy
from app.web.links import links


@pytest.fixture
def policy(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    headers = {"apikey": make_apikey(app, staff.organization_id)}
    created = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    return created, headers


def open_page(app, token: str) -> str:
    """What the person's page does on opening: the current link of the policy request."""
    with app.test_request_context():
        _, request = connect_policy(token, 120, 600)
        db.session.commit()
        return links().connection_url(request.id)


def test_a_policy_request_is_verified_by_a_presentation(app, client, policy):
    created, headers = policy
    request = read_request(client, open_page(app, created["token"]))
    response = post_response(client, request, node_presentation(request, Issuer()))
    assert response.get_json()["redirect_uri"].startswith(f"{created['url']}?response_code=")
    status = client.get(f"/policy-requests/{created['id']}/status", headers=headers).get_json()
    assert status["status"] == "VERIFIED"
    assert status["claims"]["given_name"] == "Erika"


def test_a_policy_request_that_fails_says_why(app, client, policy):
    created, headers = policy
    request = read_request(client, open_page(app, created["token"]))
    post_response(client, request, node_presentation(request, Issuer(), nonce="stale"))
    status = client.get(f"/policy-requests/{created['id']}/status", headers=headers).get_json()
    assert status["status"] == "FAILED"
    assert "nonce" in status["validation_error"]


def test_opening_the_page_marks_the_policy_request_requested_with_one_link(app, client, policy):
    created, headers = policy
    first = open_page(app, created["token"])
    assert open_page(app, created["token"]) == first
    status = client.get(f"/policy-requests/{created['id']}/status", headers=headers).get_json()
    assert status["status"] == "REQUESTED"
