"""OpenID4VP over the W3C Digital Credentials API (OpenID4VP 1.0 Appendix A).

The person's page fetches the request, hands it to ``navigator.credentials.get`` and posts
back what the browser returned. Without a certificate the request is unsigned and the browser,
not a client identifier, vouches for the verifier; with one it is signed (Appendix A.3.2, JWS
Compact Serialization) under the deployment's client identifier and names the page's origin
in ``expected_origins``. Either way the wallet binds the presentation to the page's Origin, so
the key binding's ``aud`` is ``origin:<origin>`` (Appendix A.4, "even for signed requests")
and only this deployment's own origin is accepted.

Answers are encrypted by default (``response_mode`` ``dc_api.jwt``, Appendix A.3): the request
offers a P-256 key of its own in ``client_metadata.jwks`` and the wallet returns ``{"response":
"<JWE>"}`` (ECDH-ES), so the page's script and the browser carry nothing they can read.
``DC_API_RESPONSE_MODE=dc_api`` offers plain answers instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel

from app.api.common import base_url, parse_body, parse_id
from app.api.wallet import person_page, trust_context
from app.api.zk_answers import zk_door
from app.deployment import READER_EXTENSION, REGISTRAR_EXTENSION
from app.errors import InvalidRequest
from app.mdoc import MdocError
from app.mdoc.annex_c import PROTOCOL as ISO_MDOC_PROTOCOL
from app.oid4vp.encryption import ResponseError
from app.oid4vp.formats import MSO_MDOC
from app.presentations import iso_mdoc, zk_checks
from app.presentations import operations as presentations
from app.presentations.decide import Context
from app.verifications.models import PresentationRequest, Verification
from app.verifier_identity import google_wallet
from app.verifier_identity.google_wallet import GoogleWalletSigner
from app.web.links import links

bp = Blueprint("dc_api", __name__)

# Appendix A.1: version 1, unsigned request (all parameters passed as members of ``data``), or
# signed (one JWS in ``data.request``).
PROTOCOL = "openid4vp-v1-unsigned"
SIGNED_PROTOCOL = "openid4vp-v1-signed"
DEFAULT_PORTS = {"http": 80, "https": 443}
# Response encryption metadata (OpenID4VP 1.0 §8.3): the direct_post.jwt link's key is never
# the one offered over the API, which has its own (``dc_api.jwt``) or none (plain ``dc_api``).
ENCRYPTION_METADATA = ("jwks", "encrypted_response_enc_values_supported")
# §8.3 and HAIP 1.0: both content encryptions are offered; the wallet picks one.
DC_API_ENC_VALUES = ("A128GCM", "A256GCM")


class BrowserAnswer(BaseModel):
    """What the page posts: the DigitalCredential as the browser returned it, ``{"protocol",
    "data"}`` (``data.response`` for org-iso-mdoc and ``dc_api.jwt``, ``data.vp_token`` for
    plain ``dc_api``), or the older body, the data alone (``{"vp_token"}``)."""

    protocol: str | None = None
    data: dict[str, Any] | None = None
    vp_token: Any = None
    response: Any = None


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
    parameters with ``client_id`` and ``expected_origins``, as a Request Object. An answered
    or expired request is refused (400 ``ALREADY_ANSWERED`` / ``REQUEST_EXPIRED``), so its
    org-iso-mdoc recipient key is never derived again. With a Google Wallet registrar CA the
    signed request is the organization's registrar leaf's (``x509_hash``), with its
    ``client_metadata.gw_rp_metadata_bytes``, the metadata that leaf binds.
    """
    request, verification = presentations.open_verification_of(parse_id(request_id))
    deployment = links()
    authorization = deployment.authorization_request(request, verification)
    google = google_wallet_signer(verification)
    if google is not None:
        # A registration certificate names the subject of the organization's own access
        # certificate; a request signed with the Google Wallet leaf carries none.
        authorization = replace(authorization, client=google.client, verifier_info=())
    claims = authorization.claims_set()
    verifier = deployment.verifier
    data = {
        "response_type": "vp_token",
        "response_mode": verifier.dc_api_response_mode,
        "nonce": claims["nonce"],
        "dcql_query": claims["dcql_query"],
        "client_metadata": dc_api_client_metadata(
            claims["client_metadata"], verifier.dc_api_jwk(str(request.id))
        ),
    }
    if google is not None:
        data["client_metadata"]["gw_rp_metadata_bytes"] = google.metadata_b64
    for optional in ("verifier_info", "transaction_data"):
        if optional in claims:
            data[optional] = claims[optional]
    # Every protocol the verification can use, in one list: the browser offers each wallet
    # the one it speaks (Safari and Apple Wallet only org-iso-mdoc).
    iso_mdoc = iso_mdoc_request(request, verification)
    if not authorization.client.signed:
        return uncached({"requests": [{"protocol": PROTOCOL, "data": data}, *iso_mdoc]})
    signed = {
        # RFC 9101 section 4: who signed it and for whom, as in the Request Objects fetched by
        # reference; expected_origins lets the wallet refuse a replay from another page.
        **{name: claims[name] for name in ("iss", "aud", "iat", "exp", "client_id")},
        "expected_origins": [own_origin()],
        **data,
    }
    token = authorization.client.request_object(signed)
    return uncached(
        {"requests": [{"protocol": SIGNED_PROTOCOL, "data": {"request": token}}, *iso_mdoc]}
    )


