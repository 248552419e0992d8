"""Read a Pushed Authorization Request (RFC 9126) and check PKCE (RFC 7636): protocol only.

OpenID4VCI 1.0 §5.1 with the HAIP 1.0 rules: ``response_type=code``, a ``redirect_uri``,
PKCE with ``S256`` only (``plain`` would hand the verifier to whoever reads the request),
``issuer_state`` from the offer, and the credential named by ``scope`` (§5.1.2) and/or
``authorization_details`` of type ``openid_credential`` (§5.1.1). Every refusal is a
``TokenError`` with the RFC 6749 §4.1.2.1 / RFC 9126 §2.3 code.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from app.oid4vci.errors import TokenError
from app.oid4vci.metadata import AUTHORIZATION_DETAILS_TYPE
from app.sdjwt.encoding import b64url_encode

MAX_PARAMETER_CHARS = 4096
MAX_AUTHORIZATION_DETAILS = 8
# RFC 7636 §4.1: 43 to 128 unreserved characters; §4.2: S256 of that is 43 base64url chars.
_CODE_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CODE_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")
REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"  # RFC 9126 §2.2


@dataclass(frozen=True)
class PushedRequest:
    """What an accepted pushed request asks for."""

    redirect_uri: str
    code_challenge: str
    issuer_state: str
    state: str | None
    scopes: tuple[str, ...]
    # The credential_configuration_ids of the authorization_details, in order.
    detailed_configurations: tuple[str, ...]
    resource: str | None


def text(form: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    """One form parameter: a string of reasonable length, or None when absent."""
    value = form.get(name)
    if value is None or value == "":
        if required:
            raise TokenError("invalid_request", f"{name} is missing")
        return None
    if not isinstance(value, str) or len(value) > MAX_PARAMETER_CHARS:
        raise TokenError("invalid_request", f"{name} is not a string of reasonable length")
    return value


def parse_pushed_request(form: Mapping[str, Any]) -> PushedRequest:
    """RFC 9126 §2.1: the authorization request's parameters, pushed; ``request_uri`` inside
    one is refused (§2.1) and so is a request object (``request``: not supported)."""
    if form.get("request_uri") is not None:
        raise TokenError("invalid_request", "request_uri cannot be pushed")
    if form.get("request") is not None:
        raise TokenError("invalid_request", "Request objects are not supported")
    if text(form, "response_type", required=True) != "code":
        raise TokenError("unsupported_response_type", "Only response_type=code is supported")
    redirect_uri = text(form, "redirect_uri", required=True) or ""
    parts = urlsplit(redirect_uri)
    if not parts.scheme or parts.fragment or "#" in redirect_uri:
        raise TokenError("invalid_request", "redirect_uri is not an absolute URI without fragment")
    challenge = text(form, "code_challenge")
    if challenge is None:
        raise TokenError("invalid_request", "PKCE is required: code_challenge is missing")
    if text(form, "code_challenge_method") != "S256":
        raise TokenError("invalid_request", "PKCE code_challenge_method must be S256")
    if not _CODE_CHALLENGE.fullmatch(challenge):
        raise TokenError("invalid_request", "code_challenge is not an S256 challenge")
    issuer_state = text(form, "issuer_state")
    if issuer_state is None:
        raise TokenError(
            "invalid_request", "issuer_state is missing: start from a credential offer"
        )
    scopes = tuple((text(form, "scope") or "").split())
    details = _authorization_details(text(form, "authorization_details"))
    if not scopes and not details:
        raise TokenError("invalid_scope", "Name the credential with scope or authorization_details")
    return PushedRequest(
        redirect_uri=redirect_uri,
        code_challenge=challenge,
        issuer_state=issuer_state,
        state=text(form, "state"),
        scopes=scopes,
        detailed_configurations=details,
        resource=text(form, "resource"),
    )


def _authorization_details(raw: str | None) -> tuple[str, ...]:
    """RFC 9396 §2 / OpenID4VCI 1.0 §5.1.1: a JSON array of ``openid_credential`` objects,
    each naming a ``credential_configuration_id``."""
    if raw is None:
        return ()
    try:
        details = json.loads(raw)
    except ValueError:
        details = None
    if not isinstance(details, list) or not details or len(details) > MAX_AUTHORIZATION_DETAILS:
        raise TokenError("invalid_authorization_details", "authorization_details is not an array")
    ids = []
    for detail in details:
        if not isinstance(detail, dict) or detail.get("type") != AUTHORIZATION_DETAILS_TYPE:
            raise TokenError(
                "invalid_authorization_details",
                f"authorization_details entries must be of type {AUTHORIZATION_DETAILS_TYPE}",
            )
        configuration_id = detail.get("credential_configuration_id")
        if not isinstance(configuration_id, str) or not configuration_id:
            raise TokenError(
                "invalid_authorization_details",
                "authorization_details entries must name a credential_configuration_id",
            )
        ids.append(configuration_id)
    return tuple(ids)


def pkce_holds(code_verifier: str | None, code_challenge: str) -> bool:
    """RFC 7636 §4.6 with S256: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge."""
    if code_verifier is None or not _CODE_VERIFIER.fullmatch(code_verifier):
        return False
    return b64url_encode(hashlib.sha256(code_verifier.encode("ascii")).digest()) == code_challenge
