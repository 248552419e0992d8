"""OpenID4VP 1.0 authorization requests, built from a verification's needs. No database here.

Requests are passed by reference as a Request Object (JAR, RFC 9101). By default they use the
``redirect_uri:`` client identifier prefix (OpenID4VP 1.0 §5.9.3), whose value with
``direct_post`` is the response URI, and are unsecured JWTs (``alg`` ``none``); a deployment
with a certificate signs them under ``x509_san_dns:`` instead (see ``app.oid4vp.client``).
When responses are encrypted (§8.3) the request carries the key to encrypt to.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from app.oid4vp.client import REQUEST_OBJECT_TYPE, ClientIdentity, RedirectUriClient
from app.oid4vp.encryption import ENC_VALUES

SD_JWT_FORMAT = "dc+sd-jwt"
SIGNING_ALGS = ["ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256"]
CREDENTIAL_QUERY_ID = "credential"
# OpenID4VP 1.0 §5.8: the audience of a request fetched by a wallet without discovery.
STATIC_AUDIENCE = "https://self-issued.me/v2"


def claim_path(name: str) -> list[str]:
    """``address.country`` -> ``["address", "country"]`` (DCQL claims path pointer)."""
    return name.split(".")


def dcql_query(vct: str, claims: list[str]) -> dict[str, Any]:
    """A DCQL query for one SD-JWT VC of type ``vct`` disclosing exactly ``claims``."""
    credential: dict[str, Any] = {
        "id": CREDENTIAL_QUERY_ID,
        "format": SD_JWT_FORMAT,
        "meta": {"vct_values": [vct]},
    }
    if claims:
        credential["claims"] = [{"path": claim_path(name)} for name in claims]
    return {"credentials": [credential]}


@dataclass(frozen=True)
class AuthorizationRequest:
    response_uri: str
    request_uri: str
    nonce: str
    state: str
    vct: str
    claims: list[str]
    issued_at: int
    expires_at: int
    client_name: str = ""
    client: ClientIdentity = field(default_factory=RedirectUriClient)
    # The public JWK a wallet encrypts its response to (§8.3); None for plain direct_post.
    encryption_jwk: dict[str, Any] | None = None

    @property
    def client_id(self) -> str:
        return self.client.client_id(self.response_uri)

    @property
    def response_mode(self) -> str:
        return "direct_post.jwt" if self.encryption_jwk else "direct_post"

    def claims_set(self) -> dict[str, Any]:
        """The Request Object's claims (OpenID4VP 1.0 §5)."""
        metadata: dict[str, Any] = {
            "vp_formats_supported": {
                SD_JWT_FORMAT: {
                    "sd-jwt_alg_values": SIGNING_ALGS,
                    "kb-jwt_alg_values": SIGNING_ALGS,
                }
            }
        }
        if self.client_name:
            metadata["client_name"] = self.client_name
        if self.encryption_jwk:
            # §5.1 and §8.3: the key (with its kid and alg) and the content encryptions we
            # decrypt; A256GCM is listed, so the parameter must be present.
            metadata["jwks"] = {"keys": [self.encryption_jwk]}
            metadata["encrypted_response_enc_values_supported"] = list(ENC_VALUES)
        return {
            "iss": self.client_id,
            "aud": STATIC_AUDIENCE,
            "iat": self.issued_at,
            "exp": self.expires_at,
            "response_type": "vp_token",
            "client_id": self.client_id,
            "response_mode": self.response_mode,
            "response_uri": self.response_uri,
            "nonce": self.nonce,
            "state": self.state,
            "dcql_query": dcql_query(self.vct, self.claims),
            "client_metadata": metadata,
        }

    def request_object(self) -> str:
        """The Request Object served at ``request_uri``: signed or not, as the client prefix says."""
        return self.client.request_object(self.claims_set())

    def unsigned_jwt(self) -> str:
        """The claims as an unsecured JWT, whatever the client prefix (serve ``request_object``)."""
        header = {"alg": "none", "typ": REQUEST_OBJECT_TYPE}
        return f"{_b64(header)}.{_b64(self.claims_set())}."

    def link(self) -> str:
        return link_for(self.response_uri, self.request_uri, self.client)


def link_for(response_uri: str, request_uri: str, client: ClientIdentity | None = None) -> str:
    """The ``openid4vp://`` link a wallet opens, and a QR code encodes (request by reference).

    Its ``client_id`` must be identical to the Request Object's, prefix included (§5.10.1),
    or the wallet stops.
    """
    client_id = (client or RedirectUriClient()).client_id(response_uri)
    return "openid4vp://?" + urlencode({"client_id": client_id, "request_uri": request_uri})


def client_id_for(response_uri: str) -> str:
    """OpenID4VP 1.0 §5.9.3: with ``direct_post`` the redirect_uri client ID is the response URI."""
    return RedirectUriClient().client_id(response_uri)


def _b64(value: dict[str, Any]) -> str:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
