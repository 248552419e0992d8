"""Batches and further requests on one access token (OpenID4VCI 1.0 §8, §12.2.4), and the
requests of wallets built to drafts 13 to 15.

One request with several proofs gets as many credentials, each a copy with its own holder
key, salts and status list entry; the access token serves further requests until it
expires; revoking the credential sets the bit of every copy.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import pytest
from config_for_tests import TEST_CONFIG
from issuance.issuance_support import Org, Wallet, access_token, issue, make_org

from app import create_app


def batch(wallet_count: int) -> list[Wallet]:
    return [Wallet() for _ in range(wallet_count)]


def request_batch(client, org: Org, credential: dict, token: str, wallets: list[Wallet], **body):
    """One credential request carrying one proof per wallet key, all with one c_nonce."""
    nonce = wallets[0].nonce(client, org)
    proofs = [wallet.proof(org.issuer, nonce) for wallet in wallets]
    request = {"credential_configuration_id": credential["schema_id"], "proofs": {"jwt": proofs}}
    request.update(body)
    return wallets[0].request(client, org, token, request)


def payload_of(token: str) -> dict[str, Any]:
    part = token.split("~")[0].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def bit(status_list_token: str, index: int) -> int:
    lst = payload_of(status_list_token)["status_list"]["lst"]
    data = zlib.decompress(base64.urlsafe_b64decode(lst + "=" * (-len(lst) % 4)))
    return (data[index // 8] >> (index % 8)) & 1


@pytest.fixture
def org(app) -> Org:
    return make_org(app)


def test_the_metadata_advertises_the_batch_size(make_app) -> None:
    app = make_app(ISSUER_BATCH_SIZE=4)
    org = make_org(app)
    metadata = app.test_client().get(f"/.well-known/openid-credential-issuer/issuers/{org.id}")
    assert metadata.get_json()["batch_credential_issuance"] == {"batch_size": 4}


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("ISSUER_BATCH_SIZE", 1),
        ("ISSUER_DPOP", "bogus"),
        ("ISSUER_COUNTRY", "utopia"),
        ("ISSUER_COUNTRY", "ut"),
    ],
)
def test_a_wrong_issuing_setting_stops_the_start(setting: str, value: object) -> None:
    """The service refuses to start, naming the setting, rather than answer 500 to wallets."""
    with pytest.raises(ValueError, match=setting):
        create_app({**TEST_CONFIG, setting: value})


def test_a_batch_size_of_two_starts(make_app) -> None:
    app = make_app(ISSUER_BATCH_SIZE=2)
    org = make_org(app)
    metadata = app.test_client().get(f"/.well-known/openid-credential-issuer/issuers/{org.id}")
    assert metadata.get_json()["batch_credential_issuance"] == {"batch_size": 2}


def test_one_request_with_three_proofs_gets_three_copies_each_its_own(client, org) -> None:
    credential = issue(client, org)
    wallets = batch(3)
    token = access_token(client, org, wallets[0], credential)

    response = request_batch(client, org, credential, token, wallets)

    assert response.status_code == 200, response.get_json()
    copies = [item["credential"] for item in response.get_json()["credentials"]]
    assert len(copies) == 3
    payloads = [payload_of(copy) for copy in copies]
    assert [p["cnf"]["jwk"]["x"] for p in payloads] == [w.public["x"] for w in wallets]
    entries = {
        (p["status"]["status_list"]["uri"], p["status"]["status_list"]["idx"]) for p in payloads
    }
    assert len(entries) == 3
    digests = [frozenset(p["_sd"]) for p in payloads]
    assert len(set(digests)) == 3  # fresh salts: no digest shared between copies
    assert not digests[0] & digests[1] and not digests[1] & digests[2]


def test_the_access_token_serves_a_second_request(client, org) -> None:
    """OpenID4VCI 1.0 §8 ("multiple accesses"): once answered 401."""
    credential = issue(client, org)
    first, second = Wallet(), Wallet()
    token = access_token(client, org, first, credential)
    assert request_batch(client, org, credential, token, [first]).status_code == 200

    again = request_batch(client, org, credential, token, [second])

    assert again.status_code == 200, again.get_json()
    (copy,) = again.get_json()["credentials"]
    assert payload_of(copy["credential"])["cnf"]["jwk"]["x"] == second.public["x"]
    stored = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert stored["status"] == "ISSUED"


def test_a_batch_over_the_batch_size_is_an_invalid_credential_request(make_app) -> None:
    app = make_app(ISSUER_BATCH_SIZE=2)
    client = app.test_client()
    org = make_org(app)
    credential = issue(client, org)
    wallets = batch(3)
    token = access_token(client, org, wallets[0], credential)

    refused = request_batch(client, org, credential, token, wallets)

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_credential_request"
    assert "batch_size is 2" in refused.get_json()["error_description"]
    # Nothing was taken: the same wallet, within the limit, gets its two.
    assert (
        len(request_batch(client, org, credential, token, wallets[:2]).get_json()["credentials"])
        == 2
    )


def test_two_proofs_made_with_one_key_are_an_invalid_proof(client, org) -> None:
    credential = issue(client, org)
    wallet = Wallet()
    token = access_token(client, org, wallet, credential)

    refused = request_batch(client, org, credential, token, [wallet, wallet])

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_proof"


def test_every_proof_of_a_batch_must_carry_the_nonce(client, org) -> None:
    credential = issue(client, org)
    first, second = Wallet(), Wallet()
    token = access_token(client, org, first, credential)
    nonce = first.nonce(client, org)
    proofs = [first.proof(org.issuer, nonce), second.proof(org.issuer, None)]

    refused = first.request(
        client,
        org,
        token,
        {"credential_configuration_id": credential["schema_id"], "proofs": {"jwt": proofs}},
    )

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_proof"


def test_a_nonce_spent_by_one_batch_is_refused_in_the_next(client, org) -> None:
    credential = issue(client, org)
    first, second = Wallet(), Wallet()
    token = access_token(client, org, first, credential)
    nonce = first.nonce(client, org)
    body = {
        "credential_configuration_id": credential["schema_id"],
        "proofs": {"jwt": [first.proof(org.issuer, nonce)]},
    }
    assert first.request(client, org, token, body).status_code == 200
    body["proofs"] = {"jwt": [second.proof(org.issuer, nonce)]}

    refused = second.request(client, org, token, body)

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_nonce"


def test_past_the_copies_limit_fewer_then_none_are_issued(make_app) -> None:
    """§8.3: the issuer may issue fewer credentials than proofs; none left is a denial."""
    app = make_app(ISSUER_MAX_COPIES=3)
    client = app.test_client()
    org = make_org(app)
    credential = issue(client, org)
    wallets = batch(6)
    token = access_token(client, org, wallets[0], credential)

    assert (
        len(request_batch(client, org, credential, token, wallets[:2]).get_json()["credentials"])
        == 2
    )
    fewer = request_batch(client, org, credential, token, wallets[2:4])
    assert len(fewer.get_json()["credentials"]) == 1
    denied = request_batch(client, org, credential, token, wallets[4:])

    assert denied.status_code == 400
    assert denied.get_json()["error"] == "credential_request_denied"


def test_revoking_sets_the_bit_of_every_copy(client, org) -> None:
    credential = issue(client, org)
    wallets = batch(3)
    token = access_token(client, org, wallets[0], credential)
    copies = request_batch(client, org, credential, token, wallets).get_json()["credentials"]
    entries = [payload_of(c["credential"])["status"]["status_list"] for c in copies]
    for entry in entries:
        status_list = client.get(entry["uri"].removeprefix(org.base)).get_data(as_text=True)
        assert bit(status_list, entry["idx"]) == 0

    assert (
        client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers).status_code
        == 200
    )

    for entry in entries:
        status_list = client.get(entry["uri"].removeprefix(org.base)).get_data(as_text=True)
        assert bit(status_list, entry["idx"]) == 1
    # And the token stops serving: revocation ends it.
    after = request_batch(client, org, credential, token, batch(1))
    assert after.status_code == 401


def test_a_draft_15_proof_gets_a_credential(client, org) -> None:
    """Drafts 13 to 15 sent ``proof`` (singular) in an otherwise 1.0 request."""
    credential = issue(client, org)
    wallet = Wallet()
    token = access_token(client, org, wallet, credential)
    proof = wallet.proof(org.issuer, wallet.nonce(client, org))

    response = wallet.request(
        client,
        org,
        token,
        {
            "credential_configuration_id": credential["schema_id"],
            "proof": {"proof_type": "jwt", "jwt": proof},
        },
    )

    assert response.status_code == 200, response.get_json()
    (copy,) = response.get_json()["credentials"]
    assert payload_of(copy["credential"])["cnf"]["jwk"]["x"] == wallet.public["x"]


def test_the_metadata_is_also_at_the_draft_15_address(client, org) -> None:
    """Draft 15 appended the well-known segment to the issuer identifier."""
    final = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}")
    draft = client.get(f"/issuers/{org.id}/.well-known/openid-credential-issuer")

    assert draft.status_code == 200
    assert draft.get_json() == final.get_json()
    assert draft.headers["Access-Control-Allow-Origin"] == "*"
    missing = client.get(
        "/issuers/00000000-0000-0000-0000-000000000000/.well-known/openid-credential-issuer"
    )
    assert missing.status_code == 404 and missing.get_json()["error"] == "not_found"


# -- wallets we did not write, against a served issuer -----------------------------------------


def test_the_owf_wallet_takes_batches_on_one_token_and_each_copy_is_verified(serve) -> None:
    """npm @openid4vc/openid4vci sends a batch of three proofs, then a second request of two
    on the same access token; @sd-jwt/sd-jwt-vc verifies every copy, our verifier answers
    VERIFIED for each, and after revocation every copy's status bit is set and FAILs."""
    from issuance.node_client import run
    from issuance.test_issuance_presentation import present

    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    credential = issue(client, org)
    wallets = batch(5)
    private = [json.loads(wallet.key.export_private()) for wallet in wallets]

    received = run(
        {
            "action": "receive_batch",
            "offer_url": credential["offer_url"],
            "holder_private_jwks": [private[:3], private[3:]],
        }
    )

    assert received["batch_size"] == 10
    assert [len(batch_) for batch_ in received["batches"]] == [3, 2]
    copies = [copy for batch_ in received["batches"] for copy in batch_]
    assert [copy["payload"]["cnf"]["jwk"]["x"] for copy in copies] == [
        w.public["x"] for w in wallets
    ]
    assert len({copy["payload"]["status"]["status_list"]["idx"] for copy in copies}) == 5
    assert all(copy["status"] == 0 and copy["claims"]["given_name"] == "Ada" for copy in copies)
    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": org.schema_id,
            "claims": ["given_name", "degree"],
            "trusted_issuers": [credential["issuer"]],
        },
        headers=org.headers,
    ).get_json()
    for number, (wallet, copy) in enumerate(zip(wallets, copies, strict=True)):
        verified = present(
            client, org, wallet, verification["id"], f"graduate-{number}", copy["credential"]
        )
        assert verified["status"] == "VERIFIED", verified

    assert (
        client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers).status_code
        == 200
    )

    for number, (wallet, copy) in enumerate(zip(wallets, copies, strict=True)):
        assert run({"action": "verify", "credential": copy["credential"]})["status"] == 1
        failed = present(
            client, org, wallet, verification["id"], f"revoked-{number}", copy["credential"]
        )
        assert failed["status"] == "FAILED"
        assert failed["validation_error"] == "Credential has been revoked by its issuer"