def google_wallet_signer(verification: Verification) -> GoogleWalletSigner | None:
    """With a Google Wallet registrar CA, the organization's leaf (issued when first needed or
    when its metadata changed); None without the CA, while the metadata is incomplete, or for
    an intermediary's verification made for another relying party (the leaf binds the
    organization's own name, which the wallet must not show for that party's request)."""
    registrar = current_app.extensions.get(REGISTRAR_EXTENSION)
    if registrar is None or verification.relying_party is not None:
        return None
    return google_wallet.signer_for(verification.organization, registrar)


def dc_api_client_metadata(metadata: dict[str, Any], jwk: dict[str, Any] | None) -> dict[str, Any]:
    """The link's ``client_metadata`` with the API's own response key, if any (§5.1, §8.3:
    ``jwks`` with the key's ``kid`` and ``alg``, and the content encryptions offered)."""
    kept = {key: value for key, value in metadata.items() if key not in ENCRYPTION_METADATA}
    if jwk is None:
        return kept
    return {
        **kept,
        "jwks": {"keys": [jwk]},
        "encrypted_response_enc_values_supported": list(DC_API_ENC_VALUES),
    }


def iso_mdoc_request(
    request: PresentationRequest, verification: Verification
) -> list[dict[str, Any]]:
    """The ``org-iso-mdoc`` request (ISO/IEC 18013-7 Annex C) of an ``mso_mdoc`` verification."""
    rules = presentations.rules_for(verification)
    if rules.credential.format != MSO_MDOC or rules.credential.zk:
        # No public text defines a zero-knowledge request over Annex C (ISO 18013-5's second
        # edition ``zkRequest`` is not published): a ZK verification is asked over OpenID4VP.
        return []
    annex_c = iso_mdoc.annex_c_request(
        request.id,
        request.nonce,
        rules,
        retained=verification.retention_days > 0,
        origin=own_origin(),
        secret=recipient_secret(),
        reader=current_app.extensions.get(READER_EXTENSION),
    )
    return [{"protocol": ISO_MDOC_PROTOCOL, "data": annex_c.as_data()}]


def recipient_secret() -> bytes:
    """What the org-iso-mdoc recipient keys derive from, as direct_post.jwt's keys do."""
    return str(current_app.config["SECRET_KEY"]).encode("utf-8")


@bp.post("/oid4vp/dc-responses/<request_id>")
def dc_response(request_id: str) -> ResponseReturnValue:
    """Decide the browser's answer like a ``direct_post`` one, bound to the page's origin.

    The Origin header must be this deployment's: the page that called the API posts here, so
    any other origin is a page elsewhere replaying a response (400, nothing consumed). The
    answer of a zero-knowledge verification passes its door first (``zk_answers``: 503 without
    the extra, 429 ``ZK_BUSY`` while the deployment's checks wait at capacity, the client's
    ``ZK_ANSWER_LIMIT``, bodies up to ``ZK_MAX_ANSWER_BYTES``), and is kept for the job worker
    that checks its proof: 202 with ``checking``, and the page's poll shows the outcome.
    """
    origin = own_origin()
    if request.headers.get("Origin") != origin:
        raise InvalidRequest(f"Origin must be {origin}", code="INVALID_ORIGIN")
    presentation_request_id = parse_id(request_id)
    if not presentations.asks_zk(presentation_request_id):
        return _answer(presentation_request_id, origin)
    with zk_door():  # a full deployment refuses first: the cheapest answer to a flood
        kept = _keep_zk_answer(presentation_request_id, origin)
    body = {
        "status": kept.subject.status.value,
        "checking": True,
        "redirect_uri": person_page(kept.subject, kept.response_code),
    }
    return uncached(body), 202


