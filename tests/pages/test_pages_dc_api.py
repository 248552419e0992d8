"""The W3C Digital Credentials API endpoints the person's page calls (OpenID4VP 1.0 Appendix A)."""

from __future__ import annotations

import uuid

import pytest
from pages_support import open_individual, request_id_of, response_code, wallet_link
from wallets import Issuer, dc_api_key, encrypt_to, node_presentation, published_key, read_request

ORIGIN = "https://verity.test"


@pytest.fixture
def opened(app, client):
    """An individual, its page's link, and the request a wallet reads behind it."""
    opened = open_individual(app, client, return_url="https://acme.test/back")
    link = wallet_link(client.get(opened.path).get_data(as_text=True))
    return opened, read_request(client, link)


def dc_answer(client, request_id: str, presentation: str) -> dict:
    """The DigitalCredential a wallet answers ``dc_api.jwt`` with: its vp_token encrypted to
    the key the request offered, as the browser returns it."""
    jwe = encrypt_to(dc_api_key(client, request_id), {"vp_token": {"credential": [presentation]}})
    return {"protocol": "openid4vp-v1-unsigned", "data": {"response": jwe}}


def post_answer(client, request_id: str, answer: dict, origin: str | None = ORIGIN):
    headers = {"Origin": origin} if origin is not None else {}
    return client.post(f"/oid4vp/dc-responses/{request_id}", json=answer, headers=headers)


def dc_post(client, request_id: str, presentation: str, origin: str | None = ORIGIN):
    """A wallet's answer to the request, posted as the browser returned it."""
    return post_answer(client, request_id, dc_answer(client, request_id, presentation), origin)


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
    key = data["client_metadata"]["jwks"]["keys"][0]
    assert data == {
        "response_type": "vp_token",
        "response_mode": "dc_api.jwt",
        "nonce": request.nonce,
        "dcql_query": request.claims["dcql_query"],
        "client_metadata": {
            **request.claims["client_metadata"],
            "jwks": {"keys": [key]},
            "encrypted_response_enc_values_supported": ["A128GCM", "A256GCM"],
        },
    }
    # §5.1 and §8.3: a P-256 key for ECDH-ES, with its kid and alg, and public members only.
    assert {key["kty"], key["crv"], key["alg"], key["use"]} == {"EC", "P-256", "ECDH-ES", "enc"}
    assert key["kid"] and "d" not in key
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
    answer = dc_answer(client, request.request_id, bound_to_origin(request))
    assert post_answer(client, request.request_id, answer).status_code == 200
    replay = post_answer(client, request.request_id, answer)
    assert (replay.status_code, replay.get_json()["code"]) == (400, "ALREADY_ANSWERED")
    # The answered request is not handed out again (its keys are gone with it).
    again = client.get(f"/oid4vp/dc-requests/{request.request_id}")
    assert (again.status_code, again.get_json()["code"]) == (400, "ALREADY_ANSWERED")


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
    """DC_API_RESPONSE_MODE=dc_api: answers unencrypted, even where direct_post.jwt is on."""
    _, request = opened
    plain = make_app(RESPONSE_ENCRYPTION=True, DC_API_RESPONSE_MODE="dc_api").test_client()
    body = plain.get(f"/oid4vp/dc-requests/{request.request_id}").get_json()
    data = body["requests"][0]["data"]
    assert data["response_mode"] == "dc_api"
    assert "jwks" not in data["client_metadata"]
    assert "encrypted_response_enc_values_supported" not in data["client_metadata"]


@pytest.mark.parametrize(
    "body_of",
    [
        lambda presentation: {
            "protocol": "openid4vp-v1-unsigned",
            "data": {"vp_token": {"credential": [presentation]}},
        },
        lambda presentation: {"vp_token": {"credential": [presentation]}},
    ],
    ids=["digital-credential", "older-body"],
)
def test_a_plain_dc_api_answer_verifies_where_the_setting_asks_for_one(make_app, opened, body_of):
    """``{"protocol", "data"}`` as ``navigator.credentials.get`` resolves to it, or the older
    body (the data alone), under DC_API_RESPONSE_MODE=dc_api."""
    individual, request = opened
    plain = make_app(DC_API_RESPONSE_MODE="dc_api").test_client()
    response = plain.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json=body_of(bound_to_origin(request)),
        headers={"Origin": ORIGIN},
    )
    assert response.get_json()["status"] == "VERIFIED"
    assert status_of(plain, individual) == "VERIFIED"


def test_an_unknown_dc_api_response_mode_stops_the_start(make_app):
    with pytest.raises(RuntimeError, match="DC_API_RESPONSE_MODE must be one of"):
        make_app(DC_API_RESPONSE_MODE="fragment")


# ---------------------------------------------------------------- dc_api.jwt (the default)


