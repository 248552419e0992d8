"""The three unauthenticated endpoints a person reaches, and the request object."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

from factories import make_staff, make_verification
from support.race import all_at_once

from app import clock
from app.extensions import db
from app.verifications.models import Individual, PresentationRequest, Status

NOT_FOUND = {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


def open_individual(client, verification_id: str, customer_id: str = "customer-1"):
    return client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification_id},
    )


def decode_request_object(jwt: str) -> tuple[dict, dict]:
    header, payload, signature = jwt.split(".")
    assert signature == ""

    def part(value: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))

    return part(header), part(payload)


def test_post_verifications_individuals_opens_an_individual(app, client):
    verification = make_verification(client, make_staff(app))
    response = open_individual(client, verification["id"])
    assert response.status_code == 201
    body = response.get_json()
    assert body["id"] == body["individual_id"]
    uuid.UUID(body["individual_id"])
    assert body["verification_id"] == verification["id"]
    assert body["customer_id"] == "customer-1"
    assert body["status"] == "CREATED"
    assert body["validation_error"] is None
    assert "claims" not in body


def test_opening_an_individual_answers_the_person_s_page_address(app, client):
    verification = make_verification(client, make_staff(app))
    body = open_individual(client, verification["id"]).get_json()
    assert body["page_url"] == f"https://verity.test/i/{body['individual_id']}"
    page = client.get(urlsplit(body["page_url"]).path)
    assert page.status_code == 200
    assert open_individual(client, verification["id"]).get_json()["page_url"] == body["page_url"]


def test_post_verifications_individuals_is_idempotent_per_pair(app, client):
    verification = make_verification(client, make_staff(app))
    first = open_individual(client, verification["id"])
    again = open_individual(client, verification["id"])
    assert again.status_code == 200
    assert again.get_json() == first.get_json()
    other = open_individual(client, verification["id"], "customer-2")
    assert other.status_code == 201
    assert other.get_json()["id"] != first.get_json()["id"]


def test_concurrent_opens_of_one_pair_create_one_individual(app, client):
    verification = make_verification(client, make_staff(app))

    def open_once(_: int) -> tuple[int, str]:
        response = open_individual(app.test_client(), verification["id"], "racer")
        return response.status_code, response.get_json()["id"]

    results = all_at_once(20, open_once)
    assert len({individual_id for _, individual_id in results}) == 1
    assert sorted(status for status, _ in results) == [200] * 19 + [201]
    with app.app_context():
        assert db.session.query(Individual).filter_by(customer_id="racer").count() == 1


def test_post_verifications_individuals_with_unknown_verification_is_400_not_found(client):
    response = open_individual(client, str(uuid.uuid4()))
    assert response.status_code == 400
    assert response.get_json() == NOT_FOUND


def test_post_verifications_individuals_validates_its_body(client):
    response = client.post("/verifications/individuals", json={"customer_id": "x"})
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"
    assert "verification_id" in response.get_json()["error"]


def test_get_connect_returns_an_openid4vp_link_and_moves_to_requested(app, client):
    verification = make_verification(client, make_staff(app))
    individual = open_individual(client, verification["id"]).get_json()
    response = client.get(f"/verifications/{individual['id']}/connect")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "REQUESTED"
    assert body["connection_at"] is not None
    link = urlsplit(body["connection_url"])
    assert link.scheme == "openid4vp"
    # Unsigned: the link carries the request itself (no request_uri to fetch).
    params = parse_qs(link.query)
    assert set(params) == {
        "client_id",
        "response_type",
        "response_mode",
        "response_uri",
        "nonce",
        "state",
        "dcql_query",
        "client_metadata",
    }
    response_uri = params["response_uri"][0]
    assert response_uri.startswith("https://verity.test/oid4vp/responses/")
    assert params["client_id"][0] == "redirect_uri:" + response_uri


def test_request_object_carries_a_dcql_query_built_from_the_verification(make_app):
    app = make_app(REQUEST_BY_REFERENCE=True)
    client = app.test_client()
    verification = make_verification(client, make_staff(app))
    individual = open_individual(client, verification["id"]).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    assert set(parse_qs(urlsplit(link).query)) == {"client_id", "request_uri"}
    request_uri = parse_qs(urlsplit(link).query)["request_uri"][0]
    response = client.get(urlsplit(request_uri).path)
    assert response.status_code == 200
    assert response.content_type == "application/oauth-authz-req+jwt"
    header, claims = decode_request_object(response.get_data(as_text=True))
    assert header == {"alg": "none", "typ": "oauth-authz-req+jwt"}
    assert claims["response_type"] == "vp_token"
    assert claims["response_mode"] == "direct_post"
    assert claims["client_id"] == "redirect_uri:" + claims["response_uri"]
    assert claims["nonce"] and claims["state"]
    (credential,) = claims["dcql_query"]["credentials"]
    assert credential["format"] == "dc+sd-jwt"
    assert credential["meta"] == {"vct_values": ["urn:eudi:pid:1"]}
    # Wanted claims plus those the conditions read, and nothing else (data minimisation).
    assert [c["path"] for c in credential["claims"]] == [
        ["given_name"],
        ["family_name"],
        ["birthdate"],
        ["address", "country"],
    ]


def test_get_connect_returns_the_same_link_for_two_minutes_then_a_new_one(app, client):
    verification = make_verification(client, make_staff(app))
    individual = open_individual(client, verification["id"]).get_json()
    start = clock.now()
    clock.set_source(lambda: start)
    first = client.get(f"/verifications/{individual['id']}/connect").get_json()
    clock.set_source(lambda: start + timedelta(seconds=119))
    again = client.get(f"/verifications/{individual['id']}/connect").get_json()
    assert again["connection_url"] == first["connection_url"]
    clock.set_source(lambda: start + timedelta(seconds=121))
    fresh = client.get(f"/verifications/{individual['id']}/connect").get_json()
    assert fresh["connection_url"] != first["connection_url"]
    with app.app_context():
        nonces = {r.nonce for r in db.session.query(PresentationRequest).all()}
        states = {r.state for r in db.session.query(PresentationRequest).all()}
    assert len(nonces) == 2 and len(states) == 2


def test_concurrent_connects_agree_on_one_link(app, client):
    verification = make_verification(client, make_staff(app))
    individual = open_individual(client, verification["id"]).get_json()

    def connect(_: int) -> str:
        body = app.test_client().get(f"/verifications/{individual['id']}/connect").get_json()
        return body["connection_url"]

    assert len(set(all_at_once(10, connect))) == 1


def test_get_connect_with_unknown_individual_is_400_not_found(client):
    for individual_id in (str(uuid.uuid4()), "not-a-uuid"):
        response = client.get(f"/verifications/{individual_id}/connect")
        assert response.status_code == 400
        assert response.get_json() == NOT_FOUND


def test_get_verify_returns_200_with_the_status(app, client):
    verification = make_verification(client, make_staff(app))
    individual = open_individual(client, verification["id"]).get_json()
    response = client.get(f"/verifications/{individual['id']}/verify")
    assert response.status_code == 200
    assert response.get_json()["status"] == "CREATED"
    assert response.get_json()["validation_error"] is None


def test_get_verify_of_a_failed_presentation_is_200_with_failed_and_validation_error(app, client):
    verification = make_verification(client, make_staff(app))
    individual = open_individual(client, verification["id"]).get_json()
    with app.app_context():
        row = db.session.get(Individual, uuid.UUID(individual["id"]))
        row.status = Status.FAILED
        row.validation_error = (
            "Credential issuer https://evil.example is not trusted by this verification"
        )
        row.claims = {"given_name": "Erika"}
        db.session.commit()
    response = client.get(f"/verifications/{individual['id']}/verify")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "FAILED"
    assert body["validation_error"].startswith("Credential issuer https://evil.example")
    assert "claims" not in body and "Erika" not in response.get_data(as_text=True)


def test_get_verify_with_unknown_individual_is_400_not_found(client):
    response = client.get(f"/verifications/{uuid.uuid4()}/verify")
    assert response.status_code == 400
    assert response.get_json() == NOT_FOUND


def test_unknown_request_object_is_400_not_found(client):
    response = client.get(f"/oid4vp/requests/{uuid.uuid4()}")
    assert response.status_code == 400
    assert response.get_json() == NOT_FOUND
