"""The key proof of a Credential Request (OpenID4VCI 1.0 Appendix F.1): what holds and what is
refused, each refusal with its §8.3.1.2 error code and a description a wallet developer can act
on."""

from __future__ import annotations

import pytest
from oid4vci_support import ISSUER, NONCE, NOW, PROOF_TYP, proof_jwt
from sdjwt.sdjwt_forge import b64json, generate, private_jwk, public_jwk, sign, tamper

from app.oid4vci.errors import InvalidProof
from app.oid4vci.proof import Proof, verify_proof_jwt


def check(proof: str, **options) -> Proof:
    return verify_proof_jwt(proof, audience=ISSUER, now=NOW, **options)


def test_a_wallet_proof_yields_its_key_and_nonce():
    key = generate("ES256")

    proof = check(proof_jwt(key))

    assert proof.jwk == public_jwk(key)
    assert proof.nonce == NONCE
    assert proof.client_id is None


def test_iss_when_sent_is_the_client_id():
    assert check(proof_jwt(iss="wallet-client")).client_id == "wallet-client"


def test_aud_may_be_an_array_naming_the_issuer():
    assert check(proof_jwt(aud=["https://other.example", ISSUER])).nonce == NONCE


def test_typ_is_compared_as_a_media_type():
    assert check(proof_jwt(header={"typ": "application/OpenID4VCI-Proof+JWT"})).nonce == NONCE


def test_iat_at_the_edges_of_the_window_holds():
    assert check(proof_jwt(iat=NOW - 300)).nonce == NONCE
    assert check(proof_jwt(iat=NOW + 60)).nonce == NONCE


def test_without_a_required_nonce_the_nonce_is_none_when_not_required():
    assert check(proof_jwt(drop=("nonce",)), require_nonce=False).nonce is None


def hmac_proof() -> str:
    return sign(
        {"alg": "HS256", "typ": PROOF_TYP, "jwk": {"kty": "oct", "k": "c2VjcmV0"}},
        {"aud": ISSUER, "iat": NOW, "nonce": NONCE},
        b"secret",
    )


def unsigned_proof() -> str:
    key = generate("ES256")
    header = {"alg": "none", "typ": PROOF_TYP, "jwk": public_jwk(key)}
    return f"{b64json(header)}.{b64json({'aud': ISSUER, 'iat': NOW, 'nonce': NONCE})}."


def with_header(proof: str, **changes) -> str:
    """The proof with its header changed after signing (None removes a member)."""
    key = generate("ES256")
    header = {"alg": "ES256", "typ": PROOF_TYP, "jwk": public_jwk(key), **changes}
    header = {name: value for name, value in header.items() if value is not None}
    return ".".join([b64json(header), *proof.split(".")[1:]])


def another_key_proof() -> str:
    """Signed by one key, naming another in its jwk header."""
    return proof_jwt(generate("ES256"), header={"jwk": public_jwk(generate("ES256"))})


def private_jwk_proof() -> str:
    key = generate("ES256")
    return proof_jwt(key, header={"jwk": private_jwk(key)})


KEY = generate("ES256")

