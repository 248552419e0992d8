"""Read the wallet's Token Request and Credential Request into what the issuer acts on.

Pure parsing, so the HTTP layer only hands over the form or JSON body and renders the error:
every refusal is a ``TokenError`` (RFC 6749 §5.2) or a ``CredentialError`` (OpenID4VCI 1.0
§8.3.1.2) with the registered code. Unknown parameters are ignored, as §6.1 and §8.2 require.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app import json_input
from app.oid4vci.errors import InvalidCredentialRequest, InvalidProof, TokenError
from app.oid4vci.metadata import (
    AUTHORIZATION_CODE_GRANT,
    DEFAULT_BATCH_SIZE,
    PRE_AUTHORIZED_GRANT,
)

# Bounds on what a wallet may send: generous for any real wallet, small enough that a hostile
# body costs nothing to refuse.
MAX_PARAMETER_CHARS = 4096
# Appendix F.1 and F.3.
PROOF_TYPES = ("jwt", "attestation")


@dataclass(frozen=True)
class TokenRequest:
    """A pre-authorized code Token Request (OpenID4VCI 1.0 §6.1)."""

    pre_authorized_code: str
    tx_code: str | None


@dataclass(frozen=True)
class AuthorizationCodeRequest:
    """An authorization code Token Request (RFC 6749 §4.1.3 with RFC 7636 §4.5)."""

    code: str
    code_verifier: str | None
    redirect_uri: str | None
    client_id: str | None


@dataclass(frozen=True)
class CredentialRequest:
    """A Credential Request (§8.2) naming a configuration (or, after authorization_details,
    a ``credential_identifier``), with its proofs: ``jwt`` key proofs, or key attestations
    (proof type ``attestation``, Appendix F.3)."""

    credential_configuration_id: str | None
    proofs: tuple[str, ...]
    credential_identifier: str | None = None
    proof_type: str = "jwt"


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_PARAMETER_CHARS:
        raise TokenError("invalid_request", f"{name} is not a string of reasonable length")
    return value


def parse_token_request(form: Mapping[str, Any]) -> TokenRequest | AuthorizationCodeRequest:
    """RFC 6749 §4.1.3 with the §6.1 extension parameters: the authorization code and the
    pre-authorized code grants; any other ``grant_type`` is ``unsupported_grant_type``."""
    grant_type = _text(form.get("grant_type"), "grant_type")
    if not grant_type:
        raise TokenError("invalid_request", "grant_type is missing")
    if grant_type == AUTHORIZATION_CODE_GRANT:
        code = _text(form.get("code"), "code")
        if not code:
            raise TokenError("invalid_request", "code is missing")
        return AuthorizationCodeRequest(
            code=code,
            code_verifier=_text(form.get("code_verifier"), "code_verifier"),
            redirect_uri=_text(form.get("redirect_uri"), "redirect_uri"),
            client_id=_text(form.get("client_id"), "client_id"),
        )
    if grant_type != PRE_AUTHORIZED_GRANT:
        raise TokenError(
            "unsupported_grant_type",
            "Only the authorization code and pre-authorized code grants are supported",
        )
    code = _text(form.get("pre-authorized_code"), "pre-authorized_code")
    if not code:
        raise TokenError("invalid_request", "pre-authorized_code is missing")
    return TokenRequest(code, _text(form.get("tx_code"), "tx_code"))


def read_credential_request(raw: bytes, batch_size: int = DEFAULT_BATCH_SIZE) -> CredentialRequest:
    """The Credential Request from the body's bytes, through the one JSON reader every endpoint
    uses (64 levels at most, no NUL, no lone surrogate): a hostile body is
    ``invalid_credential_request``, never a ``RecursionError``."""
    if not raw:
        raise InvalidCredentialRequest("Credential request is not a JSON object")
    try:
        body = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        raise InvalidCredentialRequest(f"Credential request is not valid JSON: {exc}") from None
    return parse_credential_request(body, batch_size)


def parse_credential_request(body: Any, batch_size: int = DEFAULT_BATCH_SIZE) -> CredentialRequest:
    """§8.2: exactly one of ``credential_configuration_id`` and ``credential_identifier``
    (the latter handed out only after ``authorization_details``, which the caller checks) and
    ``proofs`` with exactly one proof type, ``jwt``, holding a non-empty array of at most
    ``batch_size`` compact JWTs (Appendix F, §12.2.4 ``batch_credential_issuance``).

    Drafts 13 to 15 sent one ``proof`` object (``{"proof_type": "jwt", "jwt": ...}``); it is
    read as ``proofs`` with one JWT, so those wallets get a credential from a request that is
    otherwise 1.0. Sending both is ambiguous and refused."""
    if not isinstance(body, dict):
        raise InvalidCredentialRequest("Credential request is not a JSON object")
    identifier = body.get("credential_identifier")
    configuration_id = body.get("credential_configuration_id")
    if identifier is not None:
        if configuration_id is not None:
            raise InvalidCredentialRequest(
                "Send credential_identifier or credential_configuration_id, not both"
            )
        if not isinstance(identifier, str) or not identifier:
            raise InvalidCredentialRequest("credential_identifier is not a string")
    elif not isinstance(configuration_id, str) or not configuration_id:
        raise InvalidCredentialRequest("credential_configuration_id is missing")
    if "credential_response_encryption" in body:
        raise InvalidCredentialRequest("Credential response encryption is not supported")
    if "proof" in body:
        if "proofs" in body:
            raise InvalidCredentialRequest("Send proofs or proof (drafts 13 to 15), not both")
        proof_type, proofs = "jwt", _draft_proof(body["proof"])
    else:
        proof_type, proofs = _proofs(body.get("proofs"))
    if len(proofs) > batch_size:
        # §8.3.1.2: a value the issuer does not support (its batch_size, §12.2.4) makes the
        # request invalid; invalid_proof is for a proof that is itself wrong.
        raise InvalidCredentialRequest(
            f"proofs.{proof_type} holds {len(proofs)} proofs; this issuer's batch_size is "
            f"{batch_size}"
        )
    return CredentialRequest(configuration_id, proofs, identifier, proof_type)


def _draft_proof(proof: Any) -> tuple[str, ...]:
    """The single ``proof`` of drafts 13 to 15 (their §7.2.1): a ``jwt`` proof only."""
    if not isinstance(proof, dict):
        raise InvalidProof("proof is not an object")
    if proof.get("proof_type") != "jwt":
        raise InvalidProof("Only the jwt proof type is supported")
    jwt = proof.get("jwt")
    if not isinstance(jwt, str) or not jwt:
        raise InvalidProof("proof.jwt is not a compact JWT")
    return (jwt,)


def _proofs(proofs: Any) -> tuple[str, tuple[str, ...]]:
    if proofs is None:
        raise InvalidProof("proofs is missing: a jwt key proof is required")
    if not isinstance(proofs, dict) or len(proofs) != 1:
        raise InvalidProof("proofs must hold exactly one proof type")
    (proof_type,) = proofs
    if proof_type not in PROOF_TYPES:
        raise InvalidProof("Only the jwt and attestation proof types are supported")
    jwts = proofs[proof_type]
    if not isinstance(jwts, list) or not jwts:
        raise InvalidProof(f"proofs.{proof_type} is not a non-empty array")
    if not all(isinstance(jwt, str) and jwt for jwt in jwts):
        raise InvalidProof(f"proofs.{proof_type} holds something other than a compact JWT")
    return proof_type, tuple(jwts)
