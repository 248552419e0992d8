"""Every body an endpoint reads goes through the one JSON reader (``app.json_input``).

The rule (64 levels at most, no NaN, no NUL, no lone surrogate) only holds if no endpoint
parses a body its own way: the credential endpoint once did, and 100,000 nested ``[`` answered
500 (RecursionError) before the access token was even looked at. This walks every operation
``/openapi.json`` documents with a request body, and the wallet endpoints beside them, and
posts the bodies a hostile client would.
"""

from __future__ import annotations

import re
import uuid

import pytest
from hardening_support import make_world
from issuance.issuance_support import Wallet, access_token, issue, make_org

DEEP = b"[" * 100_000
HOSTILE = {
    "deep": (DEEP, "nested deeper than 64"),
    "deep-object": (b'{"a":' * 100_000, "nested deeper than 64"),
    "65-levels": (b'{"x":' + b"[" * 64 + b"]" * 64 + b"}", "nested deeper than 64"),
    "malformed": (b'{"name": ', "valid JSON"),
    "nan": (b'{"name": NaN}', "not a JSON number"),
    "nul": (b'{"name": "a\\u0000b"}', "NUL"),
    "lone-surrogate": (b'{"name": "\\ud800"}', "surrogate"),
}
PATH_PARAM = re.compile(r"\{([a-z_]+)\}")


def documented_bodies(client) -> list[tuple[str, str, list]]:
    document = client.get("/openapi.json").get_json()
    return [
        (method.upper(), path, operation.get("security", []))
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    ]


@pytest.fixture
def callers(app, client):
    """Credentials for every kind of caller, and a real record for every path parameter, so a
    request reaches the body instead of stopping at a missing record or header."""
    world = make_world(app, client)
    return {
        "headers": {"session": world.staff.headers(), "apikey": {"apikey": world.apikey}},
        "params": world.ids,
    }


def test_the_walk_covers_the_documented_bodies(client) -> None:
    """A guard on the walk itself: an empty or tiny document would make the test below vacuous."""
    operations = documented_bodies(client)
    assert len(operations) >= 20
    assert ("POST", "/verifications/individuals", []) in operations


@pytest.fixture
def signin_client(make_app):
    """A deployment with sign-in configured: without it ``POST /auth`` is 503 before any body
    is read. Nothing is fetched from the provider until a login really starts."""
    return make_app(
        OIDC_ISSUER="https://idp.example.test",
        OIDC_CLIENT_ID="verity",
        OIDC_CLIENT_SECRET="not-a-real-secret",
    ).test_client()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_documented_body_refuses_hostile_json_with_a_400(
    signin_client, callers, case
) -> None:
    client = signin_client
    body, reason = HOSTILE[case]
    answers = {}
    for method, path, security in documented_bodies(client):
        names = PATH_PARAM.findall(path)
        unknown = set(names) - set(callers["params"])
        assert not unknown, f"{method} {path}: give the test a record for {unknown}"
        url = PATH_PARAM.sub(lambda m: callers["params"][m.group(1)], path)
        headers = {}
        for requirement in security:
            for scheme in requirement:
                headers.update(callers["headers"][scheme])
        response = client.open(
            url, method=method, data=body, content_type="application/json", headers=headers
        )
        answers[f"{method} {path}"] = (response.status_code, response.get_json(silent=True))
    wrong = {
        operation: answer
        for operation, answer in answers.items()
        if answer[0] != 400
        or not isinstance(answer[1], dict)
        or answer[1].get("code") != "INVALID_REQUEST"
        or reason not in answer[1].get("error", "")
    }
    assert not wrong, wrong


# -- the wallet endpoints: their own error shape, the same reader ------------------------------


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_the_credential_endpoint_refuses_hostile_json(app, client, case) -> None:
    """§8.3.1 order: the access token first, then the request. Neither answer is a 500."""
    body, reason = HOSTILE[case]
    org, wallet = make_org(app), Wallet()
    token = access_token(client, org, wallet, issue(client, org))
    unauthenticated = client.post(
        org.path("/credential"), data=body, content_type="application/json"
    )
    assert unauthenticated.status_code == 401
    assert unauthenticated.get_json()["error"] == "invalid_token"
    response = client.post(
        org.path("/credential"),
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_credential_request"
    assert reason in response.get_json()["error_description"]


@pytest.mark.parametrize("suffix", ["/token", "/nonce"])
def test_the_other_issuer_endpoints_do_not_read_json(app, client, suffix) -> None:
    """The token endpoint reads a form (a JSON body is no form: invalid_request), the nonce
    endpoint no body at all."""
    org = make_org(app)
    response = client.post(org.path(suffix), data=DEEP, content_type="application/json")
    assert response.status_code == (400 if suffix == "/token" else 200)
    assert response.is_json


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/oid4vp/responses/{id}", {"vp_token": DEEP.decode(), "state": "s"}),
        ("/oid4vp/requests/{id}", {"wallet_metadata": DEEP.decode()}),
    ],
)
def test_form_encoded_json_pieces_never_answer_500(client, path, form) -> None:
    response = client.post(path.format(id=uuid.uuid4()), data=form)
    assert response.status_code == 400
    assert response.get_json()["code"]


def test_the_browser_api_response_refuses_deep_json(app, client) -> None:
    response = client.post(
        f"/oid4vp/dc-responses/{uuid.uuid4()}",
        data=DEEP,
        content_type="application/json",
        headers={"Origin": app.config["PUBLIC_URL"]},
    )
    assert response.status_code == 400
    assert "nested deeper than 64" in response.get_json()["error"]
