"""DPoP proofs (RFC 9449 §4.3) and the server's nonces (§8), as ``app.oid4vci.dpop`` checks
them, without a database: each refusal with the RFC's error. Proofs are built with joserfc, a
JOSE library this project did not write, or by hand where a library refuses to make them."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, RSAKey

from app.oid4vci import dpop
from app.oid4vci.dpop import DpopError, verify_dpop_proof

NONCE_KEY = b"n" * 32
LIFETIME = 300
NOW = 1_800_000_000
URL = "https://issuer.example.test/issuers/1/token"
WALLET = ECKey.generate_key("P-256")


def fresh_nonce(made: int = NOW) -> str:
    return dpop.new_nonce(NONCE_KEY, made)


def proof(
    key: Any = WALLET,
    *,
    header: dict[str, Any] | None = None,
    without: tuple[str, ...] = (),
    **claims: Any,
) -> str:
    """A proof for ``POST URL`` at ``NOW`` with a fresh nonce, signed with ``key``;
    ``header`` and ``claims`` change or add members (a header member set to None is left
    out), ``without`` drops claims."""
    body = {"jti": "jti-1", "htm": "POST", "htu": URL, "iat": NOW, "nonce": fresh_nonce()}
    body.update(claims)
    for name in without:
        body.pop(name)
    alg = "ES256" if isinstance(key, ECKey) else "RS256" if isinstance(key, RSAKey) else "HS256"
    protected = {"typ": "dpop+jwt", "alg": alg, "jwk": WALLET.as_dict(private=False)}
    protected.update(header or {})
    protected = {name: value for name, value in protected.items() if value is not None}
    return jwt.encode(protected, body, key, algorithms=[protected["alg"]])


def check(token: str, **options: Any) -> dpop.DpopProof:
    arguments: dict[str, Any] = {
        "method": "POST",
        "url": URL,
        "now": NOW,
        "nonce_valid": lambda nonce: dpop.nonce_valid(NONCE_KEY, nonce, NOW, LIFETIME),
    }
    arguments.update(options)
    return verify_dpop_proof(token, **arguments)


def refusal(token: str, **options: Any) -> tuple[str, str]:
    with pytest.raises(DpopError) as refused:
        check(token, **options)
    return refused.value.error, refused.value.description


def b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_a_proof_yields_the_keys_rfc_7638_thumbprint_its_jti_and_iat():
    checked = check(proof())
    assert checked.jkt == WALLET.thumbprint()  # joserfc's thumbprint of the same key
    assert (checked.jti, checked.iat) == ("jti-1", NOW)


def test_the_htu_is_compared_without_query_fragment_and_case_of_scheme_and_host():
    assert check(proof(htu="HTTPS://Issuer.Example.Test/issuers/1/token?x=1#f")).jti == "jti-1"


@pytest.mark.parametrize(
    "htu",
    [
        "https://issuer.example.test:443/issuers/1/token",
        "https://issuer.example.test/issuers/%31/token",
        "https://issuer.example.test/issuers/1/%74oken",
    ],
    ids=["default port", "percent-encoded digit", "percent-encoded letter"],
)
def test_the_htu_is_compared_after_rfc_3986_normalization(htu):
    """RFC 9449 §4.3: syntax- and scheme-based normalization (RFC 3986 §6.2.2, §6.2.3): the
    default port and percent-encoded unreserved characters name the same URI."""
    assert check(proof(htu=htu)).jti == "jti-1"


def test_ath_binds_the_proof_to_its_access_token():
    bound = proof(ath=dpop.access_token_hash("at_123"))
    assert check(bound, access_token="at_123").jti == "jti-1"
    assert refusal(bound, access_token="at_other") == (
        "invalid_dpop_proof",
        "DPoP proof is for another access token (ath)",
    )
    assert refusal(proof(), access_token="at_123")[0] == "invalid_dpop_proof"


# -- the server's nonces -----------------------------------------------------------------------


def test_a_missing_nonce_is_use_dpop_nonce():
    assert refusal(proof(without=("nonce",)))[0] == "use_dpop_nonce"


def test_a_nonce_older_than_its_lifetime_is_use_dpop_nonce():
    stale = fresh_nonce(NOW - LIFETIME)
    assert refusal(proof(nonce=stale)) == (
        "use_dpop_nonce",
        "Use the DPoP nonce this server provides",
    )
    assert check(proof(nonce=fresh_nonce(NOW - LIFETIME + 1))).jti == "jti-1"


def test_a_forged_nonce_is_use_dpop_nonce():
    other_server = dpop.new_nonce(b"o" * 32, NOW)
    stamp_changed = fresh_nonce()[:-2] + ("AA" if not fresh_nonce().endswith("AA") else "BB")
    for forged in (other_server, stamp_changed, "not-a-nonce", "", "!!!"):
        assert refusal(proof(nonce=forged))[0] == "use_dpop_nonce", forged


def test_a_nonce_from_the_future_is_refused():
    assert refusal(proof(nonce=fresh_nonce(NOW + 3600)))[0] == "use_dpop_nonce"


# -- the proof itself ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "iat", [NOW - 301, NOW + 61, NOW - 86_400], ids=["too old", "ahead", "a day old"]
)
def test_an_iat_outside_the_window_is_refused(iat):
    assert refusal(proof(iat=iat)) == (
        "invalid_dpop_proof",
        "DPoP proof iat is outside the accepted window",
    )


def test_iat_at_the_edges_of_the_window_is_accepted():
    assert check(proof(iat=NOW - 300)).iat == NOW - 300
    assert check(proof(iat=NOW + 60)).iat == NOW + 60


@pytest.mark.parametrize("iat", ["1800000000", True, None])
def test_an_iat_that_is_not_a_number_is_refused(iat):
    assert refusal(proof(iat=iat))[0] == "invalid_dpop_proof"


@pytest.mark.parametrize("typ", ["JWT", "openid4vci-proof+jwt", None])
def test_a_wrong_typ_is_refused(typ):
    assert refusal(proof(header={"typ": typ})) == (
        "invalid_dpop_proof",
        "DPoP proof type header is not dpop+jwt",
    )


def test_typ_is_compared_as_a_media_type():
    assert check(proof(header={"typ": "application/DPoP+JWT"})).jti == "jti-1"


def test_alg_none_is_refused():
    unsigned = f"{b64({'typ': 'dpop+jwt', 'alg': 'none', 'jwk': WALLET.as_dict(private=False)})}."
    unsigned += b64({"jti": "j", "htm": "POST", "htu": URL, "iat": NOW, "nonce": fresh_nonce()})
    error, description = refusal(unsigned + ".")
    assert error == "invalid_dpop_proof" and "alg" in description


def test_rs256_is_refused_as_only_es256_is_offered():
    rsa = RSAKey.generate_key(2048)
    signed = proof(rsa, header={"jwk": rsa.as_dict(private=False)})
    error, description = refusal(signed)
    assert error == "invalid_dpop_proof" and "alg" in description


def test_hs256_is_refused_and_a_symmetric_key_in_the_header_too():
    secret = OctKey.generate_key(256)
    error, _ = refusal(proof(secret, header={"jwk": secret.as_dict(private=True)}))
    assert error == "invalid_dpop_proof"


def test_a_private_key_in_the_header_jwk_is_refused():
    leaked = proof(header={"jwk": WALLET.as_dict(private=True)})
    assert "d" in json.loads(base64.urlsafe_b64decode(leaked.split(".")[0] + "==="))["jwk"]
    assert refusal(leaked) == (
        "invalid_dpop_proof",
        "DPoP proof header must carry the public key as jwk",
    )


def test_a_missing_jwk_or_one_that_did_not_sign_is_refused():
    assert refusal(proof(header={"jwk": None}))[0] == "invalid_dpop_proof"
    other = ECKey.generate_key("P-256")
    error, description = refusal(proof(other))  # signed by another key than the header's
    assert error == "invalid_dpop_proof"
    assert "signature" in description.lower()


def test_htm_other_than_the_requests_method_is_refused():
    assert refusal(proof(htm="GET")) == (
        "invalid_dpop_proof",
        "DPoP proof is for another HTTP method (htm)",
    )
    assert refusal(proof(htm="post"))[0] == "invalid_dpop_proof"  # methods are case-sensitive


@pytest.mark.parametrize(
    "htu",
    [
        "https://issuer.example.test/issuers/1/credential",
        "http://issuer.example.test/issuers/1/token",
        "https://attacker.example.test/issuers/1/token",
        "https://issuer.example.test/issuers/2/token",
        "https://issuer.example.test:8443/issuers/1/token",
        "https://issuer.example.test/issuers/1/token/",
        "https://issuer.example.test/issuers/1/%2Ftoken",
    ],
)
def test_htu_other_than_the_requests_uri_is_refused(htu):
    assert refusal(proof(htu=htu)) == ("invalid_dpop_proof", "DPoP proof is for another URI (htu)")


@pytest.mark.parametrize("claim", ["jti", "htm", "htu", "iat"])
def test_a_proof_without_a_required_claim_is_refused(claim):
    assert refusal(proof(without=(claim,)))[0] == "invalid_dpop_proof"


@pytest.mark.parametrize(
    "header",
    [None, "", 42, "a.b", "a.b.c", proof() + "," + proof(), "x" * (dpop.MAX_DPOP_BYTES + 1)],
    ids=["none", "empty", "number", "two parts", "garbage", "two proofs", "too large"],
)
def test_a_header_that_is_not_one_proof_is_invalid_never_a_crash(header):
    assert refusal(header)[0] == "invalid_dpop_proof"


def test_the_replay_key_is_per_key_and_jti():
    first = check(proof())
    assert dpop.replay_key(first) == dpop.replay_key(check(proof()))
    assert dpop.replay_key(first) != dpop.replay_key(check(proof(jti="jti-2")))
    other = ECKey.generate_key("P-256")
    theirs = check(proof(other, header={"jwk": other.as_dict(private=False)}))
    assert dpop.replay_key(first) != dpop.replay_key(theirs)


def test_nonces_made_now_check_under_the_same_key_only():
    now = int(time.time())
    nonce = dpop.new_nonce(NONCE_KEY, now)
    assert dpop.nonce_valid(NONCE_KEY, nonce, now, LIFETIME)
    assert not dpop.nonce_valid(b"x" * 32, nonce, now, LIFETIME)
    assert nonce != dpop.new_nonce(NONCE_KEY, now + 1)
