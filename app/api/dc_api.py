"""OpenID4VP over the W3C Digital Credentials API (OpenID4VP 1.0 Appendix A).

The person's page fetches the request, hands it to ``navigator.credentials.get`` and posts
back what the browser returned. Without a certificate the request is unsigned and the browser,
not a client identifier, vouches for the verifier; with one it is signed (Appendix A.3.2, JWS
Compact Serialization) under the deployment's client identifier and names the page's origin
in ``expected_origins``. Either way the wallet binds the presentation to the page's Origin, so
the key binding's ``aud`` is ``origin:<origin>`` (Appendix A.4, "even for signed requests")
and only this deployment's own origin is accepted.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel

from app.api.common import base_url, parse_body, parse_id
from app.api.wallet import person_page, trust_context
from app.errors import InvalidRequest
from app.presentations import operations as presentations
from app.presentations.decide import Context
from app.verifications.models import PresentationRequest
from app.web.links import links

bp = Blueprint("dc_api", __name__)

# Appendix A.1: version 1, unsigned request (all parameters passed as members of ``data``), or
# signed (one JWS in ``data.request``).
PROTOCOL = "openid4vp-v1-unsigned"
SIGNED_PROTOCOL = "openid4vp-v1-signed"
DEFAULT_PORTS = {"http": 80, "https": 443}
# Response encryption metadata (OpenID4VP 1.0 §8.3) belongs to ``direct_post.jwt``; a plain
# ``dc_api`` response is not encrypted, so no key is offered over the API.
ENCRYPTION_METADATA = ("jwks", "encrypted_response_enc_values_supported")


class DigitalCredentialData(BaseModel):
    """The ``data`` of the DigitalCredential the browser returned (Appendix A.4)."""

    vp_token: dict[str, Any]


def own_origin() -> str:
    """The deployment's web origin (scheme, host, and port unless it is the default)."""
    parts = urlsplit(base_url())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    port = parts.port
    return (
        f"{scheme}://{host}"
        if port in (None, DEFAULT_PORTS.get(scheme))
        else f"{scheme}://{host}:{port}"
    )


@bp.get("/oid4vp/dc-requests/<request_id>")
def dc_request(request_id: str) -> ResponseReturnValue:
    """The ``digital`` member for ``navigator.credentials.get`` (Appendix A.2).

    Unsigned: no ``client_id`` (it MUST be omitted) and no ``state`` (not defined for the DC
    API); the nonce and DCQL query are the presentation request's own. Signed: the same
    parameters with ``client_id`` and ``expected_origins``, as a Request Object.
    """
    request, verification = presentations.verification_of(parse_id(request_id))
    authorization = links().authorization_request(request, verification)
    claims = authorization.claims_set()
    data = {
        "response_type": "vp_token",
        "response_mode": "dc_api",
        "nonce": claims["nonce"],
        "dcql_query": claims["dcql_query"],
        "client_metadata": {
            key: value
            for key, value in claims["client_metadata"].items()
            if key not in ENCRYPTION_METADATA
        },
    }
    if "verifier_info" in claims:
        data["verifier_info"] = claims["verifier_info"]
    if not authorization.client.signed:
        return uncached({"requests": [{"protocol": PROTOCOL, "data": data}]})
    signed = {
        # RFC 9101 section 4: who signed it and for whom, as in the Request Objects fetched by
        # reference; expected_origins lets the wallet refuse a replay from another page.
        **{name: claims[name] for name in ("iss", "aud", "iat", "exp", "client_id")},
        "expected_origins": [own_origin()],
        **data,
    }
    token = authorization.client.request_object(signed)
    return uncached({"requests": [{"protocol": SIGNED_PROTOCOL, "data": {"request": token}}]})


@bp.post("/oid4vp/dc-responses/<request_id>")
def dc_response(request_id: str) -> ResponseReturnValue:
    """Decide the browser's answer like a ``direct_post`` one, bound to the page's origin.

    The Origin header must be this deployment's: the page that called the API posts here, so
    any other origin is a page elsewhere replaying a response (400, nothing consumed).
    """
    origin = own_origin()
    if request.headers.get("Origin") != origin:
        raise InvalidRequest(f"Origin must be {origin}", code="INVALID_ORIGIN")
    body = parse_body(DigitalCredentialData)

    def audience(_request: PresentationRequest) -> str:
        return f"origin:{origin}"

    def context(audience: str, nonce: str) -> Context:
        return trust_context(audience, nonce, origin=origin)

    received = presentations.receive(
        parse_id(request_id), None, json.dumps(body.vp_token), audience, context
    )
    return uncached(
        {
            "status": received.subject.status.value,
            "redirect_uri": person_page(received.subject, received.response_code),
        }
    )


def uncached(body: dict[str, Any]) -> Response:
    """Nonces and response codes are single-use: no cache may keep them."""
    response = jsonify(body)
    response.headers["Cache-Control"] = "no-store"
    return response