def test_each_request_offers_a_key_of_its_own_never_the_direct_post_jwt_one(make_app, app, client):
    encrypting = make_app(RESPONSE_ENCRYPTION=True)
    web = encrypting.test_client()
    requests = []
    for email in ("one@example.test", "two@example.test"):
        opened = open_individual(encrypting, web, email)
        requests.append(read_request(web, wallet_link(web.get(opened.path).get_data(as_text=True))))
    offered = [dc_api_key(web, request.request_id) for request in requests]
    linked = [published_key(request) for request in requests]
    assert len({key["kid"] for key in offered + linked}) == 4
    # The same request's key is the same on every fetch and on every instance.
    assert dc_api_key(client, requests[0].request_id) == offered[0]


@pytest.mark.parametrize("enc", ["A128GCM", "A256GCM"])
def test_either_content_encryption_is_decrypted(client, opened, enc):
    individual, request = opened
    presentation = bound_to_origin(request)
    jwe = encrypt_to(
        dc_api_key(client, request.request_id), {"vp_token": {"credential": [presentation]}}, enc
    )
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={"protocol": "openid4vp-v1-unsigned", "data": {"response": jwe}},
        headers={"Origin": ORIGIN},
    )
    assert response.get_json()["status"] == "VERIFIED"
    assert status_of(client, individual) == "VERIFIED"


def test_the_older_body_carries_the_encrypted_response_too(client, opened):
    individual, request = opened
    jwe = encrypt_to(
        dc_api_key(client, request.request_id),
        {"vp_token": {"credential": [bound_to_origin(request)]}},
    )
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={"response": jwe},
        headers={"Origin": ORIGIN},
    )
    assert response.get_json()["status"] == "VERIFIED"
    assert status_of(client, individual) == "VERIFIED"


def _another_requests_key(app, client) -> dict:
    other = open_individual(app, client, "other@example.test")
    other_request = read_request(client, wallet_link(client.get(other.path).get_data(as_text=True)))
    return dc_api_key(client, other_request.request_id)


def _changed(jwe: str) -> str:
    """One character of the ciphertext changed: the authentication tag no longer matches."""
    header, key, iv, ciphertext, tag = jwe.split(".")
    flipped = ("A" if ciphertext[5] != "A" else "B").join((ciphertext[:5], ciphertext[6:]))
    return ".".join((header, key, iv, flipped, tag))


@pytest.mark.parametrize(
    "answer_of",
    [
        pytest.param(
            lambda app, client, request, payload: {"vp_token": payload["vp_token"]},
            id="plain-vp-token",
        ),
        pytest.param(
            lambda app, client, request, payload: {
                "response": encrypt_to(
                    {
                        **_another_requests_key(app, client),
                        "kid": dc_api_key(client, request.request_id)["kid"],
                    },
                    payload,
                )
            },
            id="sealed-to-another-key",
        ),
        pytest.param(
            lambda app, client, request, payload: {
                "response": _changed(encrypt_to(dc_api_key(client, request.request_id), payload))
            },
            id="changed-ciphertext",
        ),
        pytest.param(
            lambda app, client, request, payload: {"response": "not.a.jwe"},
            id="not-a-jwe",
        ),
        pytest.param(
            lambda app, client, request, payload: {
                "response": encrypt_to(dc_api_key(client, request.request_id), {"state": "x"})
            },
            id="no-vp-token-inside",
        ),
    ],
)
def test_an_answer_that_does_not_decrypt_is_refused_and_consumes_nothing(
    app, client, opened, answer_of
):
    individual, request = opened
    payload = {"vp_token": {"credential": [bound_to_origin(request)]}}
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={
            "protocol": "openid4vp-v1-unsigned",
            "data": answer_of(app, client, request, payload),
        },
        headers={"Origin": ORIGIN},
    )
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_RESPONSE")
    assert status_of(client, individual) == "REQUESTED"
    # Nothing was consumed: the wallet's real answer still verifies.
    assert dc_post(client, request.request_id, bound_to_origin(request)).get_json()["status"] == (
        "VERIFIED"
    )


def test_a_replayed_encrypted_answer_is_refused(client, opened):
    _, request = opened
    jwe = encrypt_to(
        dc_api_key(client, request.request_id),
        {"vp_token": {"credential": [bound_to_origin(request)]}},
    )
    body = {"protocol": "openid4vp-v1-unsigned", "data": {"response": jwe}}
    url = f"/oid4vp/dc-responses/{request.request_id}"
    assert client.post(url, json=body, headers={"Origin": ORIGIN}).status_code == 200
    replay = client.post(url, json=body, headers={"Origin": ORIGIN})
    assert (replay.status_code, replay.get_json()["code"]) == (400, "ALREADY_ANSWERED")


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
