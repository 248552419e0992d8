"""Hostile and careless input answers a documented 4xx, never a 500.

Each test names the defect it pins down: deep JSON, bodies that are not JSON, customer IDs
with slashes, non-ASCII secrets, unreadable PEM pins, framing of the person's pages.
"""

from __future__ import annotations

import pytest
from hardening_support import (
    assert_error,
    csrf_of,
    json_endpoints,
    make_world,
    send,
    sign_in,
    submit,
)
from wallets import read_request

from app.billing.webhook import sign

DEEP = 5000


@pytest.fixture
def world(app, client):
    return make_world(app, client)


def test_the_json_endpoints_are_the_documented_ones(client):
    endpoints = json_endpoints(client)
    assert ("POST", "/verifications/individuals") in endpoints
    assert ("POST", "/oid4vp/dc-responses/{request_id}") in endpoints
    assert len(endpoints) >= 19


@pytest.mark.parametrize("body", ["[" * DEEP + "]" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP])
def test_json_nested_thousands_deep_is_400_on_every_json_endpoint(client, world, body):
    refused = 0
    for method, path in json_endpoints(client):
        response = send(client, world, method, path, data=body, content_type="application/json")
        if response.status_code == 503:  # sign-in or billing not configured: refused first
            assert_error(response, 503, "NOT_CONFIGURED")
            continue
        assert_error(response, 400, "INVALID_REQUEST")
        refused += 1
    assert refused >= 15


def test_json_nested_a_hundred_deep_inside_an_object_is_400(client, world):
    body = '{"customer_id": ' + "[" * 100 + "]" * 100 + ', "verification_id": "x"}'
    response = send(
        client,
        world,
        "POST",
        "/verifications/individuals",
        data=body,
        content_type="application/json",
    )
    assert "deeper" in assert_error(response, 400, "INVALID_REQUEST")["error"]


@pytest.mark.parametrize(
    "raw",
    [b"{", b"\xff\xfe", b"NaN", b'{"a": Infinity}', b"\x00", b'"\\ud800"', b"[1,]", b"{}{}"],
)
def test_bad_json_of_any_shape_is_400_invalid_request(client, world, raw):
    response = send(
        client,
        world,
        "POST",
        "/verifications/individuals",
        data=raw,
        content_type="application/json",
    )
    assert_error(response, 400, "INVALID_REQUEST")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_body_not_declared_json_is_415_and_changes_nothing(client, world, content_type):
    body = f'{{"customer_id": "c-2", "verification_id": "{world.ids["verification_id"]}"}}'
    response = client.post(
        "/verifications/individuals", data=body, headers={"Content-Type": content_type}
    )
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    lookup = client.get(
        f"/verifications/{world.ids['verification_id']}/individuals/c-2",
        headers={"apikey": world.apikey},
    )
    assert_error(lookup, 400, "NOT_FOUND")


@pytest.mark.parametrize(
    "vp_token",
    [
        '{"a":' * DEEP + "1" + "}" * DEEP,
        "[" * DEEP + "]" * DEEP,
        '{"credential": ' + "[" * 500 + "]" * 500 + "}",
    ],
)
def test_a_deep_vp_token_with_the_right_state_is_400_and_consumes_nothing(client, world, vp_token):
    request = read_request(client, world.connection_url)
    response = client.post(
        f"/oid4vp/responses/{request.request_id}",
        data={"vp_token": vp_token, "state": request.state},
    )
    assert_error(response, 400, "INVALID_RESPONSE")
    # Nothing was consumed: a good answer is still possible, and still refused only for its
    # content (this one is not a credential), never as already answered.
    again = client.post(
        f"/oid4vp/responses/{request.request_id}", data={"vp_token": "{}", "state": request.state}
    )
    assert again.get_json()["code"] == "INVALID_RESPONSE"


def test_a_digital_credentials_answer_nested_thousands_deep_is_400(client, world):
    response = client.post(
        f"/oid4vp/dc-responses/{world.ids['request_id']}",
        data='{"vp_token": ' + "[" * DEEP + "]" * DEEP + "}",
        content_type="application/json",
        headers={"Origin": "https://verity.test"},
    )
    assert_error(response, 400, "INVALID_REQUEST")


