"""Where wallets answer: OpenID4VP 1.0 ``direct_post`` (§8.2) and ``direct_post.jwt`` (§8.3.1).

The verifier identity that reads responses is the one that made the request's link: the
organization's own certificate when the request was made under it, else the deployment's
(``app.deployment``).
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, current_app, request

from app import clock
from app.api.common import json_response, parse_id
from app.api.zk_answers import zk_door
from app.errors import InvalidRequest
from app.issuance.own import own_issuers
from app.oid4vp.encryption import ResponseError
from app.presentations import operations as presentations
from app.presentations import zk_checks
from app.presentations.decide import Context
from app.verifications.models import PresentationRequest, PresentationSubject
from app.web.links import links as deployment_links
from app.web.requests import base_url

bp = Blueprint("wallet", __name__)


def trust_context(audience: str, nonce: str, **binding: Any) -> Context:
    """The deployment's trust settings for one decision; ``binding`` is what an mdoc's
    session transcript holds of the request (``Context``). The deployment's own issuers are
    those under the base URL its credentials are issued at (``PUBLIC_URL``, as
    ``app.issuance.links`` builds them)."""
    config = current_app.config
    return Context(
        audience=audience,
        nonce=nonce,
        **binding,
        now=clock.now(),
        fetcher=current_app.extensions["fetcher"],
        anchors=current_app.extensions["trust_anchors"],
        status_fail_open=config["STATUS_FAIL_OPEN"],
        own_issuers=own_issuers(base_url()),
        prism=current_app.extensions["prism"],
    )


def person_page(subject: PresentationSubject, code: str) -> str:
    """Back to the person's page, with the code that lets that browser see the result."""
    return deployment_links().person_page(subject, response_code=code)


@bp.post("/oid4vp/responses/<request_id>")
def direct_post(request_id: str):
    """``vp_token`` and ``state``, or an encrypted ``response``; a failed check is still 200.

    The answer of a zero-knowledge verification passes its door (``zk_answers``) before its
    body is read, and is kept for the job worker that checks its proof: the wallet is answered
    at once, and the person's page shows the outcome when it is decided.
    """
    links = deployment_links()
    presentation_request_id = parse_id(request_id)

    def audience(presentation_request: PresentationRequest) -> str:
        # The key binding's aud is the full client ID, prefix included (OpenID4VP 1.0 §14.1.2).
        return links.client_id(presentation_request)

    def binding(client_id: str) -> dict[str, Any]:
        return {
            "client_id": client_id,
            "response_uri": links.response_uri(presentation_request_id),
            "response_jwk": links.verifier.response_jwk(str(presentation_request_id)),
        }

    def context(client_id: str, nonce: str) -> Context:
        return trust_context(client_id, nonce, **binding(client_id))

    if presentations.asks_zk(presentation_request_id):
        with zk_door():
            answer = _read_response(links, presentation_request_id)
            kept = zk_checks.receive(
                presentation_request_id, answer.state, answer.vp_token, audience, binding
            )
        return json_response({"redirect_uri": person_page(kept.subject, kept.response_code)})
    answer = _read_response(links, presentation_request_id)
    received = presentations.receive(
        presentation_request_id, answer.state, answer.vp_token, audience, context
    )
    return json_response({"redirect_uri": person_page(received.subject, received.response_code)})


def _read_response(links: Any, presentation_request_id: uuid.UUID) -> Any:
    """Read (and decrypt) before anything is consumed: a refusal here changes nothing."""
    try:
        return links.verifier.read_response(request.form, str(presentation_request_id))
    except ResponseError as exc:
        raise InvalidRequest(exc.reason, code="INVALID_RESPONSE") from None
