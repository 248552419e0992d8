"""Transaction data (OpenID4VP 1.0 §5.1, §B.3.3): a backend attaches a payment or a signing
authorization to an individual or a policy request, the request carries each entry as
base64url JSON, and only an answer whose key binding JWT (made by the npm @sd-jwt library)
hashes every entry as sent is VERIFIED."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from factories import make_apikey, make_staff, make_verification
from wallets import (
    Issuer,
    dc_api_openid4vp_request,
    node_presentation,
    post_response,
    read_request,
)

from app.extensions import db
from app.oid4vp import transaction_data as td
from app.policies.operations import connect_policy
from app.web.links import links

OPEN = "/verifications/individuals"
MDL_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"  # mso_mdoc
PAYMENT = {
    "type": "urn:eudi:sca:payment:1",
    "payload": {
        "transaction_id": "8D8AC610-566D-4EF0-9C22-186B2A5ED793",
        "payee": {"name": "Merchant", "id": "DE89370400440532013000"},
        "currency": "EUR",
        "amount": 23.58,
    },
}
QES = {
    "type": "qes_authorization",
    "signatureQualifier": "eu_eidas_qes",
    "documentDigests": [
        {
            "label": "Example Contract",
            "hash": "7Qzm5EjuzXKSHFlc0OH9PP9qUaH-VBl2aGNbwYj1oOA",
            "hashAlgorithmOID": "2.16.840.1.101.3.4.2.1",
        }
    ],
}


def sha256_b64(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


@pytest.fixture
def org(app, client):
    staff = make_staff(app)
    enabled = client.patch(
        f"/organizations/{staff.organization_id}",
        json={"transaction_data_types": ["urn:eudi:sca:payment:1", "qes_authorization"]},
        headers=staff.headers(),
    )
    assert enabled.status_code == 200, enabled.get_json()
    assert enabled.get_json()["transaction_data_types"] == [
        "urn:eudi:sca:payment:1",
        "qes_authorization",
    ]
    key = make_apikey(app, staff.organization_id)
    return staff, key, make_verification(client, staff)["id"]


def open_with(client, key, verification, entries, customer="pay-1"):
    return client.post(
        OPEN,
        json={
            "customer_id": customer,
            "verification_id": verification,
            "transaction_data": entries,
        },
        headers={"apikey": key},
    )


def wallet_request(client, individual_id):
    link = client.get(f"/verifications/{individual_id}/connect").get_json()["connection_url"]
    return read_request(client, link)


def lookup(client, key, verification, customer="pay-1"):
    return client.get(
        f"/verifications/{verification}/individuals/{customer}", headers={"apikey": key}
    ).get_json()


def test_a_confirmed_payment_is_verified_and_the_lookup_returns_it(client, org):
    _, key, verification = org
    opened = open_with(client, key, verification, [PAYMENT, QES])
    assert opened.status_code == 201, opened.get_json()
    request = wallet_request(client, opened.get_json()["id"])
    sent = request.claims["transaction_data"]
    assert len(sent) == 2
    # §5.1: each entry a base64url JSON object; credential_ids names the DCQL query.
    first = json.loads(base64.urlsafe_b64decode(sent[0] + "=" * (-len(sent[0]) % 4)))
    (query,) = request.claims["dcql_query"]["credentials"]
    assert first["credential_ids"] == [query["id"]]
    # §B.3.3: transaction data needs cryptographic holder binding (DCQL's default: true).
    assert query.get("require_cryptographic_holder_binding", True) is True
    assert first["transaction_data_hashes_alg"] == ["sha-256"]
    assert first["payload"] == PAYMENT["payload"]
    # §B.3.3: the hash of each string as received, no decoding first.
    hashes = [sha256_b64(entry) for entry in sent]
    presentation = node_presentation(
        request,
        Issuer(),
        kb_extra={"transaction_data_hashes": hashes, "transaction_data_hashes_alg": "sha-256"},
    )
    answer = post_response(client, request, presentation)
    assert answer.status_code == 200, answer.get_json()
    found = lookup(client, key, verification)
    assert found["status"] == "VERIFIED", found["validation_error"]
    assert [entry["type"] for entry in found["transaction_data"]] == [
        "urn:eudi:sca:payment:1",
        "qes_authorization",
    ]
    assert found["transaction_data"][0]["payload"]["amount"] == 23.58


@pytest.mark.parametrize(
    ("kb_extra", "why"),
    [
        ({}, "its key binding carries no transaction_data_hashes"),
        (
            {"transaction_data_hashes": ["wrong"], "transaction_data_hashes_alg": "sha-256"},
            "no transaction_data_hashes entry is its hash",
        ),
        ("decoded", "no transaction_data_hashes entry is its hash"),
        ("no-alg", "its key binding names no transaction_data_hashes_alg"),
    ],
)
def test_a_payment_the_key_binding_does_not_confirm_fails(client, org, kb_extra, why):
    _, key, verification = org
    opened = open_with(client, key, verification, [PAYMENT])
    request = wallet_request(client, opened.get_json()["id"])
    (sent,) = request.claims["transaction_data"]
    if kb_extra == "decoded":  # the hash of the decoded JSON, not of the string as sent
        decoded = base64.urlsafe_b64decode(sent + "=" * (-len(sent) % 4)).decode()
        kb_extra = {"transaction_data_hashes": [sha256_b64(decoded)]}
        kb_extra["transaction_data_hashes_alg"] = "sha-256"
    elif kb_extra == "no-alg":
        kb_extra = {"transaction_data_hashes": [sha256_b64(sent)]}
    presentation = node_presentation(request, Issuer(), kb_extra=kb_extra)
    post_response(client, request, presentation)
    status = client.get(f"/verifications/{opened.get_json()['id']}/verify").get_json()
    assert status["status"] == "FAILED"
    assert status["validation_error"] == (
        f"Transaction data 1 (urn:eudi:sca:payment:1) was not confirmed by the wallet: {why}"
    )
    assert lookup(client, key, verification)["transaction_data"] is None


def test_the_digital_credentials_api_request_carries_the_same_strings(client, org):
    _, key, verification = org
    opened = open_with(client, key, verification, [PAYMENT, QES])
    request = wallet_request(client, opened.get_json()["id"])
    _, data = dc_api_openid4vp_request(client, request.request_id)
    assert data["transaction_data"] == request.claims["transaction_data"]


def test_an_individual_without_transaction_data_sends_none(client, org):
    _, key, verification = org
    opened = client.post(
        OPEN,
        json={"customer_id": "plain", "verification_id": verification},
        headers={"apikey": key},
    )
    request = wallet_request(client, opened.get_json()["id"])
    assert "transaction_data" not in request.claims
    assert lookup(client, key, verification, "plain")["transaction_data"] is None


def test_a_repeated_open_must_carry_the_same_transaction_data(client, org):
    _, key, verification = org
    assert open_with(client, key, verification, [PAYMENT]).status_code == 201
    assert open_with(client, key, verification, [PAYMENT]).status_code == 200
    other = {**PAYMENT, "payload": {**PAYMENT["payload"], "amount": 99}}
    refused = open_with(client, key, verification, [other])
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "TRANSACTION_DATA_MISMATCH"
    # Without the field, the open is answered as it always was.
    plain = client.post(
        OPEN,
        json={"customer_id": "pay-1", "verification_id": verification},
        headers={"apikey": key},
    )
    assert plain.status_code == 200


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ({"type": "qcert_creation_acceptance"}, "TRANSACTION_DATA_TYPE_NOT_ENABLED"),
        ({"type": "urn:example:unknown"}, "TRANSACTION_DATA_TYPE_UNKNOWN"),
        ({**PAYMENT, "payload": {**PAYMENT["payload"], "tip": 1}}, "INVALID_TRANSACTION_DATA"),
        ({**PAYMENT, "payload": {"currency": "EUR"}}, "INVALID_TRANSACTION_DATA"),
        ({**PAYMENT, "credential_ids": ["pid"]}, "INVALID_TRANSACTION_DATA"),
        ({**PAYMENT, "transaction_data_hashes_alg": ["sha-384"]}, "INVALID_TRANSACTION_DATA"),
        ({**QES, "documentDigests": [{"label": "x"}]}, "INVALID_TRANSACTION_DATA"),
        ("not an object", "INVALID_REQUEST"),
    ],
)
def test_transaction_data_is_checked_before_anything_is_opened(client, org, entry, code):
    _, key, verification = org
    refused = open_with(client, key, verification, [entry])
    assert refused.status_code == 400, refused.get_json()
    assert refused.get_json()["code"] == code
    assert lookup(client, key, verification).get("status") is None  # nothing was opened


def test_only_the_backend_attaches_transaction_data(client, org):
    _, _, verification = org
    refused = client.post(
        OPEN,
        json={"customer_id": "x", "verification_id": verification, "transaction_data": [PAYMENT]},
    )
    assert refused.status_code == 401
    assert refused.get_json()["code"] == "APIKEY_REQUIRED"


def test_a_format_that_cannot_carry_transaction_data_is_refused(client, org):
    staff, key, _ = org
    mdl = make_verification(
        client, staff, schema_id=MDL_SCHEMA_ID, claims=["family_name"], attributes=[]
    )["id"]
    refused = open_with(client, key, mdl, [PAYMENT])
    assert refused.status_code == 400, refused.get_json()
    assert refused.get_json()["code"] == "TRANSACTION_DATA_FORMAT_UNSUPPORTED"


def test_a_policy_request_carries_transaction_data_and_its_status_returns_it(app, client, org):
    _, key, verification = org
    made = client.post(
        "/policy-requests",
        json={"verification_id": verification, "transaction_data": [PAYMENT]},
        headers={"apikey": key},
    )
    assert made.status_code == 201, made.get_json()
    refused = client.post(
        "/policy-requests",
        json={"verification_id": verification, "transaction_data": [{"type": "nope"}]},
        headers={"apikey": key},
    )
    assert refused.get_json()["code"] == "TRANSACTION_DATA_TYPE_UNKNOWN"
    with app.test_request_context():  # what the person's page does on opening
        _, presentation_request = connect_policy(made.get_json()["token"], 120, 600)
        db.session.commit()
        link = links().connection_url(presentation_request.id)
    request = read_request(client, link)
    (sent,) = request.claims["transaction_data"]
    hashes = {
        "transaction_data_hashes": [sha256_b64(sent)],
        "transaction_data_hashes_alg": "sha-256",
    }
    post_response(client, request, node_presentation(request, Issuer(), kb_extra=hashes))
    status = client.get(
        f"/policy-requests/{made.get_json()['id']}/status", headers={"apikey": key}
    ).get_json()
    assert status["status"] == "VERIFIED", status["validation_error"]
    assert status["transaction_data"][0]["payload"] == PAYMENT["payload"]


def test_an_organization_enables_known_types_only(client, org):
    staff, _, _ = org
    refused = client.patch(
        f"/organizations/{staff.organization_id}",
        json={"transaction_data_types": ["urn:example:other"]},
        headers=staff.headers(),
    )
    assert refused.status_code == 400


def test_the_hash_is_of_the_string_as_sent():
    """Appendix B.3.3's rule, on the example entry of TS12 §4.2."""
    (sent,) = td.prepared([PAYMENT], [td.PAYMENT], ["credential"])
    assert td.entry_hash(sent) == sha256_b64(sent)
    td.check_confirmed(
        {"transaction_data_hashes": [sha256_b64(sent)], "transaction_data_hashes_alg": "sha-256"},
        [sent],
    )
    with pytest.raises(td.Unconfirmed):
        td.check_confirmed(
            {
                "transaction_data_hashes": [sha256_b64(sent)],
                "transaction_data_hashes_alg": "sha-512",
            },
            [sent],
        )


