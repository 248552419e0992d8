"""OpenID4VP 1.0 authorization requests, built from a verification's needs. No database here.

How a request reaches the wallet follows from whether it can be signed:

- Unsigned (the ``redirect_uri:`` prefix, §5.9.3, whose value with ``direct_post`` is the
  response URI) requests travel by value: the ``openid4vp://`` link carries the parameters
  themselves, objects as compact JSON (§5.1). OpenID4VP 1.0 only late allowed an unsigned
  Request Object by reference, and wallets in the field refuse one, so passing it by reference
  (an ``alg`` ``none`` JWT at ``request_uri``) is left to deployments that ask for it.
- Signed (``x509_san_dns:`` or ``x509_hash:``, see ``app.oid4vp.client``) requests travel by
  reference as a Request Object (JAR, RFC 9101), fetched with GET or, when the link says
  ``request_uri_method=post``, with a POST carrying the wallet's metadata and nonce (§5.10).

When responses are encrypted (§8.3) the request carries the key to encrypt to.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from app.oid4vp.client import ClientIdentity, RedirectUriClient
from app.oid4vp.encryption import ENC_VALUES
from app.oid4vp.formats import JOSE_ALGS, CredentialType

SIGNING_ALGS = JOSE_ALGS
CREDENTIAL_QUERY_ID = "credential"
# OpenID4VP 1.0 §5.8: the audience of a request fetched by a wallet without discovery.
STATIC_AUDIENCE = "https://self-issued.me/v2"
LINK_SCHEME = "openid4vp://"
# §5.1: how a wallet fetches a request passed by reference.
REQUEST_URI_METHODS = ("get", "post")


def dcql_query(
    credential: CredentialType, claims: list[str], trusted_authorities: Sequence[str] = ()
) -> dict[str, Any]:
    """A DCQL query (§6) for one credential of ``credential``'s type disclosing exactly
    ``claims``, from the authorities whose key identifiers are given (§6.1.1, ``aki``)."""
    query = credential.credential_query(CREDENTIAL_QUERY_ID, claims)
    if trusted_authorities:
        query["trusted_authorities"] = [{"type": "aki", "values": list(trusted_authorities)}]
    return {"credentials": [query]}


@dataclass(frozen=True)
class AuthorizationRequest:
    response_uri: str
    request_uri: str
    nonce: str
    state: str
    credential: CredentialType
    claims: list[str]
    issued_at: int
    expires_at: int
    client_name: str = ""
    # RFC 7591 §2 logo_uri in client_metadata, when the organization set one.
    logo_uri: str = ""
    # §5.1 verifier_info: attestations about the verifier (a registration certificate).
    verifier_info: tuple[dict[str, Any], ...] = ()
    client: ClientIdentity = field(default_factory=RedirectUriClient)
    # The public JWK a wallet encrypts its response to (§8.3); None for plain direct_post.
    encryption_jwk: dict[str, Any] | None = None
    # What client_metadata offers; a wallet's metadata (§5.10) may narrow them.
    sd_jwt_algs: tuple[str, ...] = SIGNING_ALGS
    kb_jwt_algs: tuple[str, ...] = SIGNING_ALGS
    enc_values: tuple[str, ...] = ENC_VALUES
    # §5.10: the nonce a wallet sent with request_uri_method=post, echoed in the Request Object.
    wallet_nonce: str | None = None
    # §6.1.1.1: base64url key identifiers of the authorities the verification trusts; empty
    # when it trusts issuers a key identifier cannot name.
    trusted_authorities: tuple[str, ...] = ()
    # §5.1 transaction_data: base64url strings, sent exactly as kept (``app.oid4vp.
    # transaction_data``); the key binding hashes these very strings (§B.3.3).
    transaction_data: tuple[str, ...] = ()

    @property
    def client_id(self) -> str:
        return self.client.client_id(self.response_uri)

    @property
    def response_mode(self) -> str:
        return "direct_post.jwt" if self.encryption_jwk else "direct_post"

    def client_metadata(self) -> dict[str, Any]:
        """§5.1 ``client_metadata``: formats and algorithms, and the response key if any."""
        metadata: dict[str, Any] = {
            "vp_formats_supported": self.credential.formats_supported(
                self.sd_jwt_algs, self.kb_jwt_algs
            )
        }
        if self.client_name:
            metadata["client_name"] = self.client_name
        if self.logo_uri:
            metadata["logo_uri"] = self.logo_uri
        if self.encryption_jwk:
            # §5.1 and §8.3: the key (with its kid and alg) and the content encryptions we
            # decrypt; A256GCM is listed, so the parameter must be present.
            metadata["jwks"] = {"keys": [self.encryption_jwk]}
            metadata["encrypted_response_enc_values_supported"] = list(self.enc_values)
        return metadata

    def parameters(self) -> dict[str, Any]:
        """The Authorization Request parameters (§5), the same by value and by reference."""
        parameters: dict[str, Any] = {
            "client_id": self.client_id,
            "response_type": "vp_token",
            "response_mode": self.response_mode,
            "response_uri": self.response_uri,
            "nonce": self.nonce,
            "state": self.state,
            "dcql_query": dcql_query(self.credential, self.claims, self.trusted_authorities),
            "client_metadata": self.client_metadata(),
        }
        if self.verifier_info:
            parameters["verifier_info"] = list(self.verifier_info)
        if self.transaction_data:
            parameters["transaction_data"] = list(self.transaction_data)
        return parameters

    def claims_set(self) -> dict[str, Any]:
        """The Request Object's claims: the parameters, plus what a JWT carries (RFC 9101 §4)."""
        claims = {
            "iss": self.client_id,
            "aud": STATIC_AUDIENCE,
            "iat": self.issued_at,
            "exp": self.expires_at,
            **self.parameters(),
        }
        if self.wallet_nonce is not None:
            claims["wallet_nonce"] = self.wallet_nonce
        return claims

    def request_object(self) -> str:
        """The Request Object served at ``request_uri``: signed or not, as the client prefix says."""
        return self.client.request_object(self.claims_set())

    def link(self, *, by_reference: bool = False, request_uri_method: str = "get") -> str:
        """The ``openid4vp://`` link a wallet opens, and a QR code encodes.

        Signed requests always go by reference (a signature needs a Request Object); unsigned
        ones by value unless ``by_reference``.
        """
        if self.client.signed or by_reference:
            return reference_link(self.client_id, self.request_uri, request_uri_method)
        return value_link(self.parameters())

    def with_wallet_nonce(self, wallet_nonce: str | None) -> AuthorizationRequest:
        return replace(self, wallet_nonce=wallet_nonce)


def reference_link(client_id: str, request_uri: str, request_uri_method: str = "get") -> str:
    """A request passed by reference (§5.1, RFC 9101 §5.2).

    Its ``client_id`` must be identical to the Request Object's, prefix included (§5.10.1),
    or the wallet stops. ``request_uri_method`` is left out when it is the default ``get``.
    """
    query = {"client_id": client_id, "request_uri": request_uri}
    if request_uri_method != "get":
        query["request_uri_method"] = request_uri_method
    return LINK_SCHEME + "?" + urlencode(query)


def value_link(parameters: dict[str, Any]) -> str:
    """A request passed by value: objects as JSON strings (§5.1), compact to keep QR codes small."""
    return (
        LINK_SCHEME
        + "?"
        + urlencode(
            {
                name: value if isinstance(value, str) else compact_json(value)
                for name, value in parameters.items()
            }
        )
    )


def compact_json(value: Any) -> str:
    """No spaces, and UTF-8 text left as it is (percent-encoding it is shorter than ``\\u``)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
