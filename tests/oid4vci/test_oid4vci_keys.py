"""Issuer keys: the published JWK, its RFC 7638 kid, and the private half sealed at rest."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from app.oid4vci.keys import (
    SealedKeyError,
    generate_signing_key,
    jwk_thumbprint,
    key_encryption_key,
    open_private_key,
    public_jwk,
    seal_private_key,
)
from app.sdjwt import jwk_to_public_key

# RFC 7638 §3.1: the example RSA key and its SHA-256 thumbprint.
RFC7638_KEY = {
    "kty": "RSA",
    "n": (
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_"
        "BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_"
        "FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI"
        "4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
    ),
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}


def test_the_public_jwk_is_a_p256_es256_signing_key_named_by_its_thumbprint():
    key = generate_signing_key()
    jwk = public_jwk(key)

    assert isinstance(key.curve, ec.SECP256R1)
    assert {name: jwk[name] for name in ("kty", "crv", "alg", "use")} == {
        "kty": "EC",
        "crv": "P-256",
        "alg": "ES256",
        "use": "sig",
    }
    assert jwk["kid"] == jwk_thumbprint(jwk)
    assert "d" not in jwk
    assert jwk_to_public_key(jwk).public_numbers() == key.public_key().public_numbers()


def test_the_public_jwk_of_the_public_key_is_the_same():
    key = generate_signing_key()
    assert public_jwk(key.public_key()) == public_jwk(key)


def test_thumbprint_matches_the_rfc_7638_example():
    assert jwk_thumbprint(RFC7638_KEY) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_thumbprint_ignores_optional_members():
    jwk = public_jwk(generate_signing_key())
    bare = {name: jwk[name] for name in ("kty", "crv", "x", "y")}
    assert jwk_thumbprint(bare) == jwk_thumbprint({**bare, "use": "enc", "kid": "other"})


@pytest.mark.parametrize(
    "jwk",
    [{"kty": "oct", "k": "c2VjcmV0"}, {"kty": "EC", "crv": "P-256", "x": "AA"}, "not a key"],
)
def test_thumbprint_refuses_what_it_cannot_define(jwk):
    with pytest.raises(ValueError):
        jwk_thumbprint(jwk)


def test_the_key_encryption_key_is_32_bytes_and_depends_only_on_the_secret():
    kek = key_encryption_key("correct horse battery staple")
    assert len(kek) == 32
    assert key_encryption_key("correct horse battery staple") == kek
    assert key_encryption_key("correct horse battery stapler") != kek


def test_an_empty_secret_derives_no_key():
    with pytest.raises(ValueError):
        key_encryption_key("")


def test_a_sealed_key_opens_with_its_kek_to_the_same_key():
    key, kek = generate_signing_key(), key_encryption_key("s3cret")
    sealed = seal_private_key(key, kek)

    opened = open_private_key(sealed, kek)

    assert opened.private_numbers() == key.private_numbers()


def test_the_sealed_bytes_hide_the_key_and_differ_every_time():
    key, kek = generate_signing_key(), key_encryption_key("s3cret")
    scalar = key.private_numbers().private_value.to_bytes(32, "big")
    first, second = seal_private_key(key, kek), seal_private_key(key, kek)

    assert scalar not in first
    assert first[:12] != second[:12]  # a fresh 96-bit nonce in front
    assert first != second


def test_another_kek_does_not_open_a_sealed_key():
    key = generate_signing_key()
    sealed = seal_private_key(key, key_encryption_key("the right one"))

    with pytest.raises(SealedKeyError):
        open_private_key(sealed, key_encryption_key("the wrong one"))


@pytest.mark.parametrize("damage", ["flip a ciphertext byte", "flip a nonce byte", "truncate"])
def test_damaged_sealed_bytes_do_not_open(damage):
    kek = key_encryption_key("s3cret")
    sealed = bytearray(seal_private_key(generate_signing_key(), kek))
    if damage == "flip a ciphertext byte":
        sealed[20] ^= 1
    elif damage == "flip a nonce byte":
        sealed[0] ^= 1
    else:
        sealed = sealed[:20]

    with pytest.raises(SealedKeyError):
        open_private_key(bytes(sealed), kek)


def test_es256_signatures_are_r_and_s_of_32_bytes_each_whatever_their_der_length():
    """DER drops leading zeros and adds one before a set top bit, so R and S come in 31 to 33
    bytes; over a few thousand signatures every case occurs, and each must verify as R || S."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    from app.oid4vci.jose import es256_signature

    key = generate_signing_key()
    public = key.public_key()
    for n in range(3000):
        data = n.to_bytes(4, "big")
        raw = es256_signature(key, data)
        assert len(raw) == 64
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        public.verify(der, data, ec.ECDSA(hashes.SHA256()))
