"""The holder's key is bound into the credential as its public members only.

A wallet's proof may name its key with members besides the key itself (an ``x5u`` of 3 KB,
``kid``, ``alg``, ``use``, ``key_ops``, members of its own); before, all of them were signed
into ``cnf.jwk`` of every credential it received.
"""

from __future__ import annotations

import base64
import json

from issuance.issuance_support import Wallet, access_token, issue, make_org
from jwcrypto import jwk, jws

from app.oid4vci.keys import jwk_thumbprint


def payload_of(sd_jwt: str) -> dict:
    part = sd_jwt.split("~")[0].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_cnf_jwk_holds_the_public_key_members_only(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    token = access_token(client, org, wallet, credential)
    padded = {
        **wallet.public,
        "x5u": "https://wallet.example.test/" + "a" * 3000,
        "kid": "wallet-key-1",
        "alg": "ES256",
        "use": "sig",
        "key_ops": ["verify"],
        "ext": True,
        "note": {"any": "thing"},
    }
    proof = wallet.proof(org.issuer, wallet.nonce(client, org), header_jwk=padded)
    response = wallet.request(
        client,
        org,
        token,
        {"credential_configuration_id": credential["schema_id"], "proofs": {"jwt": [proof]}},
    )
    assert response.status_code == 200, response.get_json()
    sd_jwt = response.get_json()["credentials"][0]["credential"]

    # The credential is still the issuer's, checked with an independent JOSE library.
    jwks = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()["jwks"]
    signed = jws.JWS()
    signed.deserialize(sd_jwt.split("~")[0])
    signed.verify(jwk.JWK(**jwks["keys"][0]))

    bound = payload_of(sd_jwt)["cnf"]["jwk"]
    assert bound == {key: wallet.public[key] for key in ("kty", "crv", "x", "y")}
    assert jwk_thumbprint(bound) == wallet.key.thumbprint()
    # Nothing of the 3 KB x5u travels with the credential (its header's x5c is the issuer's
    # one certificate, some 800 characters).
    assert len(sd_jwt) < 3000 and "x5u" not in json.dumps(payload_of(sd_jwt))
    stored = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert stored["status"] == "ISSUED"


def test_a_proof_key_of_an_unknown_type_is_invalid_proof(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    token = access_token(client, org, wallet, credential)
    strange = {**wallet.public, "kty": "XY"}
    proof = wallet.proof(org.issuer, wallet.nonce(client, org), header_jwk=strange)
    response = wallet.request(
        client,
        org,
        token,
        {"credential_configuration_id": credential["schema_id"], "proofs": {"jwt": [proof]}},
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_proof"
