"""Token and Credential Requests read as OpenID4VCI 1.0 §6.1 and §8.2 define them, with the
registered error codes for everything else."""

from __future__ import annotations

import pytest

from app.oid4vci.errors import (
    CredentialError,
    InvalidCredentialRequest,
    InvalidNonce,
    InvalidProof,
    InvalidToken,
    TokenError,
    UnknownCredentialConfiguration,
)
from app.oid4vci.request import parse_credential_request, parse_token_request

GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"


def test_a_pre_authorized_token_request():
    request = parse_token_request(
        {"grant_type": GRANT, "pre-authorized_code": "abc", "tx_code": "493536", "x": "ignored"}
    )
    assert (request.pre_authorized_code, request.tx_code) == ("abc", "493536")
    assert parse_token_request({"grant_type": GRANT, "pre-authorized_code": "abc"}).tx_code is None


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({}, "invalid_request"),
        ({"grant_type": "authorization_code"}, "invalid_request"),
        ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
        ({"grant_type": GRANT}, "invalid_request"),
        ({"grant_type": GRANT, "pre-authorized_code": ""}, "invalid_request"),
        ({"grant_type": GRANT, "pre-authorized_code": "x" * 5000}, "invalid_request"),
        ({"grant_type": GRANT, "pre-authorized_code": ["a", "b"]}, "invalid_request"),
    ],
)
def test_token_requests_refused_with_their_rfc_6749_code(form, error):
    with pytest.raises(TokenError) as refused:
        parse_token_request(form)
    assert (refused.value.error, refused.value.status) == (error, 400)


def test_a_1_0_credential_request():
    request = parse_credential_request(
        {"credential_configuration_id": "badge", "proofs": {"jwt": ["a.b.c"]}, "other": 1}
    )
    assert (request.credential_configuration_id, request.proofs) == ("badge", ("a.b.c",))


@pytest.mark.parametrize(
    ("body", "error_class"),
    [
        ([], InvalidCredentialRequest),
        ({"proofs": {"jwt": ["a.b.c"]}}, InvalidCredentialRequest),
        (
            {"credential_configuration_id": 7, "proofs": {"jwt": ["a.b.c"]}},
            InvalidCredentialRequest,
        ),
        (
            {
                "credential_identifier": "x",
                "credential_configuration_id": "y",
                "proofs": {"jwt": ["a.b.c"]},
            },
            InvalidCredentialRequest,
        ),
        (
            {
                "credential_configuration_id": "b",
                "proof": {"proof_type": "jwt", "jwt": "a.b.c"},
                "proofs": {"jwt": ["a.b.c"]},
            },
            InvalidCredentialRequest,
        ),
        ({"credential_configuration_id": "b", "proof": "a.b.c"}, InvalidProof),
        (
            {"credential_configuration_id": "b", "proof": {"proof_type": "cwt", "cwt": "x"}},
            InvalidProof,
        ),
        ({"credential_configuration_id": "b", "proof": {"proof_type": "jwt"}}, InvalidProof),
        ({"credential_configuration_id": "b"}, InvalidProof),
        ({"credential_configuration_id": "b", "proofs": {"jwt": []}}, InvalidProof),
        ({"credential_configuration_id": "b", "proofs": {"jwt": "a.b.c"}}, InvalidProof),
        ({"credential_configuration_id": "b", "proofs": {"di_vp": [{}]}}, InvalidProof),
        ({"credential_configuration_id": "b", "proofs": {"jwt": [1]}}, InvalidProof),
        (
            {"credential_configuration_id": "b", "proofs": {"jwt": ["a.b.c"] * 11}},
            InvalidCredentialRequest,
        ),
        (
            {"credential_configuration_id": "b", "proofs": {"jwt": ["a.b.c"], "attestation": []}},
            InvalidProof,
        ),
    ],
)
def test_credential_requests_refused_with_their_code(body, error_class):
    with pytest.raises(error_class):
        parse_credential_request(body)


def test_a_batch_holds_up_to_the_batch_size_of_proofs():
    """§12.2.4: ``batch_size`` is the most proofs a request may carry; one more is a value
    the issuer does not support (§8.3.1.2 ``invalid_credential_request``)."""
    body = {"credential_configuration_id": "b", "proofs": {"jwt": ["a.b.c", "d.e.f", "g.h.i"]}}
    assert parse_credential_request(body, batch_size=3).proofs == ("a.b.c", "d.e.f", "g.h.i")
    with pytest.raises(InvalidCredentialRequest, match="batch_size is 2"):
        parse_credential_request(body, batch_size=2)


def test_a_draft_proof_is_read_as_one_jwt_proof():
    """Drafts 13 to 15 sent ``proof`` (singular) in an otherwise 1.0 request."""
    request = parse_credential_request(
        {"credential_configuration_id": "b", "proof": {"proof_type": "jwt", "jwt": "a.b.c"}}
    )
    assert request.proofs == ("a.b.c",)
    assert request.credential_configuration_id == "b"


@pytest.mark.parametrize(
    ("error_class", "code", "status"),
    [
        (InvalidCredentialRequest, "invalid_credential_request", 400),
        (UnknownCredentialConfiguration, "unknown_credential_configuration", 400),
        (InvalidProof, "invalid_proof", 400),
        (InvalidNonce, "invalid_nonce", 400),
        (InvalidToken, "invalid_token", 401),
    ],
)
def test_credential_errors_carry_the_registered_code_and_status(error_class, code, status):
    error = error_class("Something is wrong")
    assert isinstance(error, CredentialError)
    assert (error.error, error.status, error.description) == (code, status, "Something is wrong")
    assert error.body() == {"error": code, "error_description": "Something is wrong"}


def test_descriptions_hold_only_the_characters_the_specification_allows():
    # §8.3.1.2 / RFC 6749 §5.2: %x20-21 / %x23-5B / %x5D-7E, so no quote, backslash or newline.
    assert InvalidProof('Bad "kid"\\ é\n').description == "Bad ?kid?? ??"
    assert TokenError("invalid_grant", 'Code "x"').description == "Code ?x?"


def test_token_errors_know_their_codes_and_statuses():
    assert TokenError("invalid_grant", "Code has expired").status == 400
    assert TokenError("invalid_client", "Anonymous access is off").status == 401
    with pytest.raises(ValueError):
        TokenError("invalid_proof", "not a token error")
