"""Whatever a wallet (or anyone) sends, the proof check and the request parsers answer with
their documented errors and nothing else: no crash, no other exception, no acceptance of what
was not signed. Property-style: generated input, a fixed seed, no timing."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oid4vci_support import ISSUER, NONCE, NOW, PROOF_TYP, proof_jwt
from sdjwt.sdjwt_forge import AUDIENCE, b64, b64json, digest, generate, public_jwk, sign

from app.oid4vci.credential import RESERVED_CLAIMS, claim_problems, sign_sd_jwt_vc
from app.oid4vci.errors import CredentialError, InvalidProof, TokenError
from app.oid4vci.proof import verify_proof_jwt
from app.oid4vci.request import parse_credential_request, parse_token_request
from app.sdjwt import KeyBindingCheck, parse_presentation, verify_presentation

SETTINGS = settings(
    max_examples=300,
    deadline=None,  # speed is for make bench
    derandomize=True,  # the same examples on every run
    database=None,  # no example files in the working tree
    suppress_health_check=[HealthCheck.too_slow],
)
HOLDER = generate("ES256")
VALID = proof_jwt(HOLDER)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
b64_alphabet = string.ascii_letters + string.digits + "-_"


def only_documented_refusals(proof: Any) -> None:
    """Verify and require either a Proof that really holds, or InvalidProof."""
    try:
        result = verify_proof_jwt(proof, audience=ISSUER, now=NOW)
    except InvalidProof as refused:
        assert refused.error == "invalid_proof"
        assert refused.description
        assert all(" " <= c <= "~" and c not in '"\\' for c in refused.description)
        return
    # Accepted: it must then be a proof by the key it names, for this issuer, with a nonce.
    assert isinstance(result.jwk, dict)
    assert isinstance(result.nonce, str) and result.nonce


@SETTINGS
@given(st.text(max_size=400))
def test_any_text_is_refused_as_invalid_proof(text):
    only_documented_refusals(text)


@SETTINGS
@given(st.lists(st.text(alphabet=b64_alphabet + ".~=+/ ", max_size=120), min_size=1, max_size=5))
def test_dotted_base64url_lookalikes_are_refused(parts):
    only_documented_refusals(".".join(parts))


@SETTINGS
@given(json_values, json_values, st.binary(max_size=80))
def test_any_json_header_and_payload_with_any_signature_is_refused(header, payload, signature):
    compact = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    only_documented_refusals(f"{compact}.{b64(signature)}")


@SETTINGS
@given(
    st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    st.dictionaries(st.sampled_from(["aud", "iat", "nonce", "exp", "iss"]), json_values),
)
def test_a_well_typed_header_with_garbage_jwk_and_claims_is_refused(jwk, claims):
    header = {"alg": "ES256", "typ": PROOF_TYP, "jwk": jwk}
    only_documented_refusals(f"{b64json(header)}.{b64json(claims)}.{b64(bytes(64))}")


@SETTINGS
@given(st.data())
def test_every_change_to_a_valid_proof_is_refused(data):
    position = data.draw(st.integers(0, len(VALID) - 1))
    replacement = data.draw(st.sampled_from(b64_alphabet + ".~"))
    changed = VALID[:position] + replacement + VALID[position + 1 :]
    if changed == VALID:
        return
    try:
        verify_proof_jwt(changed, audience=ISSUER, now=NOW)
    except InvalidProof:
        return
    # Only a change that decodes to the same bytes could verify; strict base64url allows none.
    raise AssertionError(f"a changed proof was accepted (position {position})")


@SETTINGS
@given(st.integers(0, len(VALID) - 1))
def test_every_truncation_of_a_valid_proof_is_refused(length):
    truncated = VALID[:length]
    try:
        verify_proof_jwt(truncated, audience=ISSUER, now=NOW)
    except InvalidProof:
        return
    raise AssertionError(f"a proof cut to {length} characters was accepted")


@SETTINGS
@given(
    aud=st.one_of(st.just(ISSUER), json_values),
    iat=st.one_of(st.integers(NOW - 1000, NOW + 1000), json_values),
    nonce=st.one_of(st.just(NONCE), json_values),
)
def test_signed_proofs_hold_exactly_when_their_claims_do(aud, iat, nonce):
    proof = sign(
        {"alg": "ES256", "typ": PROOF_TYP, "jwk": public_jwk(HOLDER)},
        {"aud": aud, "iat": iat, "nonce": nonce},
        HOLDER,
    )
    fresh = (
        isinstance(iat, int | float) and not isinstance(iat, bool) and NOW - 300 <= iat <= NOW + 60
    )
    holds = aud == ISSUER and fresh and isinstance(nonce, str) and nonce != ""
    try:
        result = verify_proof_jwt(proof, audience=ISSUER, now=NOW)
    except InvalidProof:
        assert not holds
        return
    assert holds
    assert (result.jwk, result.nonce) == (public_jwk(HOLDER), nonce)


@SETTINGS
@given(json_values)
def test_any_credential_request_body_is_parsed_or_refused_with_a_credential_error(body):
    try:
        parse_credential_request(body)
    except CredentialError as refused:
        assert refused.status == 400
        assert refused.error in {"invalid_credential_request", "invalid_proof"}


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["grant_type", "pre-authorized_code", "tx_code", "x"]), json_values
    )
)
def test_any_token_request_form_is_parsed_or_refused_with_a_token_error(form):
    try:
        parse_token_request(form)
    except TokenError as refused:
        assert refused.error in {"invalid_request", "unsupported_grant_type"}


ISSUER_KEY = generate("ES256")
claim_names = st.text(min_size=1, max_size=12).filter(
    lambda name: "." not in name and name not in RESERVED_CLAIMS
)


@SETTINGS
@given(st.dictionaries(claim_names, json_values, max_size=6))
def test_any_json_claims_are_signed_and_read_back_unchanged_or_refused(claims):
    """Whatever the claims (unicode, control characters, nesting, numbers), the credential
    carries exactly them, or signing refuses with ValueError (a lone surrogate cannot be UTF-8)."""
    try:
        credential = sign_sd_jwt_vc(
            private_key=ISSUER_KEY,
            kid="k1",
            issuer=ISSUER,
            vct="urn:example:vct",
            claims=claims,
            holder_jwk=public_jwk(HOLDER),
            status_uri=f"{ISSUER}/status-lists/1",
            status_idx=7,
            issued_at=NOW,
        )
    except ValueError:
        return
    sd_jwt = credential
    kb = sign(
        {"alg": "ES256", "typ": "kb+jwt"},
        {"aud": AUDIENCE, "nonce": NONCE, "iat": NOW, "sd_hash": digest(sd_jwt)},
        HOLDER,
    )
    verified = verify_presentation(
        parse_presentation(sd_jwt + kb, max_bytes=1 << 20, max_disclosures=1000),
        public_jwk(ISSUER_KEY),
        KeyBindingCheck(audience=AUDIENCE, nonce=NONCE, now=NOW),
    )
    assert {name: verified.claims[name] for name in claims} == claims


name_segments = st.sampled_from(["address", "country", "18", "iss", "status", "_sd", "...", ""])
dotted_names = st.lists(name_segments, min_size=1, max_size=3).map(".".join)


@SETTINGS
@given(st.dictionaries(dotted_names, st.text(max_size=5), max_size=4))
def test_claim_problems_is_empty_exactly_when_the_signer_accepts_the_names(claims):
    """String values cannot be refused (surrogates aside), so with them any refusal is about
    names, and claim_problems must foretell it."""
    claims = {name: value.encode("utf-8", "replace").decode() for name, value in claims.items()}
    try:
        sign_sd_jwt_vc(
            private_key=ISSUER_KEY,
            kid="k1",
            issuer=ISSUER,
            vct="urn:example:vct",
            claims=claims,
            holder_jwk=public_jwk(HOLDER),
            status_uri=f"{ISSUER}/status-lists/1",
            status_idx=7,
            issued_at=NOW,
        )
        accepted = True
    except ValueError:
        accepted = False
    assert accepted == (claim_problems(claims) == [])
