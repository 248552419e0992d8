"""verify_jws, read_unverified and jwk_to_public_key: the one JOSE implementation, which issuer
trust and status lists reuse."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed448, x25519
from sdjwt_forge import b64, b64json, generate, public_jwk, sign, tamper

from app.sdjwt import SdJwtError, jwk_to_public_key, read_unverified, verify_jws

ALL_ALGS = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256")


@pytest.fixture(scope="module")
def keys() -> dict:
    return {alg: generate(alg) for alg in ALL_ALGS}


def refusal(compact: str, key, allowed=ALL_ALGS, **options) -> str:
    with pytest.raises(SdJwtError) as refused:
        verify_jws(compact, key, allowed, **options)
    return refused.value.reason


@pytest.mark.parametrize("alg", ALL_ALGS)
def test_each_algorithm_verifies_with_a_key_object_or_a_jwk(keys: dict, alg: str) -> None:
    compact = sign({"alg": alg}, {"sub": "x"}, keys[alg])

    assert verify_jws(compact, keys[alg].public_key(), ALL_ALGS) == ({"alg": alg}, {"sub": "x"})
    assert verify_jws(compact, public_jwk(keys[alg]), ALL_ALGS)[1] == {"sub": "x"}


@pytest.mark.parametrize("alg", ALL_ALGS)
def test_each_algorithm_refuses_a_changed_signature(keys: dict, alg: str) -> None:
    compact = tamper(sign({"alg": alg}, {"sub": "x"}, keys[alg]))

    assert refusal(compact, keys[alg].public_key()) == "Token signature does not verify"


@pytest.mark.parametrize("allowed", [("none", "ES256"), ("HS256", "ES256")])
def test_none_and_hmac_are_refused_even_when_allow_listed(keys: dict, allowed: tuple) -> None:
    alg = allowed[0]
    secret = b"secret" if alg == "HS256" else None
    compact = sign({"alg": alg}, {"sub": "x"}, secret)

    assert "never accepted" in refusal(compact, keys["ES256"].public_key(), allowed)


def test_fully_specified_ed25519_verifies_only_with_an_ed25519_key(keys: dict) -> None:
    # RFC 9864 §2.2: "Ed25519" is EdDSA over Ed25519 alone, unlike "EdDSA" (RFC 8037 §3.1).
    header, payload = b64json({"alg": "Ed25519"}), b64json({"sub": "x"})
    signature = b64(keys["EdDSA"].sign(f"{header}.{payload}".encode()))
    compact = f"{header}.{payload}.{signature}"
    ed448_key = ed448.Ed448PrivateKey.generate().public_key()

    assert verify_jws(compact, keys["EdDSA"].public_key(), ("Ed25519",))[1] == {"sub": "x"}
    assert refusal(compact, ed448_key, ("Ed25519",)) == (
        "Token key does not fit its signing algorithm"
    )
    assert refusal(compact, keys["EdDSA"].public_key(), ALL_ALGS) == (
        "Token uses a signing algorithm that is not allowed"
    )


def test_an_algorithm_outside_the_callers_list_is_refused(keys: dict) -> None:
    compact = sign({"alg": "EdDSA"}, {"sub": "x"}, keys["EdDSA"])

    assert refusal(compact, keys["EdDSA"].public_key(), ("ES256",)) == (
        "Token uses a signing algorithm that is not allowed"
    )


def test_a_signature_by_another_key_does_not_verify(keys: dict) -> None:
    compact = sign({"alg": "ES256"}, {"sub": "x"}, generate("ES256"))

    assert refusal(compact, keys["ES256"].public_key()) == "Token signature does not verify"


def test_a_changed_payload_does_not_verify(keys: dict) -> None:
    header, _, signature = sign({"alg": "ES256"}, {"admin": False}, keys["ES256"]).split(".")
    forged = f"{header}.{b64json({'admin': True})}.{signature}"

    assert refusal(forged, keys["ES256"].public_key()) == "Token signature does not verify"


def test_critical_header_extensions_are_refused(keys: dict) -> None:
    # RFC 7515 §4.1.11: an extension listed in "crit" must be understood; none is.
    compact = sign({"alg": "ES256", "crit": ["b64"], "b64": False}, {"sub": "x"}, keys["ES256"])

    assert refusal(compact, keys["ES256"].public_key()) == (
        "Token requires header extensions this verifier does not support"
    )


@pytest.mark.parametrize(
    ("compact", "reason"),
    [
        ("a.b", "Token is not a compact JWS"),
        (".e30.", "Token is not a compact JWS"),
        (" e30.e30.", "Token header is not base64url encoded"),
        ("!!.e30.", "Token header is not base64url encoded"),
        (f"{b64(b'[1]')}.e30.", "Token header is not a JSON object"),
        (f"{b64(b'{nope')}.e30.", "Token header is not valid JSON"),
        (f"{b64(b'{}')}.e30.", "Token header names no signing algorithm"),
        (f"{b64json({'alg': 'ES256', 'n': float('nan')})}.e30.", "Token header is not valid JSON"),
        (None, "Token is not a compact JWS"),
    ],
)
def test_malformed_tokens_are_refused(keys: dict, compact, reason: str) -> None:
    assert refusal(compact, keys["ES256"].public_key()) == reason


def test_read_unverified_decodes_as_strictly_as_verify(keys: dict) -> None:
    compact = sign({"alg": "ES256", "kid": "k"}, {"iss": "x"}, keys["ES256"])

    assert read_unverified(compact) == ({"alg": "ES256", "kid": "k"}, {"iss": "x"})
    with pytest.raises(SdJwtError) as refused:
        read_unverified("<html>hello</html>", "Status list token")
    assert refused.value.reason == "Status list token is not a compact JWS"
    duplicated = b64(b'{"a":1,"a":2}')
    with pytest.raises(SdJwtError) as refused:
        read_unverified(f"{duplicated}.e30.", "Status list token")
    assert refused.value.reason == "Status list token header is not valid JSON"


def test_algorithm_must_fit_the_key(keys: dict) -> None:
    # RFC 8725 §3.1: an RSA key never verifies an ECDSA token, nor a P-384 key an ES256 one.
    compact = sign({"alg": "ES256"}, {"sub": "x"}, keys["ES256"])

    assert (
        refusal(compact, keys["RS256"].public_key())
        == "Token key does not fit its signing algorithm"
    )
    assert (
        refusal(compact, keys["ES384"].public_key())
        == "Token key does not fit its signing algorithm"
    )


def test_jwk_alg_member_must_match_the_header(keys: dict) -> None:
    compact = sign({"alg": "ES256"}, {"sub": "x"}, keys["ES256"])
    jwk = {**public_jwk(keys["ES256"]), "alg": "ES384"}

    assert refusal(compact, jwk) == "Token key is meant for another algorithm"


def test_allow_list_given_as_a_string_is_not_matched_by_substring(keys: dict) -> None:
    compact = sign({"alg": "ES256"}, {"sub": "x"}, keys["ES256"])

    assert verify_jws(compact, keys["ES256"].public_key(), "ES256")
    assert refusal(compact, keys["ES256"].public_key(), "ES2566") == (
        "Token uses a signing algorithm that is not allowed"
    )


def test_typ_is_checked_only_when_asked(keys: dict) -> None:
    compact = sign({"alg": "ES256"}, {"sub": "x"}, keys["ES256"])

    assert verify_jws(compact, keys["ES256"].public_key(), ALL_ALGS)
    reason = refusal(compact, keys["ES256"].public_key(), typ="statuslist+jwt", label="Status list")
    assert reason == "Status list type header is not statuslist+jwt"


def test_header_with_duplicate_member_names_is_refused(keys: dict) -> None:
    header = b64(b'{"alg":"ES256","alg":"none"}')
    compact = f"{header}.{b64json({'sub': 'x'})}.AAAA"

    assert refusal(compact, keys["ES256"].public_key()) == "Token header is not valid JSON"


def test_non_canonical_base64_signature_is_refused(keys: dict) -> None:
    compact = sign({"alg": "EdDSA"}, {"sub": "x"}, keys["EdDSA"])
    # An Ed25519 signature is 64 bytes: its last base64url character carries 4 unused bits.
    last = compact[-1]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    sibling = alphabet[alphabet.index(last) ^ 1]

    assert refusal(compact[:-1] + sibling, keys["EdDSA"].public_key()) == (
        "Token signature is not base64url encoded"
    )


def test_payload_must_be_a_json_object(keys: dict) -> None:
    header = b64json({"alg": "EdDSA"})
    payload = b64(json.dumps([1, 2]).encode())
    signature = b64(keys["EdDSA"].sign(f"{header}.{payload}".encode()))

    assert refusal(f"{header}.{payload}.{signature}", keys["EdDSA"].public_key()) == (
        "Token payload is not a JSON object"
    )


def test_key_that_is_not_a_public_key_is_refused(keys: dict) -> None:
    compact = sign({"alg": "ES256"}, {"sub": "x"}, keys["ES256"])

    assert refusal(compact, keys["ES256"]) == "Token key does not fit its signing algorithm"
    assert refusal(compact, None) == "Token key does not fit its signing algorithm"


def _ec_jwk(**changes) -> dict:
    return {**public_jwk(ec.generate_private_key(ec.SECP256R1())), **changes}


@pytest.mark.parametrize(
    ("jwk", "reason"),
    [
        ({"kty": "oct", "k": "c2VjcmV0"}, "Symmetric keys are never accepted for signatures"),
        (
            {**public_jwk(generate("EdDSA")), "d": "AAAA"},
            "Key contains private key material",
        ),
        (
            {"kty": "EC", "crv": "brainpoolP256r1", "x": "AA", "y": "AA"},
            "Key curve is not supported",
        ),
        (_ec_jwk(x=b64(b"\x01" * 31)), "Key coordinates have the wrong length for the curve"),
        (_ec_jwk(y=b64(b"\x01" * 32)), "Key is not a valid point on its curve"),
        (_ec_jwk(y=None), "A key member is not base64url encoded"),
        ({"kty": "EC", "crv": "P-256", "x": "AA"}, "Key is missing a required member"),
        ({"kty": "OKP", "crv": "X25519", "x": "AA"}, "Key curve is not supported"),
        ({"kty": "RSA", "n": b64(b"\xff" * 128), "e": "AQAB"}, "RSA key is shorter than 2048 bits"),
        (
            {"kty": "RSA", "n": b64(b"\x00" + b"\xff" * 256), "e": "AQAB"},
            "Key is not a valid RSA key",
        ),
        ({"kty": "XYZ"}, "Key type is not supported"),
        ("not a dict", "Key is not a JSON Web Key"),
    ],
)
def test_unusable_jwks_are_refused(jwk, reason: str) -> None:
    with pytest.raises(SdJwtError) as refused:
        jwk_to_public_key(jwk)

    assert refused.value.reason == reason


def test_x25519_key_is_no_signature_key() -> None:
    raw = x25519.X25519PrivateKey.generate().public_key().public_bytes_raw()

    with pytest.raises(SdJwtError):
        jwk_to_public_key({"kty": "OKP", "crv": "X25519", "x": b64(raw)})
