"""What a deployment is to wallets: its client identifier and whether responses are encrypted.

One ``Verifier`` is settled when the application starts and then shapes every request object,
connection link, expected key-binding audience and response reading, so that these can never
disagree with each other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app import json_input
from app.oid4vp.client import ClientIdentity, RedirectUriClient
from app.oid4vp.encryption import ResponseEncryption, ResponseError


@dataclass(frozen=True)
class ResponseParameters:
    """The Authorization Response parameters ``receive`` decides on (§8.1).

    ``vp_token`` stays JSON text, as it arrives in a plain ``direct_post`` form.
    """

    vp_token: str | None
    state: str


@dataclass(frozen=True)
class Verifier:
    """The client identifier prefix, how requests reach the wallet, and the response
    encryption when there is one (§8.3).

    ``by_reference`` passes unsigned requests by reference too (signed ones always are);
    ``request_uri_method`` is the method signed links tell wallets to fetch with (§5.1).
    ``dc_api_encryption`` is the key the Digital Credentials API requests offer (``dc_api.jwt``,
    Appendix A.3), or None for plain ``dc_api``.
    """

    client: ClientIdentity = field(default_factory=RedirectUriClient)
    encryption: ResponseEncryption | None = None
    by_reference: bool = False
    request_uri_method: str = "get"
    dc_api_encryption: ResponseEncryption | None = None

    @property
    def passes_by_reference(self) -> bool:
        """Whether links point at a Request Object rather than carry the request."""
        return self.client.signed or self.by_reference

    def client_id(self, response_uri: str) -> str:
        """The full client ID, prefix included: also the key binding's ``aud`` (§14.1.2)."""
        return self.client.client_id(response_uri)

    def response_jwk(self, request_id: str) -> dict[str, Any] | None:
        """The public key a wallet encrypts its response to, or None when it sends it plain."""
        return self.encryption.public_jwk(request_id) if self.encryption else None

    def read_response(self, form: Mapping[str, str], request_id: str) -> ResponseParameters:
        """The parameters of a posted response, decrypted when this verifier asked for that.

        A plain ``vp_token`` posted to a request that published an encryption key is refused:
        accepting it would let the personal data the wallet was told to protect travel bare.
        Raises ``ResponseError``.
        """
        if self.encryption is None:
            return ResponseParameters(form.get("vp_token"), _state(form))
        compact = form.get("response")
        if not compact:
            raise ResponseError(
                "This request asks for an encrypted response (direct_post.jwt) "
                "in the 'response' parameter"
            )
        payload = self.encryption.decrypt(request_id, compact)
        return ResponseParameters(_vp_token_text(payload.get("vp_token")), _state(payload))

    @property
    def dc_api_response_mode(self) -> str:
        """Appendix A.3: ``dc_api.jwt`` when answers over the browser API come encrypted."""
        return "dc_api.jwt" if self.dc_api_encryption else "dc_api"

    def dc_api_jwk(self, request_id: str) -> dict[str, Any] | None:
        """The key a browser API request offers (§8.3), or None for plain ``dc_api``."""
        return self.dc_api_encryption.public_jwk(request_id) if self.dc_api_encryption else None

    def read_dc_api_response(self, data: Mapping[str, Any], request_id: str) -> str:
        """The ``vp_token`` (JSON text) of a DigitalCredential's ``data``, decrypted from its
        ``response`` JWE when the request offered a key (Appendix A.4: ``dc_api.jwt``).

        A plain ``vp_token`` answering a request that offered a key is refused, as for
        ``direct_post.jwt``. There is no ``state`` over the API (Appendix A.2): the request ID
        in the path, the nonce and the origin bind the answer. Raises ``ResponseError``.
        """
        if self.dc_api_encryption is None:
            vp_token = data.get("vp_token")
            if not isinstance(vp_token, dict):
                raise ResponseError("vp_token is missing")
            return _vp_token_text(vp_token) or ""
        compact = data.get("response")
        if not isinstance(compact, str) or not compact:
            raise ResponseError(
                "This request asks for an encrypted response (dc_api.jwt) in 'response'"
            )
        vp_token = _vp_token_text(
            self.dc_api_encryption.decrypt(request_id, compact).get("vp_token")
        )
        if vp_token is None:
            raise ResponseError("vp_token is missing from the encrypted response")
        return vp_token


def _vp_token_text(value: Any) -> str | None:
    """§8.1: ``vp_token`` is a JSON object inside the encrypted payload (§8.3)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ResponseError("vp_token in the encrypted response is not a JSON object")
    try:
        # Bounded before it is written out again: a deep object would recurse in json.dumps.
        json_input.check_value(value)
    except json_input.JsonInputError as exc:
        raise ResponseError(f"vp_token in the encrypted response: {exc}") from None
    return json.dumps(value)


def _state(parameters: Mapping[str, Any]) -> str:
    """Every request this verifier makes carries a ``state``, so every response must return it
    (RFC 6749 §4.1.2, which OpenID4VP 1.0 §8 keeps): a response without one is refused
    rather than matched on the request ID alone."""
    state = parameters.get("state")
    if state is None or state == "":
        raise ResponseError("state is missing from the response")
    if not isinstance(state, str):
        raise ResponseError("state in the response is not a string")
    return state
