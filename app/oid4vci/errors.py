"""The errors the credential and token endpoints answer with.

Each carries the registered ``error`` code, a ``description`` fit to send to the wallet (it
never echoes what the wallet sent) and the HTTP ``status``, so the HTTP layer renders every one
the same way and the codes cannot drift from the specification.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

# OpenID4VCI 1.0 §8.3.1.2 and RFC 6749 §5.2: error_description is printable ASCII without the
# double quote and the backslash (%x20-21 / %x23-5B / %x5D-7E).
_NOT_ALLOWED_IN_DESCRIPTION = re.compile(r"[^\x20-\x21\x23-\x5b\x5d-\x7e]")


def safe_description(text: str) -> str:
    """``text`` with every character an error_description may not hold replaced by "?"."""
    return _NOT_ALLOWED_IN_DESCRIPTION.sub("?", str(text))


class CredentialError(Exception):
    """A Credential Error Response (OpenID4VCI 1.0 §8.3.1): HTTP 400 unless said otherwise."""

    error: ClassVar[str] = "invalid_credential_request"
    status: ClassVar[int] = 400
    # The authentication scheme a 401 names in WWW-Authenticate (RFC 6750 §3, RFC 9449 §7.1).
    scheme: ClassVar[str] = "Bearer"

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = safe_description(description)

    def body(self) -> dict[str, Any]:
        """The JSON error body: ``error`` and ``error_description``."""
        return {"error": self.error, "error_description": self.description}


class InvalidCredentialRequest(CredentialError):
    """The request is missing a parameter, repeats one or is otherwise malformed (§8.3.1.2)."""

    error = "invalid_credential_request"


class UnknownCredentialConfiguration(CredentialError):
    """The requested ``credential_configuration_id`` is not one this issuer offers."""

    error = "unknown_credential_configuration"


class InvalidProof(CredentialError):
    """The proof is missing, carries no nonce, or does not hold: signature, type, audience
    or age (§8.3.1.2)."""

    error = "invalid_proof"


class InvalidNonce(CredentialError):
    """The proof's ``nonce`` is not a ``c_nonce`` this issuer handed out and has not yet seen
    used (unknown, expired or replayed): the wallet should fetch a fresh one from the Nonce
    Endpoint and try again (§8.3.1.2, §7). A proof with no nonce at all is ``invalid_proof``
    (§8.3.1.2, case 3)."""

    error = "invalid_nonce"


class CredentialRequestDenied(CredentialError):
    """The request was understood but the credential cannot be issued (§8.3.1.2), for
    instance because it was revoked or already issued."""

    error = "credential_request_denied"


class InvalidToken(CredentialError):
    """The access token is missing, expired or not for this issuer: RFC 6750 §3.1 answers
    401 with a ``WWW-Authenticate`` header, which OpenID4VCI 1.0 §8.3.1.1 keeps."""

    error = "invalid_token"
    status = 401


class InvalidDpopProof(CredentialError):
    """The DPoP proof is missing, replayed, or does not hold for this request and token
    (RFC 9449 §7.1): 401 with ``WWW-Authenticate: DPoP error="invalid_dpop_proof"``."""

    error = "invalid_dpop_proof"
    status = 401
    scheme: ClassVar[str] = "DPoP"


class UseDpopNonce(CredentialError):
    """The proof carries no nonce, or a stale one: retry with the ``DPoP-Nonce`` header's
    (RFC 9449 §9)."""

    error = "use_dpop_nonce"
    status = 401
    scheme: ClassVar[str] = "DPoP"


class TokenError(Exception):
    """An error of the authorization server: a Token Error Response (RFC 6749 §5.2,
    OpenID4VCI 1.0 §6.3) or a Pushed Authorization Request's (RFC 9126 §2.3).

    ``invalid_request`` (a parameter missing or malformed, PKCE missing), ``invalid_grant``
    (an unknown, used or expired code, a wrong ``tx_code`` or ``code_verifier``, another
    ``redirect_uri``), ``unsupported_grant_type``, ``invalid_scope`` and
    ``invalid_authorization_details`` (RFC 9396 §5: a credential not on offer),
    ``invalid_target`` (RFC 8707: another ``resource``), ``invalid_dpop_proof`` and
    ``use_dpop_nonce`` (RFC 9449 §5, §8); ``invalid_client`` answers 401.
    """

    CODES: ClassVar[frozenset[str]] = frozenset(
        {
            "invalid_request",
            "invalid_grant",
            "unsupported_grant_type",
            "unsupported_response_type",
            "invalid_client",
            "invalid_scope",
            "invalid_authorization_details",
            "invalid_target",
            "invalid_dpop_proof",
            "use_dpop_nonce",
        }
    )

    def __init__(self, error: str, description: str, status: int | None = None) -> None:
        if error not in self.CODES:
            raise ValueError(f"{error!r} is not a token error code")
        super().__init__(description)
        self.error = error
        self.description = safe_description(description)
        self.status = status if status is not None else (401 if error == "invalid_client" else 400)

    def body(self) -> dict[str, Any]:
        """The JSON error body: ``error`` and ``error_description``."""
        return {"error": self.error, "error_description": self.description}