@pytest.mark.parametrize(
    "attested", [True, False], ids=["wallet and key attestation", "public client"]
)
def test_the_owf_wallet_takes_batches_through_the_authorization_code_flow(
    serve, attested: bool
) -> None:
    """npm @openid4vc/openid4vci and @openid4vc/oauth2 push the authorization request with
    PKCE, approve it, redeem the code for a DPoP-bound token (with the wallet attestation's
    PoPs when attested, and a key attestation of the batch's keys in each proof), then send a
    batch of two proofs and a further request of two on that same token: four credentials,
    each bound to its own key with its own status entry, each VERIFIED at our verifier."""
    from issuance.attestation_support import WalletProvider, set_wallet_attestation, trust
    from issuance.node_client import run
    from issuance.test_issuance_presentation import present

    served = serve(ISSUER_DPOP="required", TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    job: dict[str, Any] = {"action": "receive_authorized"}
    if attested:
        provider = WalletProvider()
        trust(client, org, provider)
        set_wallet_attestation(client, org, "required")
        changed = client.put(
            f"/schemas/{org.schema_id}",
            json={"key_attestations_required": True},
            headers=org.headers,
        )
        assert changed.status_code == 200, changed.get_json()
        job["wallet_provider"] = {
            "private_jwk": json.loads(provider.key.export_private()),
            "x5c": provider.x5c(),
        }
        job["key_attestation"] = True
    else:
        set_wallet_attestation(client, org, "off")
    credential = issue(client, org)
    wallets = batch(4)
    private = [json.loads(wallet.key.export_private()) for wallet in wallets]

    received = run(
        {
            **job,
            "offer_url": credential["offer_url"],
            "holder_private_jwks": [private[:2], private[2:]],
        }
    )

    assert received["token_type"] == "DPoP"
    assert received["authorization_response"]["iss"] == credential["issuer"]
    assert [len(batch_) for batch_ in received["batches"]] == [2, 2]
    copies = [copy for batch_ in received["batches"] for copy in batch_]
    assert [copy["payload"]["cnf"]["jwk"]["x"] for copy in copies] == [
        w.public["x"] for w in wallets
    ]
    entries = {
        (
            copy["payload"]["status"]["status_list"]["uri"],
            copy["payload"]["status"]["status_list"]["idx"],
        )
        for copy in copies
    }
    assert len(entries) == 4
    assert all(copy["status"] == 0 for copy in copies)  # @sd-jwt/jwt-status-list: valid
    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": org.schema_id,
            "claims": ["given_name", "degree"],
            "trusted_issuers": [credential["issuer"]],
        },
        headers=org.headers,
    ).get_json()
    for number, (wallet, copy) in enumerate(zip(wallets, copies, strict=True)):
        verified = present(
            client, org, wallet, verification["id"], f"holder-{number}", copy["credential"]
        )
        assert verified["status"] == "VERIFIED", verified


