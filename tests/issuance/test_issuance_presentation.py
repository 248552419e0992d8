"""Our verifier accepts our credentials through the ordinary presentation route.

A credential issued over OpenID4VCI is presented through a full OpenID4VP 1.0 flow (request
object by reference, ``direct_post``, a key binding JWT made by PyPI sd-jwt, not our code):
VERIFIED. The issuer is this deployment's (``PUBLIC_URL`` ``http://127.0.0.1:<port>``), so its
keys and status list are read from the database: no outbound fetch, which the fetcher would
refuse here (loopback over http, ``TRUST_ALLOW_PRIVATE`` off). Once revoked, the very next
presentation of the same credential FAILs.
"""

from __future__ import annotations

import json

from factories import make_apikey
from issuance.issuance_support import Org, Wallet, issue, make_org, receive
from jwcrypto import jwk
from wallets import post_response, read_request


def present(client, org: Org, wallet: Wallet, verification_id: str, customer: str, sd_jwt: str):
    """Open an individual, follow its openid4vp:// link and answer with the credential."""
    from sd_jwt.holder import SDJWTHolder

    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer, "verification_id": verification_id},
    ).get_json()
    connect = client.get(f"/verifications/{individual['id']}/connect").get_json()
    request = read_request(client, connect["connection_url"])
    holder = SDJWTHolder(sd_jwt)
    holder.create_presentation(
        {"given_name": True, "degree": True, "grade": True},
        request.nonce,
        request.client_id,
        jwk.JWK.from_json(wallet.key.export_private()),
        "ES256",
    )
    answered = post_response(client, request, holder.sd_jwt_presentation)
    assert answered.status_code == 200, answered.get_data(as_text=True)
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


def test_our_verifier_accepts_our_credential_then_fails_it_once_revoked(serve) -> None:
    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    wallet = Wallet()
    credential = issue(client, org)
    sd_jwt = receive(client, org, wallet, credential)

    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "description": "We check your degree.",
            "schema_id": org.schema_id,
            "claims": ["given_name", "degree"],
            "attributes": [{"name": "grade", "operator": "BIGGER", "value": 10}],
            "trusted_issuers": [credential["issuer"]],
        },
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()
    verification_id = verification.get_json()["id"]

    verified = present(client, org, wallet, verification_id, "graduate-1", sd_jwt)
    assert verified["status"] == "VERIFIED", verified
    key = make_apikey(served.app, org.id)
    looked_up = client.get(
        f"/verifications/{verification_id}/individuals/graduate-1", headers={"apikey": key}
    ).get_json()
    assert looked_up["issuer"] == credential["issuer"]
    assert looked_up["claims"]["degree"] == "Mathematics"

    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.get_json()["status"] == "REVOKED"

    failed = present(client, org, wallet, verification_id, "graduate-2", sd_jwt)
    assert failed["status"] == "FAILED", json.dumps(failed)
    assert failed["validation_error"] == "Credential has been revoked by its issuer"


def test_a_credential_signed_before_a_key_rotation_still_verifies(serve) -> None:
    """The retired key stays among those the issuer publishes while the credential it signed
    has not expired, and the verifier reads it from there."""
    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    wallet = Wallet()
    credential = issue(client, org)
    sd_jwt = receive(client, org, wallet, credential)
    rotated = served.app.test_cli_runner().invoke(args=["issuers", "rotate-key", org.id])
    assert rotated.exit_code == 0, rotated.output
    assert len(json.loads(rotated.output)["published_kids"]) == 2
    verification = client.post(
        "/verifications",
        json={"name": "Graduates", "schema_id": org.schema_id, "claims": ["given_name", "degree"]},
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()

    verified = present(client, org, wallet, verification.get_json()["id"], "graduate-1", sd_jwt)

    assert verified["status"] == "VERIFIED", verified


def test_a_credential_taken_by_the_owf_wallet_with_dpop_is_verified(serve) -> None:
    """The authorization code flow as the OpenWallet Foundation clients drive it (PAR, PKCE,
    DPoP with nonce retries, iss checked), then a presentation to our verifier: VERIFIED."""
    from issuance.node_client import run

    served = serve(ISSUER_DPOP="required")
    client = served.app.test_client()
    org = make_org(served.app)
    wallet = Wallet()
    credential = issue(client, org)
    received = run(
        {
            "action": "receive_authorized",
            "offer_url": credential["offer_url"],
            "holder_private_jwk": json.loads(wallet.key.export_private()),
        }
    )
    assert received["token_type"] == "DPoP"
    assert received["authorization_response"]["iss"] == credential["issuer"]
    assert received["status"] == 0  # the status list says valid

    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "description": "We check your degree.",
            "schema_id": org.schema_id,
            "claims": ["given_name", "degree"],
            "attributes": [{"name": "grade", "operator": "BIGGER", "value": 10}],
            "trusted_issuers": [credential["issuer"]],
        },
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()
    verified = present(
        client, org, wallet, verification.get_json()["id"], "graduate-1", received["credential"]
    )
    assert verified["status"] == "VERIFIED", verified
