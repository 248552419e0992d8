"""The staff API for issuing: ``/credentials`` with a session token and the acting organization.

Tier gating (402 on Free, 403 for a Premium+ schema), tenant isolation (another organization's
schema, recipient or credential reads as missing: 400 ``sql: no rows in result set``), claims
checked against the schema's attribute types, pagination and filters, idempotent revocation,
resending an offer, and the secrets of an offer stored only as hashes.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from factories import PID_SCHEMA_ID, make_apikey
from issuance.issuance_support import (
    CLAIMS,
    Wallet,
    code_of,
    issue,
    local,
    make_org,
    offer_of,
    offer_uri,
    receive,
)
from sqlalchemy import select

from app.extensions import db
from app.issuance.models import AccessToken, Credential
from app.organizations.models import Plan

NOT_FOUND = {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


def error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    assert body["code"] == code, body
    return body


def test_issuing_returns_the_credential_with_its_offer(app, client) -> None:
    org = make_org(app)
    body = issue(client, org)
    assert body["status"] == "OFFERED"
    assert body["name"] == "Diploma of Ada" and body["description"] == "Awarded 2024"
    assert body["schema_id"] == org.schema_id and body["recipient_id"] == org.recipient_id
    assert body["claims"] == CLAIMS
    assert body["issuer"] == org.issuer
    assert body["offer_url"].startswith("openid-credential-offer://?credential_offer_uri=")
    assert offer_uri(body).startswith(f"{org.issuer}/offers/")
    assert body["offer_page"].startswith("https://verity.test/o/")
    assert body["offer_expires_at"] and body["created_at"]
    assert body["issued_at"] is None and body["revoked_at"] is None
    assert "tx_code" not in body and body["tx_code_required"] is False


def test_a_tx_code_is_shown_once(app, client) -> None:
    org = make_org(app)
    body = issue(client, org, tx_code=True)
    assert len(body["tx_code"]) == 6 and body["tx_code"].isdigit()
    again = client.get(f"/credentials/{body['id']}", headers=org.headers).get_json()
    assert "tx_code" not in again and again["tx_code_required"] is True


def test_the_offer_secrets_are_stored_hashed(app, client) -> None:
    org = make_org(app)
    body = issue(client, org, tx_code=True)
    code = code_of(offer_of(client, body))
    token = Wallet().token(client, org, code, body["tx_code"]).get_json()["access_token"]
    with app.app_context():
        row = db.session.get(Credential, uuid.UUID(body["id"]))
        stored = " ".join(
            str(value) for value in (row.pre_authorized_code_hash, row.tx_code_hash, row.claims)
        )
        tokens = db.session.scalars(select(AccessToken.token_hash)).all()
        db.session.remove()
    assert code not in stored and body["tx_code"] not in stored
    assert token not in tokens and len(tokens) == 1


def test_issuing_on_the_free_plan_is_402(app, client) -> None:
    org = make_org(app, plan=Plan.FREE)
    response = client.post("/credentials", json=org.body(), headers=org.headers)
    body = error(response, 402, "UPGRADE_REQUIRED")
    assert body["tier"] == "FREE"


def test_a_premium_plus_schema_needs_a_premium_plus_organization(app, client) -> None:
    org = make_org(app)
    schema = client.post(
        "/schemas",
        json={
            "name": "Licence",
            "vct": "urn:example:licence",
            "premium_plus": True,
            "attributes": [{"name": "number"}],
        },
        headers=org.headers,
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=org.headers)
    body = org.body(schema_id=schema["id"], claims=[{"name": "number", "value": "A1"}])
    error(client.post("/credentials", json=body, headers=org.headers), 403, "PREMIUM_PLUS_REQUIRED")


def test_a_premium_plus_organization_issues_a_premium_plus_schema(app, client) -> None:
    org = make_org(app, plan=Plan.PREMIUM_PLUS)
    schema = client.post(
        "/schemas",
        json={
            "name": "L",
            "vct": "urn:example:l",
            "premium_plus": True,
            "attributes": [{"name": "n"}],
        },
        headers=org.headers,
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=org.headers)
    issue(client, org, schema_id=schema["id"], claims=[{"name": "n", "value": "1"}])


def test_a_draft_schema_cannot_be_issued(app, client) -> None:
    org = make_org(app)
    draft = client.post(
        "/schemas",
        json={"name": "Draft", "vct": "urn:example:draft", "attributes": [{"name": "n"}]},
        headers=org.headers,
    ).get_json()
    body = org.body(schema_id=draft["id"], claims=[{"name": "n", "value": "x"}])
    error(client.post("/credentials", json=body, headers=org.headers), 400, "SCHEMA_NOT_PUBLISHED")


def test_a_public_schema_can_be_issued(app, client) -> None:
    org = make_org(app)
    claims = [{"name": "given_name", "value": "Ada"}, {"name": "birthdate", "value": "1990-01-01"}]
    body = issue(client, org, schema_id=PID_SCHEMA_ID, claims=claims)
    assert body["schema_id"] == PID_SCHEMA_ID


def test_another_organizations_schema_or_recipient_reads_as_missing(app, client) -> None:
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Globex")
    for field, value in (("schema_id", other.schema_id), ("recipient_id", other.recipient_id)):
        response = client.post("/credentials", json=org.body(**{field: value}), headers=org.headers)
        assert response.status_code == 400
        assert response.get_json() == NOT_FOUND


@pytest.mark.parametrize(
    ("claims", "names"),
    [
        ([{"name": "grade", "value": "seventeen"}], "grade"),
        ([{"name": "grade", "value": True}], "grade"),
        ([{"name": "honours", "value": "yes"}], "honours"),
        ([{"name": "awarded", "value": "last June"}], "awarded"),
        ([{"name": "degree", "value": 3}], "degree"),
        ([{"name": "nickname", "value": "Ada"}], "nickname"),
        ([{"name": "degree", "value": "A"}, {"name": "degree", "value": "B"}], "degree"),
        ([], "at least one claim"),
    ],
)
def test_claims_are_checked_against_the_schema(app, client, claims, names) -> None:
    org = make_org(app)
    response = client.post("/credentials", json=org.body(claims=claims), headers=org.headers)
    body = error(response, 400, "INVALID_REQUEST")
    assert names in body["error"]
    with app.app_context():
        assert db.session.scalar(select(db.func.count()).select_from(Credential)) == 0
        db.session.remove()


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x"},
        {"name": "x", "schema_id": "nope", "recipient_id": "nope", "claims": []},
        {"unknown": 1},
    ],
)
def test_malformed_bodies_are_400(app, client, body) -> None:
    org = make_org(app)
    error(client.post("/credentials", json=body, headers=org.headers), 400, "INVALID_REQUEST")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/credentials"),
        ("POST", "/credentials"),
        ("GET", f"/credentials/{uuid.uuid4()}"),
        ("POST", f"/credentials/{uuid.uuid4()}/revoke"),
        ("POST", f"/credentials/{uuid.uuid4()}/resend"),
    ],
)
def test_an_integration_key_gets_401(app, client, method, path) -> None:
    org = make_org(app)
    key = make_apikey(app, org.id)
    response = client.open(path, method=method, json={}, headers={"apikey": key})
    error(response, 401, "UNAUTHORIZED")


def test_unknown_and_foreign_credentials_are_not_found(app, client) -> None:
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Globex")
    theirs = issue(client, other)["id"]
    for credential_id in (theirs, str(uuid.uuid4()), "not-a-uuid"):
        for method, suffix in (("GET", ""), ("POST", "/revoke"), ("POST", "/resend")):
            response = client.open(
                f"/credentials/{credential_id}{suffix}", method=method, headers=org.headers
            )
            assert response.status_code == 400, (method, suffix)
            assert response.get_json() == NOT_FOUND
    assert client.get("/credentials", headers=org.headers).get_json()["total"] == 0
    # Theirs is untouched.
    assert client.get(f"/credentials/{theirs}", headers=other.headers).get_json()["status"] == (
        "OFFERED"
    )


def test_acting_for_an_organization_one_is_not_a_member_of_is_403(app, client) -> None:
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Globex")
    issue(client, other)
    headers = {**org.headers, "current-identity": other.id}
    error(client.get("/credentials", headers=headers), 403, "NOT_A_MEMBER")


def test_listing_is_paginated_and_filtered(app, client) -> None:
    org = make_org(app)
    made = [issue(client, org, name=f"Diploma {n}") for n in range(5)]
    page = client.get("/credentials?limit=2&page=2", headers=org.headers).get_json()
    assert page["total"] == 5
    assert [c["name"] for c in page["results"]] == ["Diploma 2", "Diploma 1"]
    client.post(f"/credentials/{made[0]['id']}/revoke", headers=org.headers)
    receive(client, org, Wallet(), made[1])
    by_status = {
        status: client.get(f"/credentials?status={status}", headers=org.headers).get_json()
        for status in ("OFFERED", "ISSUED", "REVOKED", "EXPIRED")
    }
    assert {s: b["total"] for s, b in by_status.items()} == {
        "OFFERED": 3,
        "ISSUED": 1,
        "REVOKED": 1,
        "EXPIRED": 0,
    }
    assert by_status["ISSUED"]["results"][0]["id"] == made[1]["id"]
    none = client.get(f"/credentials?recipient_id={uuid.uuid4()}", headers=org.headers)
    assert none.get_json()["total"] == 0
    mine = client.get(f"/credentials?recipient_id={org.recipient_id}", headers=org.headers)
    assert mine.get_json()["total"] == 5
    error(client.get("/credentials?status=LOST", headers=org.headers), 400, "INVALID_REQUEST")
    error(client.get("/credentials?recipient_id=x", headers=org.headers), 400, "INVALID_REQUEST")
    error(client.get("/credentials?limit=101", headers=org.headers), 400, "INVALID_REQUEST")


def test_revoking_is_idempotent_and_sets_the_time_once(app, client) -> None:
    org = make_org(app)
    credential = issue(client, org)
    receive(client, org, Wallet(), credential)
    first = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert first.status_code == 200
    assert first.get_json()["status"] == "REVOKED" and first.get_json()["revoked_at"]
    second = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert second.status_code == 200
    assert second.get_json() == first.get_json()


def test_revoking_an_offer_withdraws_it(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    code = code_of(offer_of(client, credential))
    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.get_json()["status"] == "REVOKED"
    assert revoked.get_json()["offer_url"] is None
    assert client.get(local(offer_uri(credential))).status_code == 404
    assert wallet.token(client, org, code).get_json()["error"] == "invalid_grant"


def test_revoking_after_the_token_but_before_the_credential_denies_it(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    code = code_of(offer_of(client, credential))
    token = wallet.token(client, org, code).get_json()["access_token"]
    client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    proof = wallet.proof(org.issuer, wallet.nonce(client, org))
    response = wallet.request(
        client,
        org,
        token,
        {"credential_configuration_id": org.schema_id, "proofs": {"jwt": [proof]}},
    )
    assert response.status_code == 401
    assert response.get_json()["error"] == "invalid_token"


def test_resending_replaces_the_offer(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org, tx_code=True)
    old_code = code_of(offer_of(client, credential))
    resent = client.post(f"/credentials/{credential['id']}/resend", headers=org.headers)
    assert resent.status_code == 200
    fresh = resent.get_json()
    assert fresh["offer_url"] != credential["offer_url"]
    assert fresh["tx_code"].isdigit() and len(fresh["tx_code"]) == 6
    assert client.get(local(offer_uri(credential))).status_code == 404
    old = wallet.token(client, org, old_code, credential["tx_code"])
    assert old.get_json()["error"] == "invalid_grant"
    receive(client, org, wallet, fresh)
    again = client.post(f"/credentials/{credential['id']}/resend", headers=org.headers)
    error(again, 409, "NOT_OFFERED")


def test_receiving_marks_the_credential_issued(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    receive(client, org, wallet, credential)
    body = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert body["status"] == "ISSUED" and body["issued_at"]
    assert body["offer_url"] is None


def test_concurrent_issuances_get_distinct_status_entries(app) -> None:
    org = make_org(app)
    statuses: list[int] = []

    def post() -> None:
        response = app.test_client().post("/credentials", json=org.body(), headers=org.headers)
        statuses.append(response.status_code)

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [201] * 8
    with app.app_context():
        entries = db.session.execute(select(Credential.status_list, Credential.status_index)).all()
        db.session.remove()
    assert len(set(entries)) == 8
    assert all(0 <= index < 131_072 for _, index in entries)


def test_a_recipient_with_credentials_cannot_be_deleted(app, client) -> None:
    """Deleting their credentials would free status list bits a revoked credential holds."""
    org = make_org(app)
    credential = issue(client, org)
    key = make_apikey(app, org.id)
    response = client.delete(f"/recipients/{org.recipient_id}", headers={"apikey": key})
    error(response, 409, "CONFLICT")
    assert client.get(f"/credentials/{credential['id']}", headers=org.headers).status_code == 200


def test_the_recipient_is_emailed_the_offer_page_never_the_tx_code(make_app) -> None:
    from urllib.parse import quote

    from support.smtp import PASSWORD, USER, smtp_server

    with smtp_server() as inbox:
        mailing = make_app(
            MAIL_URL=f"smtp://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{inbox.port}"
        )
        client = mailing.test_client()
        org = make_org(mailing)
        refused = client.post(
            "/credentials",
            json=org.body(claims=[{"name": "grade", "value": "x"}]),
            headers=org.headers,
        )
        assert refused.status_code == 400
        assert inbox.messages == []
        credential = issue(client, org, tx_code=True)
        resent = client.post(f"/credentials/{credential['id']}/resend", headers=org.headers)
        assert resent.status_code == 200
    first, second = inbox.messages
    assert first.recipients == ["ada@example.test"]
    assert credential["offer_page"] in first.message.get_content()
    assert credential["tx_code"] not in first.message.get_content()
    assert resent.get_json()["offer_page"] in second.message.get_content()


@pytest.mark.parametrize("name", ["status", "iss", "cnf", "vct"])
def test_a_claim_sd_jwt_vc_keeps_for_itself_is_refused_when_issuing(app, client, name) -> None:
    """Refused up front (400), never at the wallet's credential request."""
    org = make_org(app)
    schema = client.post(
        "/schemas",
        json={"name": "Reserved", "vct": "urn:example:reserved", "attributes": [{"name": name}]},
        headers=org.headers,
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=org.headers)
    body = org.body(schema_id=schema["id"], claims=[{"name": name, "value": "x"}])
    found = error(
        client.post("/credentials", json=body, headers=org.headers), 400, "INVALID_REQUEST"
    )
    assert "reserved" in found["error"]
    assert client.get("/credentials", headers=org.headers).get_json()["total"] == 0
