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


class TokenError(Exception):
    """A Token Error Response (RFC 6749 §5.2, OpenID4VCI 1.0 §6.3).

    The codes used by the pre-authorized code flow: ``invalid_request`` (a ``tx_code`` missing
    or sent when none was asked for), ``invalid_grant`` (an unknown, used or expired code, a
    wrong ``tx_code``), ``unsupported_grant_type``; ``invalid_client`` answers 401.
    """

    CODES: ClassVar[frozenset[str]] = frozenset(
        {"invalid_request", "invalid_grant", "unsupported_grant_type", "invalid_client"}
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