# The EU reference verifier's own samples (eudi-srv-verifier-endpoint,
# QesAuthorizationSerializationTest and QCertCreationAcceptanceSerializationTest).
EU_QES_SAMPLE = {
    "type": "qes_authorization",
    "credential_ids": ["607510a9-c957-4095-906d-f99fd006c4ae"],
    "signatureQualifier": "eu_eidas_qes",
    "documentDigests": [
        {
            "label": "Example Contract",
            "hash": "7Qzm5EjuzXKSHFlc0OH9PP9qUaH-VBl2aGNbwYj1oOA",
            "hashAlgorithmOID": "2.16.840.1.101.3.4.2.1",
        }
    ],
}
EU_QCERT_SAMPLE = {
    "type": "qcert_creation_acceptance",
    "credential_ids": ["credential3", "credential4"],
    "transaction_data_hashes_alg": ["SHA-384", "SHA-512"],
    "QC_terms_conditions_uri": "https://example.org/terms-and-conditions",
    "QC_hash": "ZXhhbXBsZUhhc2g",
    "QC_hashAlgorithmOID": "2.16.840.1.101.3.4.2.2",
}


@pytest.mark.parametrize("sample", [EU_QES_SAMPLE, EU_QCERT_SAMPLE], ids=lambda s: s["type"])
def test_the_eu_verifiers_samples_are_read_for_this_request(sample):
    """As the EU verifier reads them, but for this request's one credential query and the
    algorithm this verifier checks: their own credential IDs and algorithms are refused."""
    with pytest.raises(td.TransactionDataError, match="credential_ids names"):
        td.prepared([sample], td.TYPES, ["credential"])
    ours = {
        key: value
        for key, value in sample.items()
        if key not in ("credential_ids", "transaction_data_hashes_alg")
    }
    (sent,) = td.prepared([ours], td.TYPES, ["credential"])
    assert td.decode(sent) == {
        **ours,
        "credential_ids": ["credential"],
        "transaction_data_hashes_alg": ["sha-256"],
    }
