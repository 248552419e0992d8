"""The issuer's signed Token Status List, read back with the verifier's own status list code."""

from __future__ import annotations

import pytest

from app.oid4vci.keys import generate_signing_key, public_jwk
from app.oid4vci.statuslist import one_bit_status_list, sign_status_list
from app.sdjwt import verify_jws
from app.statuslist import INVALID, VALID, decode_status_list, encode_status_list

URI = "https://verity.example/issuers/7f1c/status-lists/1"
SIZE = 131_072


def signed(revoked, key=None, **changes):
    key = key or generate_signing_key()
    arguments = {
        "private_key": key,
        "kid": public_jwk(key)["kid"],
        "uri": URI,
        "revoked": revoked,
        "size": SIZE,
        "issued_at": 1_800_000_000,
        "ttl": 300,
        "expires_at": 1_800_086_400,
        **changes,
    }
    return sign_status_list(**arguments), key


def test_the_token_verifies_under_the_issuer_key_with_the_list_claims():
    token, key = signed([])

    header, payload = verify_jws(token, public_jwk(key), ("ES256",), typ="statuslist+jwt")

    assert header == {"alg": "ES256", "typ": "statuslist+jwt", "kid": public_jwk(key)["kid"]}
    assert {name: payload[name] for name in ("sub", "iat", "exp", "ttl")} == {
        "sub": URI,
        "iat": 1_800_000_000,
        "exp": 1_800_086_400,
        "ttl": 300,
    }
    assert payload["status_list"]["bits"] == 1


def test_exactly_the_revoked_entries_are_invalid():
    revoked = [0, 7, 8, 4242, 90_210, SIZE - 1]
    token, key = signed(revoked)
    _, payload = verify_jws(token, public_jwk(key), ("ES256",), typ="statuslist+jwt")

    status_list = decode_status_list(payload["status_list"])

    assert status_list.size == SIZE
    assert [idx for idx in range(SIZE) if status_list.value(idx) != VALID] == revoked
    assert all(status_list.value(idx) == INVALID for idx in revoked)


def test_an_empty_list_of_131072_entries_compresses_to_a_few_hundred_bytes():
    token, _ = signed([])
    assert len(token) < 1000


def test_iss_is_added_when_given():
    token, key = signed([1], issuer="https://verity.example/issuers/7f1c")
    _, payload = verify_jws(token, public_jwk(key), ("ES256",))
    assert payload["iss"] == "https://verity.example/issuers/7f1c"


@pytest.mark.parametrize(
    "changes", [{"revoked": [SIZE]}, {"revoked": [-1]}, {"revoked": [True]}, {"size": 0}]
)
def test_indices_outside_the_list_are_refused(changes):
    with pytest.raises(ValueError):
        signed(**{"revoked": [], **changes})


@pytest.mark.parametrize(
    ("revoked", "size"), [([], 8), ([0], 1), ([3, 9], 10), ([0, 7, 8, 4242, SIZE - 1], SIZE)]
)
def test_the_list_is_the_bytes_the_shared_encoder_makes(revoked, size):
    values = [INVALID if idx in revoked else VALID for idx in range(size)]
    assert one_bit_status_list(revoked, size) == encode_status_list(values, 1)