@pytest.mark.parametrize(
    "customer_id",
    ["a/b", "/leading", "trailing/", "double//slash", "sp ace", "q?x=1#f", "%2F", "é/ü", "..", "."],
)
def test_every_customer_id_opening_accepts_is_reachable_by_the_lookup(client, world, customer_id):
    from urllib.parse import quote

    verification_id = world.ids["verification_id"]
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification_id},
    )
    assert opened.status_code in (200, 201), opened.get_json()
    response = client.get(
        f"/verifications/{verification_id}/individuals/{quote(customer_id, safe='')}",
        headers={"apikey": world.apikey},
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["customer_id"] == customer_id
    assert response.get_json()["id"] == opened.get_json()["id"]


def test_an_unknown_customer_id_with_a_slash_is_the_contracts_400(client, world):
    response = client.get(
        f"/verifications/{world.ids['verification_id']}/individuals/no%2Fsuch",
        headers={"apikey": world.apikey},
    )
    assert assert_error(response, 400, "NOT_FOUND")["error"] == "sql: no rows in result set"


def test_a_customer_id_with_nul_is_refused_with_400_on_every_engine(client, world):
    response = client.get(
        f"/verifications/{world.ids['verification_id']}/individuals/a%00b",
        headers={"apikey": world.apikey},
    )
    assert_error(response, 400, "INVALID_REQUEST")
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": "a\x00b", "verification_id": world.ids["verification_id"]},
    )
    assert "NUL" in assert_error(opened, 400, "INVALID_REQUEST")["error"]


def test_a_dashboard_form_with_nul_is_refused_not_a_500(app, client, world):

    sign_in(client, world.staff.token)
    response = submit(client, "/dashboard/organizations", {"name": "Ac\x00me"})
    assert response.status_code == 400


@pytest.mark.parametrize("where", ["form", "header"])
@pytest.mark.parametrize("token", ["é" * 64, "\u2603", "\x00", "ü" + "0" * 63])
def test_a_non_ascii_csrf_token_is_403_not_500(client, world, where, token):

    sign_in(client, world.staff.token)
    csrf_of(client, "/dashboard/")  # the browser holds a CSRF cookie
    if where == "form":
        response = client.post("/dashboard/logout", data={"csrf_token": token})
    else:
        header = token.encode("utf-8").decode("latin-1")  # what arrives over the wire
        response = client.post("/dashboard/logout", headers={"X-CSRF-Token": header})
    assert response.status_code == 403
    assert client.get("/dashboard/").status_code == 200  # still signed in


@pytest.mark.parametrize(
    "signature",
    [
        "t={now},v1=\xe9",  # a fresh timestamp and a non-ASCII signature
        "t={now},v1=" + "\xfc" * 64,
        "t=\xb2,v1=00",  # a Latin-1 digit that str.isdigit accepts and int refuses
        "t=\xb9\xb2\xb3,v1=ab",
        "\xe9",
    ],
)
def test_a_non_ascii_stripe_signature_is_400_not_500(make_app, signature):
    import time

    app = make_app(STRIPE_WEBHOOK_SECRET="whsec_test")
    response = app.test_client().post(
        "/billing/webhook",
        data=b'{"type": "ping"}',
        headers={"Stripe-Signature": signature.format(now=int(time.time()))},
    )
    assert_error(response, 400, "INVALID_SIGNATURE")


def test_a_valid_stripe_signature_is_still_accepted(make_app):
    import time

    app = make_app(STRIPE_WEBHOOK_SECRET="whsec_test")
    payload = b'{"type": "ping"}'
    response = app.test_client().post(
        "/billing/webhook",
        data=payload,
        headers={"Stripe-Signature": sign(payload, "whsec_test", int(time.time()))},
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "pem",
    [
        "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHBfpeg\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\né\n-----END CERTIFICATE-----",
    ],
)
def test_a_garbage_pem_pin_gets_a_plain_message(client, world, pem):
    response = client.put(
        f"/verifications/{world.ids['verification_id']}",
        json={"trusted_issuers": [pem]},
        headers=world.staff.headers(),
    )
    message = assert_error(response, 400, "INVALID_REQUEST")["error"]
    assert "not a readable PEM certificate" in message
    for internal in ("ASN", "asn1", "ParseError", "InvalidData", "Error {", "ascii", "codec"):
        assert internal not in message


def test_the_persons_pages_refuse_framing_twice(client, world):
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": "frame", "verification_id": world.ids["verification_id"]},
    ).get_json()
    response = client.get(f"/i/{opened['id']}")
    assert response.status_code == 200
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"


def test_text_in_a_multi_row_insert_is_checked_and_good_rows_still_insert(app):
    from app.extensions import db
    from app.organizations.models import Plan
    from app.vouchers.operations import mint_vouchers

    with app.app_context():
        codes = mint_vouchers(Plan.PRO, 30, 3)  # one INSERT of three rows
        db.session.commit()
        db.session.remove()
    assert len(set(codes)) == 3