def test_a_draft_15_wallet_takes_a_credential_unaided(serve) -> None:
    """npm @sphereon/oid4vci-client 0.20 (draft 15): metadata at the issuer's own
    well-known address, ``proof`` singular, and its default ``scope=openid`` beside the
    offer's ``issuer_state`` (ignored, as naming no credential); the credential is then
    verified independently, and presented to our verifier with the wallet's key: VERIFIED."""
    from issuance.node_client import run
    from issuance.test_issuance_presentation import present
    from jwcrypto import jwk

    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    credential = issue(client, org)

    received = run({"offer_url": credential["offer_url"]}, script="wallet_sphereon.mjs")

    checked = run({"action": "verify", "credential": received["credential"]})
    assert checked["payload"]["cnf"]["jwk"]["x"] == received["holder_jwk"]["x"]
    assert checked["claims"]["degree"] == "Mathematics" and checked["status"] == 0
    stored = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert stored["status"] == "ISSUED"
    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": org.schema_id,
            "claims": ["given_name", "degree"],
            "trusted_issuers": [credential["issuer"]],
        },
        headers=org.headers,
    ).get_json()
    holder = Wallet(key=jwk.JWK(**received["holder_private_jwk"]))
    verified = present(
        client, org, holder, verification["id"], "sphereon-holder", received["credential"]
    )
    assert verified["status"] == "VERIFIED", verified