NEGATIVES = {
    "wrong typ (plain JWT)": (lambda: proof_jwt(header={"typ": "JWT"}), "type header"),
    "wrong typ (a key binding JWT)": (lambda: proof_jwt(header={"typ": "kb+jwt"}), "type"),
    "no typ": (lambda: proof_jwt(drop=("typ",)), "type header"),
    "alg none": (unsigned_proof, "alg none"),
    "alg HS256": (hmac_proof, "HMAC"),
    "alg ES384, not offered": (
        lambda: proof_jwt(generate("ES384"), header={"alg": "ES384"}),
        "not one of ES256",
    ),
    "alg RS256, not offered": (
        lambda: proof_jwt(generate("RS256"), header={"alg": "RS256"}),
        "not one of ES256",
    ),
    "no alg": (lambda: with_header(proof_jwt(), alg=None), "not one of ES256"),
    "signed by another key than its jwk": (another_key_proof, "signature does not verify"),
    "signature altered": (lambda: tamper(proof_jwt()), "signature does not verify"),
    "missing jwk": (lambda: proof_jwt(drop=("jwk",)), "no jwk"),
    "kid instead of jwk": (
        lambda: proof_jwt(header={"kid": "did:example:123#0"}, drop=("jwk",)),
        "no jwk",
    ),
    "jwk and kid both": (lambda: proof_jwt(header={"kid": "k1"}), "more than once"),
    "jwk and x5c both": (lambda: proof_jwt(header={"x5c": ["MIIB"]}), "more than once"),
    "jwk not an object": (lambda: proof_jwt(header={"jwk": "eyJrdHkiOiJFQyJ9"}), "not a JSON"),
    "private key material in jwk": (private_jwk_proof, "private key material"),
    "jwk meant for another algorithm": (
        lambda: proof_jwt(KEY, header={"jwk": {**public_jwk(KEY), "alg": "ES384"}}),
        "another algorithm",
    ),
    "jwk on another curve": (
        lambda: proof_jwt(KEY, header={"jwk": public_jwk(generate("ES384"))}),
        "does not fit",
    ),
    "critical header extension": (
        lambda: proof_jwt(header={"crit": ["exp"], "exp": 1}),
        "header extensions",
    ),
    "symmetric jwk": (lambda: proof_jwt(header={"jwk": {"kty": "oct"}}), "ymmetric"),
    "wrong aud": (lambda: proof_jwt(aud="https://verity.example/issuers/other"), "aud"),
    "aud of a prefix of the issuer": (lambda: proof_jwt(aud="https://verity.example"), "aud"),
    "missing aud": (lambda: proof_jwt(drop=("aud",)), "aud"),
    "aud a number": (lambda: proof_jwt(aud=7), "aud"),
    "stale iat": (lambda: proof_jwt(iat=NOW - 301), "too old"),
    "future iat": (lambda: proof_jwt(iat=NOW + 61), "future"),
    "far future iat": (lambda: proof_jwt(iat=NOW + 10 * 365 * 86_400), "future"),
    "missing iat": (lambda: proof_jwt(drop=("iat",)), "no iat"),
    "iat a string": (lambda: proof_jwt(iat=str(NOW)), "iat is not a number"),
    "iat a boolean": (lambda: proof_jwt(iat=True), "iat is not a number"),
    "expired exp": (lambda: proof_jwt(exp=NOW - 120), "expired"),
    "missing nonce": (lambda: proof_jwt(drop=("nonce",)), "no nonce"),
    "nonce a number": (lambda: proof_jwt(nonce=12345), "nonce"),
    "empty nonce": (lambda: proof_jwt(nonce=""), "nonce"),
    "malformed compact: two parts": (lambda: ".".join(proof_jwt().split(".")[:2]), "compact"),
    "malformed compact: four parts": (lambda: proof_jwt() + ".AAAA", "compact"),
    "malformed compact: not base64url": (lambda: "e30*.e30.AAAA", "base64url"),
    "malformed compact: header not JSON": (lambda: "bm90IGpzb24.e30.AAAA", "JSON"),
    "malformed compact: header an array": (lambda: "W10.e30.AAAA", "JSON object"),
    "empty string": (lambda: "", "compact"),
    "too large": (lambda: proof_jwt(pad="x" * 10_000), "too large"),
}


@pytest.mark.parametrize(("make", "reason"), NEGATIVES.values(), ids=NEGATIVES.keys())
def test_a_proof_that_does_not_hold_is_invalid_proof(make, reason):
    with pytest.raises(InvalidProof) as refused:
        check(make())

    error = refused.value
    assert (error.error, error.status) == ("invalid_proof", 400)
    assert reason in error.description
    assert error.body() == {"error": "invalid_proof", "error_description": error.description}


@pytest.mark.parametrize("value", [None, 42, b"eyJ.e30.AA", ["a.b.c"], {"jwt": "a.b.c"}])
def test_a_proof_that_is_not_text_is_invalid_proof(value):
    with pytest.raises(InvalidProof):
        check(value)


def test_a_shorter_window_is_honoured():
    with pytest.raises(InvalidProof, match="too old"):
        check(proof_jwt(iat=NOW - 31), max_age=30)
    with pytest.raises(InvalidProof, match="future"):
        check(proof_jwt(iat=NOW + 6), max_skew=5)


def test_a_proof_made_by_jwcrypto_holds():
    """Made by an implementation we did not write, as a wallet library would make it."""
    import json

    from jwcrypto import jwk, jws

    key = jwk.JWK.generate(kty="EC", crv="P-256")
    token = jws.JWS(json.dumps({"aud": ISSUER, "iat": NOW, "nonce": NONCE}))
    token.add_signature(
        key,
        alg="ES256",
        protected={"alg": "ES256", "typ": PROOF_TYP, "jwk": key.export_public(as_dict=True)},
    )

    proof = check(token.serialize(compact=True))

    assert proof.jwk == key.export_public(as_dict=True)
    assert proof.nonce == NONCE
