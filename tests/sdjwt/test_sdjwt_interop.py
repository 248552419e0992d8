"""Credentials from implementations we did not write verify, with exactly what they disclose.

Two independent issuers and holders: npm ``@sd-jwt/sd-jwt-vc`` (driven by tests/wallet) and
PyPI ``sd-jwt``. A verifier that only agrees with its own test signer proves little.
"""

from __future__ import annotations

import time

import pytest
from jwcrypto import jwk as jwcrypto_jwk
from sd_jwt.common import SDObj
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer
from sdjwt_forge import AUDIENCE, NONCE, generate, private_jwk, public_jwk
from wallet.node_wallet import issue_and_present

from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation

VCT = "urn:example:pid:1"
ISSUER = "https://issuer.example"
STATUS = {"status_list": {"idx": 3, "uri": "https://issuer.example/status/1"}}


def node_job(issuer_key, holder_key, issuer_alg: str, holder_alg: str, now: int) -> dict:
    return {
        "issuer_jwk": private_jwk(issuer_key),
        "issuer_alg": issuer_alg,
        "holder_jwk": private_jwk(holder_key),
        "holder_alg": holder_alg,
        "iss": ISSUER,
        "vct": VCT,
        "iat": now - 60,
        "exp": now + 3600,
        "status": STATUS,
        "claims": {
            "given_name": "Erika",
            "family_name": "Mustermann",
            "address": {"street_address": "Heidestr. 17", "locality": "Köln", "country": "DE"},
            "nationalities": ["DE", "FR"],
        },
        "frame": {
            "_sd": ["given_name", "family_name", "address"],
            "_sd_decoy": 2,
            "address": {"_sd": ["street_address", "country"], "_sd_decoy": 1},
            "nationalities": {"_sd": [0, 1]},
        },
        "present": {"given_name": True, "address": {"country": True}, "nationalities": {"1": True}},
        "aud": AUDIENCE,
        "nonce": NONCE,
        "kb_iat": now,
    }


@pytest.fixture(scope="module")
def node_presentations() -> dict:
    """One wallet run per algorithm pair (node start-up dominates the cost)."""
    now = int(time.time())
    runs = {}
    for issuer_alg, holder_alg in [("ES256", "ES256"), ("EdDSA", "ES384"), ("ES512", "EdDSA")]:
        issuer_key, holder_key = generate(issuer_alg), generate(holder_alg)
        job = node_job(issuer_key, holder_key, issuer_alg, holder_alg, now)
        runs[(issuer_alg, holder_alg)] = (issuer_key, now, issue_and_present(job)["presentation"])
    return runs


def check(now: int, **changes) -> KeyBindingCheck:
    return KeyBindingCheck(**{"audience": AUDIENCE, "nonce": NONCE, "now": now, **changes})


@pytest.mark.parametrize("algs", [("ES256", "ES256"), ("EdDSA", "ES384"), ("ES512", "EdDSA")])
def test_node_wallet_presentation_verifies_with_its_disclosures(
    node_presentations: dict, algs: tuple[str, str]
) -> None:
    issuer_key, now, text = node_presentations[algs]

    credential = verify_presentation(parse_presentation(text), public_jwk(issuer_key), check(now))

    claims = credential.claims
    assert claims["given_name"] == "Erika"
    assert "family_name" not in claims
    assert claims["address"] == {"locality": "Köln", "country": "DE"}
    assert claims["nationalities"] == ["FR"]
    assert (credential.issuer, credential.vct, credential.status) == (ISSUER, VCT, STATUS)
    assert credential.header["typ"] == "dc+sd-jwt"


def test_node_wallet_presentation_is_refused_for_another_request(node_presentations: dict) -> None:
    issuer_key, now, text = node_presentations[("ES256", "ES256")]
    presentation = parse_presentation(text)

    with pytest.raises(SdJwtError, match="nonce"):
        verify_presentation(presentation, public_jwk(issuer_key), check(now, nonce="other"))
    with pytest.raises(SdJwtError, match="audience"):
        verify_presentation(presentation, public_jwk(issuer_key), check(now, audience="x:y"))
    with pytest.raises(SdJwtError, match="Credential signature"):
        verify_presentation(presentation, public_jwk(generate()), check(now))


def test_node_wallet_presentation_with_a_dropped_disclosure_is_refused(
    node_presentations: dict,
) -> None:
    issuer_key, now, text = node_presentations[("ES256", "ES256")]
    parts = text.split("~")
    dropped = "~".join([parts[0], *parts[2:]])

    with pytest.raises(SdJwtError) as refused:
        verify_presentation(parse_presentation(dropped), public_jwk(issuer_key), check(now))

    assert refused.value.reason == "Key binding does not cover the disclosures presented (sd_hash)"


def python_presentation(issuer_key, holder_key, claims_to_disclose: dict) -> str:
    user_claims = {
        "iss": ISSUER,
        "vct": VCT,
        "iat": int(time.time()) - 60,
        "exp": int(time.time()) + 3600,
        SDObj("given_name"): "Erika",
        SDObj("family_name"): "Mustermann",
        SDObj("address"): {"locality": "Köln", SDObj("country"): "DE"},
        "nationalities": ["DE", SDObj("FR")],
    }
    issuer = SDJWTIssuer(
        user_claims,
        issuer_key,
        holder_key,
        sign_alg="ES256",
        add_decoy_claims=True,
        extra_header_parameters={"typ": "dc+sd-jwt"},
    )
    holder = SDJWTHolder(issuer.sd_jwt_issuance)
    holder.create_presentation(claims_to_disclose, NONCE, AUDIENCE, holder_key, "ES256")
    return holder.sd_jwt_presentation


def test_python_sd_jwt_presentation_verifies_with_its_disclosures() -> None:
    issuer_key = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
    holder_key = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
    disclose = {"given_name": True, "address": {"country": True}, "nationalities": [None, True]}
    text = python_presentation(issuer_key, holder_key, disclose)

    credential = verify_presentation(
        parse_presentation(text),
        issuer_key.export_public(as_dict=True),
        check(int(time.time())),
    )

    assert credential.claims["given_name"] == "Erika"
    assert "family_name" not in credential.claims
    assert credential.claims["address"] == {"locality": "Köln", "country": "DE"}
    assert credential.claims["nationalities"] == ["DE", "FR"]
    assert credential.cnf_jwk == holder_key.export_public(as_dict=True)
