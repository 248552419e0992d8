"""The W3C Digital Credentials API endpoints the person's page calls (OpenID4VP 1.0 Appendix A)."""

from __future__ import annotations

import uuid

import pytest
from pages_support import open_individual, request_id_of, response_code, wallet_link
from wallets import Issuer, node_presentation, read_request

ORIGIN = "https://verity.test"


@pytest.fixture
def opened(app, client):
    """An individual, its page's link, and the request a wallet reads behind it."""
    opened = open_individual(app, client, return_url="https://acme.test/back")
    link = wallet_link(client.get(opened.path).get_data(as_text=True))
    return opened, read_request(client, link)


def dc_post(client, request_id: str, presentation: str, origin: str | None = ORIGIN):
    headers = {"Origin": origin} if origin is not None else {}
    return client.post(
        f"/oid4vp/dc-responses/{request_id}",
        json={"vp_token": {"credential": [presentation]}},
        headers=headers,
    )


def bound_to_origin(request, **options) -> str:
    """A presentation whose key binding names the page's origin, as a wallet does over the API."""
    return node_presentation(request, Issuer(), aud=f"origin:{ORIGIN}", **options)


def status_of(client, opened) -> str:
    return client.get(f"/verifications/{opened.individual_id}/verify").get_json()["status"]


def test_the_request_is_an_unsigned_openid4vp_request_for_the_dc_api(client, opened):
    _, request = opened
    response = client.get(f"/oid4vp/dc-requests/{request.request_id}")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    assert [r["protocol"] for r in body["requests"]] == ["openid4vp-v1-unsigned"]
    data = body["requests"][0]["data"]
    assert data == {
        "response_type": "vp_token",
        "response_mode": "dc_api",
        "nonce": request.nonce,
        "dcql_query": request.claims["dcql_query"],
        "client_metadata": request.claims["client_metadata"],
    }
    # Appendix A.2: client_id MUST be omitted from unsigned requests; state is not defined.
    assert "client_id" not in data
    assert "state" not in data


def test_an_unknown_request_is_the_api_s_not_found(client, app):
    response = client.get(f"/oid4vp/dc-requests/{uuid.uuid4()}")
    assert (response.status_code, response.get_json()["code"]) == (400, "NOT_FOUND")


def test_a_presentation_bound_to_the_origin_verifies(client, opened):
    individual, request = opened
    response = dc_post(client, request.request_id, bound_to_origin(request))
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    assert body["status"] == "VERIFIED"
    assert body["redirect_uri"].startswith(f"{ORIGIN}{individual.path}?response_code=")
    assert status_of(client, individual) == "VERIFIED"
    # The browser that called the API holds the code, so it may see the result.
    result = client.get(f"{individual.path}?response_code={response_code(body['redirect_uri'])}")
    assert "You are verified" in result.get_data(as_text=True)


@pytest.mark.parametrize(
    "origin", ["https://evil.test", "http://verity.test", "https://verity.test:8443", "null", None]
)
def test_another_origin_is_refused_and_consumes_nothing(client, opened, origin):
    individual, request = opened
    presentation = bound_to_origin(request)
    response = dc_post(client, request.request_id, presentation, origin)
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_ORIGIN")
    assert status_of(client, individual) == "REQUESTED"
    assert dc_post(client, request.request_id, presentation).get_json()["status"] == "VERIFIED"


def test_a_presentation_bound_to_the_client_id_fails_over_the_dc_api(client, opened):
    """Appendix A.4: over the API the audience is the origin, never the client identifier."""
    individual, request = opened
    presentation = node_presentation(request, Issuer())
    body = dc_post(client, request.request_id, presentation).get_json()
    assert body["status"] == "FAILED"
    assert status_of(client, individual) == "FAILED"


def test_the_nonce_is_checked_the_same_way(client, opened):
    _, request = opened
    body = dc_post(client, request.request_id, bound_to_origin(request, nonce="stale")).get_json()
    assert body["status"] == "FAILED"


def test_a_replayed_answer_is_refused(client, opened):
    _, request = opened
    presentation = bound_to_origin(request)
    assert dc_post(client, request.request_id, presentation).status_code == 200
    replay = dc_post(client, request.request_id, presentation)
    assert (replay.status_code, replay.get_json()["code"]) == (400, "ALREADY_ANSWERED")


@pytest.mark.parametrize(
    "body", [{}, {"vp_token": "not-an-object"}, {"error": "access_denied"}, {"vp_token": {}}]
)
def test_malformed_answers_are_refused(client, opened, body):
    individual, request = opened
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}", json=body, headers={"Origin": ORIGIN}
    )
    assert response.status_code == 400
    assert status_of(client, individual) == "REQUESTED"


def test_the_page_points_its_button_at_both_endpoints(client, app):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    request_id = request_id_of(wallet_link(page))
    assert f'data-request-url="/oid4vp/dc-requests/{request_id}"' in page
    assert f'data-response-url="/oid4vp/dc-responses/{request_id}"' in page
    assert '<script src="/static/js/dc-api.js" defer></script>' in page


def test_no_encryption_key_is_offered_for_a_plain_dc_api_response(make_app, opened):
    """Even where direct_post.jwt is on, ``dc_api`` answers unencrypted: no key to encrypt to."""
    _, request = opened
    encrypting = make_app(RESPONSE_ENCRYPTION=True).test_client()
    body = encrypting.get(f"/oid4vp/dc-requests/{request.request_id}").get_json()
    data = body["requests"][0]["data"]
    assert data["response_mode"] == "dc_api"
    assert "jwks" not in data["client_metadata"]
    assert "encrypted_response_enc_values_supported" not in data["client_metadata"]


def test_the_digital_credential_as_the_browser_returns_it_verifies(client, opened):
    """``{"protocol", "data"}``: what ``navigator.credentials.get`` resolves to, posted as is."""
    individual, request = opened
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={
            "protocol": "openid4vp-v1-unsigned",
            "data": {"vp_token": {"credential": [bound_to_origin(request)]}},
        },
        headers={"Origin": ORIGIN},
    )
    assert response.get_json()["status"] == "VERIFIED"
    assert status_of(client, individual) == "VERIFIED"


@pytest.mark.parametrize(
    "body",
    [
        {"protocol": "openid4vp-v1-unsigned", "data": {}},
        {"protocol": "openid4vp-v1-unsigned", "data": {"vp_token": "x"}},
        {"protocol": "org-iso-mdoc", "data": {}},
        {"protocol": "org-iso-mdoc"},
    ],
)
def test_a_digital_credential_without_its_response_is_refused(client, opened, body):
    individual, request = opened
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}", json=body, headers={"Origin": ORIGIN}
    )
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_RESPONSE")
    assert status_of(client, individual) == "REQUESTED"