def _audience(origin: str) -> Callable[[PresentationRequest], str]:
    def audience(_request: PresentationRequest) -> str:
        return f"origin:{origin}"

    return audience


def _keep_zk_answer(presentation_request_id: uuid.UUID, origin: str) -> zk_checks.Received:
    answer = parse_body(BrowserAnswer)
    if answer.protocol == ISO_MDOC_PROTOCOL:
        raise InvalidRequest(
            "A zero-knowledge proof is answered over OpenID4VP, not org-iso-mdoc",
            code="INVALID_RESPONSE",
        )
    vp_token = _openid4vp_token(answer, presentation_request_id)
    response_jwk = links().verifier.dc_api_jwk(str(presentation_request_id))

    def binding(_audience: str) -> dict[str, Any]:
        return {"origin": origin, "response_jwk": response_jwk}

    return zk_checks.receive(presentation_request_id, None, vp_token, _audience(origin), binding)


def _openid4vp_token(answer: BrowserAnswer, presentation_request_id: uuid.UUID) -> str:
    """The ``vp_token`` of an OpenID4VP answer, decrypted: a refusal here changes nothing."""
    data = answer.data or {}
    if answer.protocol is None:
        # The older body: the DigitalCredential's data alone.
        data = {"vp_token": answer.vp_token, "response": answer.response}
    try:
        return links().verifier.read_dc_api_response(data, str(presentation_request_id))
    except ResponseError as exc:
        raise InvalidRequest(exc.reason, code="INVALID_RESPONSE") from None


def _answer(presentation_request_id: uuid.UUID, origin: str) -> ResponseReturnValue:
    audience = _audience(origin)
    answer = parse_body(BrowserAnswer)
    if answer.protocol == ISO_MDOC_PROTOCOL:
        received = _receive_iso_mdoc(
            presentation_request_id, (answer.data or {}).get("response"), origin, audience
        )
    else:
        vp_token = _openid4vp_token(answer, presentation_request_id)
        response_jwk = links().verifier.dc_api_jwk(str(presentation_request_id))

        def context(audience: str, nonce: str) -> Context:
            # Appendix B.2.6.2: an mdoc's transcript names the key the response was sealed to.
            return trust_context(audience, nonce, origin=origin, response_jwk=response_jwk)

        received = presentations.receive(presentation_request_id, None, vp_token, audience, context)
    return uncached(
        {
            "status": received.subject.status.value,
            "redirect_uri": person_page(received.subject, received.response_code),
        }
    )


def _receive_iso_mdoc(
    request_id: uuid.UUID,
    response: Any,
    origin: str,
    audience: Callable[[PresentationRequest], str],
) -> presentations.Received:
    """Open the sealed DeviceResponse for a pending request, then decide it as any mdoc.

    A response that does not open (sealed to another key, for another origin or EncryptionInfo,
    or changed) is 400 and consumes nothing, as an undecryptable direct_post.jwt is.
    """
    pending = presentations.read_pending(request_id, None, audience)
    try:
        entry, transcript = iso_mdoc.opened_presentation(
            pending.request_id, pending.nonce, response, origin=origin, secret=recipient_secret()
        )
    except MdocError as exc:
        raise InvalidRequest(exc.reason, code="INVALID_RESPONSE") from None
    context = trust_context(
        pending.audience,
        pending.nonce,
        origin=origin,
        session_transcript=transcript,
        asked_elements=iso_mdoc.element_pairs(pending.rules),
    )
    return presentations.decide_and_record(pending, entry, context)


def uncached(body: dict[str, Any]) -> Response:
    """Nonces and response codes are single-use: no cache may keep them."""
    response = jsonify(body)
    response.headers["Cache-Control"] = "no-store"
    return response
