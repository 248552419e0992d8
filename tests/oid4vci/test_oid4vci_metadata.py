"""The documents wallets and verifiers fetch, in the shapes OpenID4VCI 1.0 final, RFC 8414 and
SD-JWT VC give them."""

from __future__ import annotations

import pytest

from app.oid4vci.keys import generate_signing_key, public_jwk
from app.oid4vci.metadata import (
    ClaimMetadata,
    CredentialConfiguration,
    authorization_server_metadata,
    credential_issuer_metadata,
    credential_offer,
    jwt_vc_issuer_metadata,
)

ISSUER = "https://verity.example/issuers/7f1c"
GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"
BADGE = CredentialConfiguration(
    id="employee-badge",
    vct="https://verity.example/schemas/employee-badge",
    display_name="Employee badge",
    claims=[
        ClaimMetadata("given_name", "Given name", "string"),
        ("employee_number", "Employee number", "number"),
        ("address.country", "Country", "string"),
    ],
)


def test_issuer_metadata_names_the_endpoints_under_the_issuer():
    metadata = credential_issuer_metadata(ISSUER, [BADGE], "Acme Corp")

    assert metadata["credential_issuer"] == ISSUER
    assert metadata["credential_endpoint"] == f"{ISSUER}/credential"
    assert metadata["nonce_endpoint"] == f"{ISSUER}/nonce"
    assert metadata["display"] == [{"name": "Acme Corp"}]
    # The issuer is its own authorization server (§12.2.4): omitted, or itself.
    assert metadata.get("authorization_servers", [ISSUER]) == [ISSUER]


def test_each_configuration_is_an_sd_jwt_vc_bound_to_a_jwk_proved_with_es256():
    configuration = credential_issuer_metadata(ISSUER, [BADGE], "Acme Corp")[
        "credential_configurations_supported"
    ]["employee-badge"]

    assert configuration["format"] == "dc+sd-jwt"
    assert configuration["vct"] == BADGE.vct
    assert configuration["cryptographic_binding_methods_supported"] == ["jwk"]
    assert configuration["credential_signing_alg_values_supported"] == ["ES256"]
    assert configuration["proof_types_supported"] == {
        "jwt": {"proof_signing_alg_values_supported": ["ES256"]}
    }
    assert configuration["credential_metadata"] == {
        "display": [{"name": "Employee badge"}],
        "claims": [
            {"path": ["given_name"], "display": [{"name": "Given name"}]},
            {"path": ["employee_number"], "display": [{"name": "Employee number"}]},
            {"path": ["address", "country"], "display": [{"name": "Country"}]},
        ],
    }


def test_no_configuration_no_entries():
    metadata = credential_issuer_metadata(ISSUER, [], "Acme Corp")
    assert metadata["credential_configurations_supported"] == {}


def test_the_batch_size_is_advertised_and_at_least_two():
    """§12.2.4 ``batch_credential_issuance.batch_size``: 2 or more."""
    metadata = credential_issuer_metadata(ISSUER, [BADGE], "Acme Corp", batch_size=4)
    assert metadata["batch_credential_issuance"] == {"batch_size": 4}
    assert credential_issuer_metadata(ISSUER, [], "Acme")["batch_credential_issuance"] == {
        "batch_size": 10
    }
    with pytest.raises(ValueError, match="at least 2"):
        credential_issuer_metadata(ISSUER, [], "Acme Corp", batch_size=1)


def test_authorization_server_metadata_for_anonymous_pre_authorized_codes():
    metadata = authorization_server_metadata(ISSUER)

    assert metadata["issuer"] == ISSUER
    assert metadata["token_endpoint"] == f"{ISSUER}/token"
    assert GRANT in metadata["grant_types_supported"]
    assert metadata["pre-authorized_grant_anonymous_access_supported"] is True


def test_authorization_server_metadata_for_the_authorization_code_flow():
    """HAIP 1.0 §4.1: PAR required, PKCE S256, iss in the response, DPoP with ES256."""
    metadata = authorization_server_metadata(ISSUER, ["diploma"])

    assert "authorization_code" in metadata["grant_types_supported"]
    assert metadata["pushed_authorization_request_endpoint"] == f"{ISSUER}/par"
    assert metadata["require_pushed_authorization_requests"] is True
    assert metadata["authorization_endpoint"] == f"{ISSUER}/authorize"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["dpop_signing_alg_values_supported"] == ["ES256"]
    assert metadata["scopes_supported"] == ["diploma"]


def test_an_offer_names_both_grants_given_an_issuer_state():
    offer = credential_offer(ISSUER, ["employee-badge"], "code-123", None, "state-1")

    assert offer["grants"]["authorization_code"] == {"issuer_state": "state-1"}
    assert offer["grants"][GRANT] == {"pre-authorized_code": "code-123"}


def test_an_offer_without_a_pre_authorized_code_names_only_the_authorization_code_grant():
    offer = credential_offer(ISSUER, ["employee-badge"], None, 6, "state-1")

    assert offer["grants"] == {"authorization_code": {"issuer_state": "state-1"}}


def test_jwt_vc_issuer_metadata_carries_the_keys_inline():
    keys = [public_jwk(generate_signing_key()), public_jwk(generate_signing_key())]

    assert jwt_vc_issuer_metadata(ISSUER, keys) == {"issuer": ISSUER, "jwks": {"keys": keys}}


def test_an_offer_without_transaction_code():
    assert credential_offer(ISSUER, ["employee-badge"], "code-123", None) == {
        "credential_issuer": ISSUER,
        "credential_configuration_ids": ["employee-badge"],
        "grants": {GRANT: {"pre-authorized_code": "code-123"}},
    }


def test_an_offer_with_a_numeric_transaction_code():
    grant = credential_offer(ISSUER, ["employee-badge"], "code-123", 6)["grants"][GRANT]

    assert grant["pre-authorized_code"] == "code-123"
    assert grant["tx_code"]["input_mode"] == "numeric"
    assert grant["tx_code"]["length"] == 6
    assert 0 < len(grant["tx_code"]["description"]) <= 300  # §4.1.1
