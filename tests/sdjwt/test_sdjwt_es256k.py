"""ES256K (RFC 8812 §3.2, secp256k1) in verify_jws and secp256k1 JWKs (RFC 8812 §3.1),
against tokens signed by joserfc: verified only where a caller allow-lists it, never with a
key of another curve, and with a high S as well as a low one."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jws
from joserfc.jwk import ECKey

from app.sdjwt import DEFAULT_ALGS, SdJwtError, jwk_to_public_key, verify_jws
from app.sdjwt.encoding import b64url_decode, b64url_encode

# Order of the secp256k1 group.
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
ES256K = ("ES256K",)


@pytest.fixture(scope="module")
def key() -> ECKey:
    return ECKey.generate_key("secp256k1")


def signed(key: ECKey, payload: bytes = b'{"sub":"x"}', alg: str = "ES256K") -> str:
    return jws.serialize_compact({"alg": alg}, payload, key, algorithms=[alg])


def public(key: ECKey) -> dict:
    return key.as_dict(private=False)


def with_s(compact: str, high: bool) -> str:
    """The same signature with S as its high (N - s) or low twin: both verify in ECDSA."""
    head, payload, signature = compact.split(".")
    raw = b64url_decode(signature, "signature")
    r, s = raw[:32], int.from_bytes(raw[32:], "big")
    s = max(s, N - s) if high else min(s, N - s)
    return f"{head}.{payload}.{b64url_encode(r + s.to_bytes(32, 'big'))}"


def test_joserfc_es256k_verifies_with_the_jwk_and_the_key_object(key: ECKey) -> None:
    compact = signed(key)
    jwk = public(key)

    assert jwk["crv"] == "secp256k1"
    assert verify_jws(compact, jwk, ES256K) == ({"alg": "ES256K"}, {"sub": "x"})
    assert verify_jws(compact, jwk_to_public_key(jwk), ES256K)[1] == {"sub": "x"}


def test_es256k_is_not_among_the_default_algorithms(key: ECKey) -> None:
    assert "ES256K" not in DEFAULT_ALGS
    with pytest.raises(SdJwtError, match="not allowed"):
        verify_jws(signed(key), public(key))


@pytest.mark.parametrize("high", [True, False])
def test_a_high_or_low_s_both_verify(key: ECKey, high: bool) -> None:
    # RFC 8812 does not require low S; the Identus SDK signs low S, other signers may not.
    assert verify_jws(with_s(signed(key), high), public(key), ES256K)[1] == {"sub": "x"}


def test_a_changed_payload_does_not_verify(key: ECKey) -> None:
    head, _, signature = signed(key).split(".")
    other = b64url_encode(b'{"sub":"y"}')
    with pytest.raises(SdJwtError, match="signature does not verify"):
        verify_jws(f"{head}.{other}.{signature}", public(key), ES256K)


def test_es256k_with_a_p256_key_is_refused(key: ECKey) -> None:
    p256 = ec.generate_private_key(ec.SECP256R1()).public_key()
    with pytest.raises(SdJwtError, match="key does not fit its signing algorithm"):
        verify_jws(signed(key), p256, ("ES256K", "ES256"))


def test_a_secp256k1_key_does_not_verify_es256(key: ECKey) -> None:
    # The same curve size and hash as ES256: only the curve tells them apart.
    header, payload = b64url_encode(b'{"alg":"ES256"}'), b64url_encode(b'{"sub":"x"}')
    es256k_signature = signed(key).split(".")[2]
    compact = f"{header}.{payload}.{es256k_signature}"
    with pytest.raises(SdJwtError, match="key does not fit its signing algorithm"):
        verify_jws(compact, public(key), ("ES256K", "ES256"))


def test_a_der_signature_is_not_a_jws_signature(key: ECKey) -> None:
    private = serialization.load_pem_private_key(key.as_pem(private=True), None)
    assert isinstance(private, ec.EllipticCurvePrivateKey)
    header, payload = b64url_encode(b'{"alg":"ES256K"}'), b64url_encode(b'{"sub":"x"}')
    der = private.sign(f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    with pytest.raises(SdJwtError, match="signature does not verify"):
        verify_jws(f"{header}.{payload}.{b64url_encode(der)}", public(key), ES256K)


def test_a_secp256k1_jwk_with_short_coordinates_is_refused(key: ECKey) -> None:
    jwk = {**public(key), "x": b64url_encode(b"\x01" * 31)}
    with pytest.raises(SdJwtError, match="wrong length"):
        jwk_to_public_key(jwk)
