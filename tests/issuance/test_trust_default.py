"""Whom a new verification trusts when it does not say: never "any issuer" by silence where
a safer answer is known.

A verification of the organization's own SD-JWT VC schema, ``trusted_issuers`` left out,
starts pinned to the organization's own issuer: its own credentials verify, the same type
signed by another issuer fails. ``[]`` is the explicit choice of any issuer, and every answer
says which it is in ``trust``. The shipped public schemas name no issuer, so there silence
stays "any", as the contract's clients expect, and the answer says so.
"""

from __future__ import annotations

from factories import PID_SCHEMA_ID, verification_body
from issuance.issuance_support import Wallet, issue, make_org, receive
from issuance.test_issuance_presentation import present

CLAIMS = {"name": "Graduates", "schema_id": None, "claims": ["given_name", "degree"]}


def test_own_schema_starts_pinned_to_the_own_issuer_and_refuses_another(serve) -> None:
    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    ours = make_org(served.app)
    theirs = make_org(served.app, email="other@example.test", name="Other")
    wallet = Wallet()
    their_credential = issue(client, theirs)
    their_sd_jwt = receive(client, theirs, wallet, their_credential)
    credential = issue(client, ours)
    sd_jwt = receive(client, ours, wallet, credential)

    created = client.post(
        "/verifications", json={**CLAIMS, "schema_id": ours.schema_id}, headers=ours.headers
    )
    assert created.status_code == 201, created.get_json()
    verification = created.get_json()
    assert verification["trusted_issuers"] == [f"{ours.base}/issuers/{ours.id}"]
    assert verification["trust"] == "pinned"
    assert credential["issuer"] == verification["trusted_issuers"][0]

    verified = present(client, ours, wallet, verification["id"], "ours", sd_jwt)
    assert verified["status"] == "VERIFIED", verified
    # The same vct (both organizations use one schema definition), signed by the other one.
    refused = present(client, ours, wallet, verification["id"], "theirs", their_sd_jwt)
    assert refused["status"] == "FAILED", refused
    assert refused["validation_error"] == (
        f"Credential issuer {their_credential['issuer']} is not trusted by this verification"
    )

    # An empty list is the explicit choice of any issuer, and the answer says so.
    anyone = client.post(
        "/verifications",
        json={**CLAIMS, "schema_id": ours.schema_id, "trusted_issuers": []},
        headers=ours.headers,
    ).get_json()
    assert anyone["trusted_issuers"] == []
    assert anyone["trust"] == "any"
    accepted = present(client, ours, wallet, anyone["id"], "theirs-any", their_sd_jwt)
    assert accepted["status"] == "VERIFIED", accepted

    # Named later by a partial update: pinned.
    updated = client.put(
        f"/verifications/{anyone['id']}",
        json={"trusted_issuers": [their_credential["issuer"]]},
        headers=ours.headers,
    ).get_json()
    assert updated["trust"] == "pinned"


def test_public_schema_left_unsaid_accepts_any_issuer_and_says_so(serve) -> None:
    served = serve()
    client = served.app.test_client()
    org = make_org(served.app)
    body = verification_body()
    del body["trusted_issuers"]
    created = client.post("/verifications", json=body, headers=org.headers)
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["schema_id"] == PID_SCHEMA_ID
    assert created.get_json()["trusted_issuers"] == []
    assert created.get_json()["trust"] == "any"
    read = client.get(f"/verifications/{created.get_json()['id']}", headers=org.headers)
    assert read.get_json()["trust"] == "any"
