"""The SD-JWT VC the issuer signs: accepted by our own verifier and by an implementation we did
not write, with every claim selectively disclosable and the registered claims in the clear."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

import pytest
from jwcrypto import jwk as jwcrypto_jwk
from sd_jwt.holder import SDJWTHolder
from sd_jwt.verifier import SDJWTVerifier
from sdjwt.sdjwt_forge import AUDIENCE, NONCE, digest, generate, private_jwk, public_jwk, sign

from app.oid4vci.credential import sign_sd_jwt_vc
from app.oid4vci.keys import generate_signing_key
from app.oid4vci.keys import public_jwk as issuer_jwk
from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation
from app.sdjwt.encoding import b64url_decode

ISSUER = "https://verity.example/issuers/7f1c"
VCT = "https://verity.example/schemas/employee-badge"
STATUS_URI = "https://verity.example/issuers/7f1c/status-lists/1"
CLAIMS = {
    "given_name": "Erika",
    "family_name": "Mustermann",
    "employee_number": 4711,
    "is_manager": False,
    "address": {"locality": "Köln", "country": "DE"},
}


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def decode_part(text: str) -> Any:
    return json.loads(b64decode(text))


def processed(credential: str) -> dict[str, Any]:
    """The claims with every disclosure put back in place (RFC 9901 §7.1), written out here
    independently of the verifier."""
    by_digest = {
        base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode(): d
        for d in credential.split("~")[1:-1]
    }

    def resolve(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        resolved = {name: resolve(value) for name, value in node.items() if name != "_sd"}
        for digest_value in node.get("_sd", ()):
            _, name, value = decode_part(by_digest[digest_value])
            resolved[name] = resolve(value)
        return resolved

    return resolve(decode_part(credential.split(".")[1]))


def issue(holder_key: Any, now: int, **changes: Any) -> tuple[str, Any]:
    issuer_key = generate_signing_key()
    arguments = {
        "private_key": issuer_key,
        "kid": issuer_jwk(issuer_key)["kid"],
        "issuer": ISSUER,
        "vct": VCT,
        "claims": CLAIMS,
        "holder_jwk": public_jwk(holder_key),
        "status_uri": STATUS_URI,
        "status_idx": 90210,
        "issued_at": now,
        "expires_at": now + 86_400,
        **changes,
    }
    return sign_sd_jwt_vc(**arguments), issuer_key


def present(credential: str, holder_key: Any, disclosures: list[str], now: int) -> str:
    """What a holder sends: the chosen disclosures and a KB-JWT (RFC 9901 §4.3) made with the
    independent test signer."""
    issuer_jwt = credential.split("~")[0]
    sd_jwt = "".join(f"{part}~" for part in [issuer_jwt, *disclosures])
    kb = {"aud": AUDIENCE, "nonce": NONCE, "iat": now, "sd_hash": digest(sd_jwt)}
    return sd_jwt + sign({"alg": "ES256", "typ": "kb+jwt"}, kb, holder_key)


def verify(text: str, issuer_key: Any, now: int):
    check = KeyBindingCheck(audience=AUDIENCE, nonce=NONCE, now=now)
    return verify_presentation(parse_presentation(text), issuer_jwk(issuer_key), check)


def test_our_verifier_accepts_the_credential_with_every_claim_disclosed():
    now, holder_key = int(time.time()), generate("ES256")
    credential, issuer_key = issue(holder_key, now)

    verified = verify(
        present(credential, holder_key, credential.split("~")[1:-1], now), issuer_key, now
    )

    assert verified.issuer == ISSUER
    assert verified.vct == VCT
    assert {name: verified.claims[name] for name in CLAIMS} == CLAIMS
    assert verified.status == {"status_list": {"idx": 90210, "uri": STATUS_URI}}
    assert verified.cnf_jwk == public_jwk(holder_key)
    assert verified.header["kid"] == issuer_jwk(issuer_key)["kid"]


def test_the_holder_can_withhold_any_claim():
    now, holder_key = int(time.time()), generate("ES256")
    credential, issuer_key = issue(holder_key, now)
    by_name = {decode_part(d)[1]: d for d in credential.split("~")[1:-1]}

    verified = verify(
        present(credential, holder_key, [by_name["given_name"]], now), issuer_key, now
    )

    assert verified.claims["given_name"] == "Erika"
    assert not set(CLAIMS) - {"given_name"} & verified.claims.keys()


def test_our_verifier_refuses_it_from_another_key_or_with_a_changed_disclosure():
    now, holder_key = int(time.time()), generate("ES256")
    credential, _ = issue(holder_key, now)
    disclosures = credential.split("~")[1:-1]
    forged = (
        base64.urlsafe_b64encode(
            json.dumps([decode_part(disclosures[0])[0], "given_name", "Mallory"]).encode()
        )
        .rstrip(b"=")
        .decode()
    )

    with pytest.raises(SdJwtError):
        verify(present(credential, holder_key, disclosures, now), generate_signing_key(), now)
    _, issuer_key = issue(holder_key, now)
    with pytest.raises(SdJwtError):
        verify(present(credential, holder_key, [forged], now), issuer_key, now)


def test_python_sd_jwt_library_verifies_it_and_its_key_binding():
    now = int(time.time())
    holder = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
    holder_public = holder.export_public(as_dict=True)
    issuer_key = generate_signing_key()
    credential = sign_sd_jwt_vc(
        private_key=issuer_key,
        kid=issuer_jwk(issuer_key)["kid"],
        issuer=ISSUER,
        vct=VCT,
        claims=CLAIMS,
        holder_jwk=holder_public,
        status_uri=STATUS_URI,
        status_idx=1,
        issued_at=now,
    )
    wallet = SDJWTHolder(credential)
    wallet.create_presentation(
        {"given_name": True, "address": {"country": True}}, NONCE, AUDIENCE, holder, "ES256"
    )
    issuer_public = jwcrypto_jwk.JWK(**issuer_jwk(issuer_key))

    verifier = SDJWTVerifier(
        wallet.sd_jwt_presentation,
        lambda iss, header: (
            issuer_public if iss == ISSUER and header["typ"] == "dc+sd-jwt" else None
        ),
        AUDIENCE,
        NONCE,
    )

    payload = verifier.get_verified_payload()
    assert payload["given_name"] == "Erika"
    assert payload["address"] == {"country": "DE"}
    assert "family_name" not in payload
    assert payload["cnf"] == {"jwk": holder_public}


def test_layout_header_plain_claims_and_disclosures():
    now, holder_key = 1_800_000_000, generate("ES256")
    credential, issuer_key = issue(holder_key, now, expires_at=None)
    issuer_jwt, *disclosures, last = credential.split("~")
    header_b64, payload_b64, signature_b64 = issuer_jwt.split(".")
    header, payload = decode_part(header_b64), decode_part(payload_b64)

    assert last == ""
    assert header == {"alg": "ES256", "typ": "dc+sd-jwt", "kid": issuer_jwk(issuer_key)["kid"]}
    assert len(b64decode(signature_b64)) == 64  # R || S, not DER (RFC 7518 §3.4)
    assert payload == {
        "iss": ISSUER,
        "iat": now,
        "vct": VCT,
        "cnf": {"jwk": public_jwk(holder_key)},
        "status": {"status_list": {"idx": 90210, "uri": STATUS_URI}},
        "_sd": payload["_sd"],
        "_sd_alg": "sha-256",
    }
    # The five claims, and the two members of address each a disclosure of its own.
    assert len(disclosures) == len(CLAIMS) + 2
    decoded = [decode_part(d) for d in disclosures]
    top_level = [d for d, (_, name, _) in zip(disclosures, decoded, strict=True) if name in CLAIMS]
    assert payload["_sd"] == sorted(
        base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode()
        for d in top_level
    )
    address = next(value for _, name, value in decoded if name == "address")
    assert list(address) == ["_sd"] and len(address["_sd"]) == 2
    assert address["_sd"] == sorted(address["_sd"])
    assert {
        name: value for name, value in processed(credential).items() if name in CLAIMS
    } == CLAIMS
    # 128-bit salts in canonical base64url (the strict decoder refuses stray bits).
    assert all(len(b64url_decode(salt, "salt")) == 16 for salt, _, _ in decoded)
    assert len({salt for salt, _, _ in decoded}) == len(decoded)


def test_exp_is_there_when_asked_for():
    credential, _ = issue(generate("ES256"), 1_800_000_000, expires_at=1_800_086_400)
    assert decode_part(credential.split(".")[1])["exp"] == 1_800_086_400


def test_decoy_digests_are_added_and_still_verify():
    now, holder_key = int(time.time()), generate("ES256")
    credential, issuer_key = issue(holder_key, now, decoys=3)
    payload = decode_part(credential.split(".")[1])

    assert len(payload["_sd"]) == len(CLAIMS) + 3
    assert payload["_sd"] == sorted(payload["_sd"])
    verify(present(credential, holder_key, credential.split("~")[1:-1], now), issuer_key, now)


def test_the_same_claims_make_different_disclosures_every_time():
    holder_key = generate("ES256")
    first, _ = issue(holder_key, 1_800_000_000)
    second, _ = issue(holder_key, 1_800_000_000)
    assert set(first.split("~")[1:-1]).isdisjoint(second.split("~")[1:-1])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"claims": {"iss": "https://evil.example"}}, "reserved"),
        ({"claims": {"cnf": {}}}, "reserved"),
        ({"claims": {"aud": "https://verifier.example"}}, "reserved"),
        ({"claims": {"aka_vcts": ["urn:other"]}}, "reserved"),
        ({"claims": {"list": [{"...": "x"}]}}, "_sd, _sd_alg or ..."),
        ({"claims": {"list": [[{"a": {"_sd": []}}]]}}, "_sd, _sd_alg or ..."),
        ({"claims": {"address": {"_sd_alg": "sha-256"}}}, "_sd_alg"),
        ({"claims": {"_sd": []}}, "reserved"),
        ({"claims": {"...": 1}}, "segment"),
        ({"claims": {"address": {"_sd": []}}}, "_sd"),
        ({"claims": {"a..b": 1}}, "segment"),
        ({"claims": {".a": 1}}, "segment"),
        ({"claims": {1: "one"}}, "strings"),
        ({"claims": {"": "empty"}}, "strings"),
        ({"claims": {"address": "Köln", "address.country": "DE"}}, "both"),
        ({"claims": {"address.country": "DE", "address": "Köln"}}, "twice"),
        ({"holder_jwk": {"kty": "EC", "d": "AA"}}, "private"),
        ({"holder_jwk": "not a key"}, "not a JWK"),
        ({"status_idx": -1}, "status index"),
        ({"status_idx": True}, "status index"),
        ({"issued_at": 1.5}, "integers"),
        ({"expires_at": "tomorrow"}, "integers"),
        ({"issuer": None}, "strings"),
        ({"status_uri": 7}, "strings"),
    ],
)
def test_refuses_to_sign_what_no_verifier_should_accept(changes, message):
    with pytest.raises(ValueError, match=message):
        issue(generate("ES256"), 1_800_000_000, **changes)


def test_private_holder_key_from_a_jwk_with_d_is_refused():
    holder_key = generate("ES256")
    with pytest.raises(ValueError, match="private"):
        issue(holder_key, 1_800_000_000, holder_jwk=private_jwk(holder_key))


def test_dotted_attribute_names_become_nested_claims_each_disclosable():
    now, holder_key = int(time.time()), generate("ES256")
    claims = {"address.country": "DE", "address.locality": "Köln", "age_equal_or_over.18": True}
    credential, issuer_key = issue(holder_key, now, claims=claims)
    by_name = {decode_part(d)[1]: d for d in credential.split("~")[1:-1]}

    everything = verify(
        present(credential, holder_key, list(by_name.values()), now), issuer_key, now
    )
    country_only = verify(
        present(credential, holder_key, [by_name["address"], by_name["country"]], now),
        issuer_key,
        now,
    )

    assert everything.claims["address"] == {"country": "DE", "locality": "Köln"}
    assert everything.claims["age_equal_or_over"] == {"18": True}
    assert country_only.claims["address"] == {"country": "DE"}
    assert "age_equal_or_over" not in country_only.claims


def test_nesting_never_writes_into_the_callers_objects():
    address = {"locality": "Köln"}
    with pytest.raises(ValueError, match="both"):
        issue(
            generate("ES256"), 1_800_000_000, claims={"address": address, "address.country": "DE"}
        )
    assert address == {"locality": "Köln"}


def test_awkward_values_travel_unchanged():
    now, holder_key = int(time.time()), generate("ES256")
    claims = {
        "name": 'Zoë "Q" \\ back\nslash\t\u2028 😀 <script>',
        "ratio": 1.5,
        "big": 2**63,
        "list": [1, None, True, "x"],
        "empty": {},
        "ünïcode_näme": "ok",
    }
    credential, issuer_key = issue(holder_key, now, claims=claims)

    verified = verify(
        present(credential, holder_key, credential.split("~")[1:-1], now), issuer_key, now
    )

    assert {name: verified.claims[name] for name in claims} == claims


@pytest.mark.parametrize("value", ["\ud800", float("nan"), float("inf"), {1, 2}, b"bytes"])
def test_values_that_are_not_json_are_refused(value):
    with pytest.raises(ValueError):
        issue(generate("ES256"), 1_800_000_000, claims={"bad": value})


def test_claim_problems_foretell_every_refusal_of_the_signer():
    from app.oid4vci.credential import claim_problems

    assert claim_problems(CLAIMS) == []
    assert claim_problems({"address.country": "DE", "age_equal_or_over.18": True}) == []
    assert claim_problems({"status": "x", "exp.at": 1}) == [
        "Claim status is reserved by SD-JWT VC and cannot be issued",
        "Claim exp is reserved by SD-JWT VC and cannot be issued",
    ]
    assert claim_problems({"a._sd": 1}) == ["Claim name a._sd is not a usable claim path"]
    assert claim_problems({"address": "x", "address.country": "DE"}) != []
    for claims in ({"aud": 1}, {"a..b": 1}, {"address": "x", "address.country": "DE"}):
        assert claim_problems(claims)
        with pytest.raises(ValueError):
            issue(generate("ES256"), 1_800_000_000, claims=claims)
