"""Who may open an individual, and who did: a credential that is sent must be right,
``opened_by`` keeps the first opener, and ``anonymous_open`` (allowed, signed, refused)."""

from __future__ import annotations

import base64
import hashlib
import hmac

from factories import make_apikey, make_staff, make_verification
from support.race import all_at_once

from app.extensions import db
from app.integrations.models import Integration

OPEN = "/verifications/individuals"


def body(verification_id: str, customer_id: str = "crm-42", **extra) -> dict:
    return {"customer_id": customer_id, "verification_id": verification_id, **extra}


def sig(secret: str, customer_id: str) -> str:
    mac = hmac.new(secret.encode(), customer_id.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def lookup(client, verification_id: str, customer_id: str, key: str):
    return client.get(
        f"/verifications/{verification_id}/individuals/{customer_id}", headers={"apikey": key}
    )


def test_a_wrong_apikey_in_the_header_or_query_is_refused_not_read_as_anonymous(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    for sent in (
        {"headers": {"apikey": "vk_not-a-key"}},
        {"headers": {"apikey": ""}},
        {"query_string": {"apikey": "vk_not-a-key"}},
    ):
        refused = client.post(OPEN, json=body(verification), **sent)
        assert refused.status_code == 401, sent
        assert refused.get_json()["code"] == "UNAUTHORIZED"
    # Nothing was opened: the first open without any credential creates the individual.
    assert client.post(OPEN, json=body(verification)).status_code == 201


def test_a_wrong_apikey_is_refused_with_an_idempotency_key_too(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    refused = client.post(
        OPEN,
        json=body(verification),
        headers={"apikey": "vk_not-a-key", "Idempotency-Key": "open-crm-42"},
    )
    assert refused.status_code == 401


def test_a_deleted_apikey_is_refused(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)
    with app.app_context():
        integration_id = db.session.query(Integration).one().id
    deleted = client.delete(f"/integrations/{integration_id}", headers=staff.headers())
    assert deleted.status_code == 204
    refused = client.post(OPEN, json=body(verification), headers={"apikey": key})
    assert refused.status_code == 401


def test_a_session_token_is_refused_on_the_open(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    refused = client.post(OPEN, json=body(verification), headers=staff.headers())
    assert refused.status_code == 401
    assert "apikey" in refused.get_json()["error"]


def test_an_open_with_the_apikey_says_backend_and_which_integration(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)
    with app.app_context():
        integration_id = str(db.session.query(Integration).one().id)
    opened = client.post(OPEN, json=body(verification), headers={"apikey": key})
    assert opened.status_code == 201
    backend = {"kind": "backend", "integration_id": integration_id}
    assert opened.get_json()["opened_by"] == backend
    again = client.post(OPEN, json=body(verification), headers={"apikey": key})
    assert again.status_code == 200 and again.get_json()["opened_by"] == backend
    assert lookup(client, verification, "crm-42", key).get_json()["opened_by"] == backend
    listed = client.get(f"/verifications/{verification}/individuals", headers=staff.headers())
    assert listed.get_json()["results"][0]["opened_by"] == backend


def test_a_stranger_s_first_open_stays_anonymous_when_the_backend_opens_later(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)
    stranger = client.post(OPEN, json=body(verification))
    assert stranger.status_code == 201
    assert stranger.get_json()["opened_by"] == {"kind": "anonymous"}
    backend = client.post(OPEN, json=body(verification), headers={"apikey": key})
    assert backend.status_code == 200  # the existing record, not a new one
    assert backend.get_json()["id"] == stranger.get_json()["id"]
    assert backend.get_json()["opened_by"] == {"kind": "anonymous"}
    assert lookup(client, verification, "crm-42", key).get_json()["opened_by"] == {
        "kind": "anonymous"
    }


def test_another_organization_s_apikey_reads_the_verification_as_missing(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    other = make_staff(app, "bob@example.test", org_name="Other")
    key = make_apikey(app, other.organization_id)
    refused = client.post(OPEN, json=body(verification), headers={"apikey": key})
    assert refused.status_code == 400
    assert refused.get_json() == {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


def test_concurrent_opens_by_backend_and_stranger_agree_on_one_first_opener(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)

    def open_once(n: int) -> tuple[str, str]:
        headers = {"apikey": key} if n % 2 else {}
        answer = app.test_client().post(OPEN, json=body(verification, "racer"), headers=headers)
        assert answer.status_code in (200, 201), answer.get_json()
        return answer.get_json()["id"], answer.get_json()["opened_by"]["kind"]

    results = all_at_once(12, open_once)
    assert len(set(results)) == 1  # one individual, one opener, whoever won
    assert (
        lookup(client, verification, "racer", key).get_json()["opened_by"]["kind"]
        == (results[0][1])
    )


def test_refused_takes_only_the_backend_s_open(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff, anonymous_open="refused")
    assert verification["anonymous_open"] == "refused"
    assert "link_secret" not in verification
    key = make_apikey(app, staff.organization_id)
    refused = client.post(OPEN, json=body(verification["id"]))
    assert refused.status_code == 401
    assert refused.get_json()["code"] == "APIKEY_REQUIRED"
    opened = client.post(OPEN, json=body(verification["id"]), headers={"apikey": key})
    assert opened.status_code == 201
    # A retry without the key is refused too, even of an individual that exists.
    assert client.post(OPEN, json=body(verification["id"])).status_code == 401


def test_signed_needs_the_customer_sig_made_with_the_link_secret(app, client):
    staff = make_staff(app)
    created = make_verification(client, staff, anonymous_open="signed")
    verification, secret = created["id"], created["link_secret"]
    assert created["anonymous_open"] == "signed" and secret.startswith("vls_")
    shown = client.get(f"/verifications/{verification}", headers=staff.headers()).get_json()
    assert shown["anonymous_open"] == "signed" and "link_secret" not in shown

    for customer_sig in (None, "", sig("vls_other", "crm-42"), sig(secret, "crm-43"), "é"):
        extra = {} if customer_sig is None else {"customer_sig": customer_sig}
        refused = client.post(OPEN, json=body(verification, **extra))
        assert refused.status_code == 401, customer_sig
        assert refused.get_json()["code"] == "CUSTOMER_SIG_INVALID"
    opened = client.post(OPEN, json=body(verification, customer_sig=sig(secret, "crm-42")))
    assert opened.status_code == 201
    assert opened.get_json()["opened_by"] == {"kind": "anonymous"}
    # The backend needs no signature.
    key = make_apikey(app, staff.organization_id)
    assert (
        client.post(OPEN, json=body(verification, "crm-7"), headers={"apikey": key}).status_code
        == 201
    )


def test_a_rotated_link_secret_replaces_the_old_one(app, client):
    staff = make_staff(app)
    created = make_verification(client, staff, anonymous_open="signed")
    old = created["link_secret"]
    rotated = client.post(f"/verifications/{created['id']}/link-secret", headers=staff.headers())
    assert rotated.status_code == 200
    new = rotated.get_json()["link_secret"]
    assert new != old
    stale = client.post(OPEN, json=body(created["id"], customer_sig=sig(old, "crm-42")))
    assert stale.status_code == 401 and stale.get_json()["code"] == "CUSTOMER_SIG_INVALID"
    fresh = client.post(OPEN, json=body(created["id"], customer_sig=sig(new, "crm-42")))
    assert fresh.status_code == 201


def test_a_link_secret_exists_only_while_signed(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    assert verification["anonymous_open"] == "allowed"
    path = f"/verifications/{verification['id']}"
    refused = client.post(f"{path}/link-secret", headers=staff.headers())
    assert refused.status_code == 400 and refused.get_json()["code"] == "LINK_SECRET_NOT_USED"
    turned_on = client.put(path, json={"anonymous_open": "signed"}, headers=staff.headers())
    first = turned_on.get_json()["link_secret"]
    kept = client.put(path, json={"anonymous_open": "signed"}, headers=staff.headers())
    assert "link_secret" not in kept.get_json()  # shown once: staying signed shows nothing
    client.put(path, json={"anonymous_open": "allowed"}, headers=staff.headers())
    again = client.put(path, json={"anonymous_open": "signed"}, headers=staff.headers())
    assert again.get_json()["link_secret"] != first  # an old secret never comes back
    stale = client.post(OPEN, json=body(verification["id"], customer_sig=sig(first, "crm-42")))
    assert stale.status_code == 401
    unknown = client.put(path, json={"anonymous_open": "sometimes"}, headers=staff.headers())
    assert unknown.status_code == 400


def test_the_link_secret_is_stored_sealed(app, client):
    from app.verifications.models import Verification

    staff = make_staff(app)
    created = make_verification(client, staff, anonymous_open="signed")
    with app.app_context():
        stored = db.session.get(Verification, __import__("uuid").UUID(created["id"]))
        assert stored.sealed_link_secret
        assert created["link_secret"].encode() not in stored.sealed_link_secret


def test_beside_a_valid_apikey_a_session_token_is_ignored_as_on_apikey_endpoints(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)
    opened = client.post(OPEN, json=body(verification), headers={**staff.headers(), "apikey": key})
    assert opened.status_code == 201
    assert opened.get_json()["opened_by"]["kind"] == "backend"
