"""Where wallets answer: OpenID4VP 1.0 ``direct_post`` (§8.2) and ``direct_post.jwt`` (§8.3.1).

The deployment's verifier identity (client identifier prefix, response encryption) is settled
here when the blueprint is registered, so a misconfigured certificate stops the application
from starting instead of producing requests every wallet refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, current_app, request
from flask.blueprints import BlueprintSetupState

from app import clock
from app.api.common import base_url, json_response, parse_id
from app.errors import InvalidRequest
from app.oid4vp.client import (
    ClientConfigError,
    ClientIdentity,
    RedirectUriClient,
    load_x509_san_dns_client,
)
from app.oid4vp.encryption import ResponseEncryption, ResponseError
from app.oid4vp.verifier import Verifier
from app.policies.models import PolicyRequest
from app.policies.tokens import policy_token
from app.presentations import operations as presentations
from app.presentations.decide import Context
from app.verifications.models import PresentationRequest
from app.verifications.operations import VERIFIER_EXTENSION, Links

bp = Blueprint("wallet", __name__)


@bp.record_once
def load_verifier(state: BlueprintSetupState) -> None:
    state.app.extensions[VERIFIER_EXTENSION] = verifier_from_config(state.app.config)


def verifier_from_config(config: dict[str, Any]) -> Verifier:
    """``x509_san_dns:`` when a certificate and key are configured, else ``redirect_uri:``;
    encrypted responses when ``RESPONSE_ENCRYPTION`` is on (keys derived from SECRET_KEY)."""
    encryption = None
    if config.get("RESPONSE_ENCRYPTION"):
        encryption = ResponseEncryption(str(config["SECRET_KEY"]).encode("utf-8"))
    return Verifier(client_from_config(config), encryption)


def client_from_config(config: dict[str, Any]) -> ClientIdentity:
    cert_file = config.get("REQUEST_SIGNING_CERT_FILE") or ""
    key_file = config.get("REQUEST_SIGNING_KEY_FILE") or ""
    if not cert_file and not key_file:
        return RedirectUriClient()
    if not cert_file or not key_file:
        raise RuntimeError(
            "REQUEST_SIGNING_CERT_FILE and REQUEST_SIGNING_KEY_FILE must be set together"
        )
    try:
        chain_pem, key_pem = Path(cert_file).read_bytes(), Path(key_file).read_bytes()
    except OSError as exc:
        raise RuntimeError(f"Request signing files cannot be read: {exc}") from None
    try:
        return load_x509_san_dns_client(
            chain_pem, key_pem, config.get("PUBLIC_URL", ""), clock.now()
        )
    except ClientConfigError as exc:
        raise RuntimeError(
            f"REQUEST_SIGNING_CERT_FILE / REQUEST_SIGNING_KEY_FILE: {exc} "
            f"(PUBLIC_URL is {config.get('PUBLIC_URL')!r})"
        ) from None


def trust_context(audience: str, nonce: str) -> Context:
    """The deployment's trust settings for one decision."""
    config = current_app.config
    return Context(
        audience=audience,
        nonce=nonce,
        now=clock.now(),
        fetcher=current_app.extensions["fetcher"],
        anchors=current_app.extensions["trust_anchors"],
        status_fail_open=config["STATUS_FAIL_OPEN"],
    )


def person_page(subject, code: str) -> str:
    """Back to the person's page, with the code that lets that browser see the result."""
    if isinstance(subject, PolicyRequest):
        path = f"/p/{policy_token(current_app.config['SECRET_KEY'], subject.id)}"
    else:
        path = f"/i/{subject.id}"
    return f"{base_url()}{path}?response_code={code}"


@bp.post("/oid4vp/responses/<request_id>")
def direct_post(request_id: str):
    """``vp_token`` and ``state``, or an encrypted ``response``; a failed check is still 200."""
    links = Links(base_url())
    presentation_request_id = parse_id(request_id)
    try:
        # Read (and decrypt) before anything is consumed: a refusal here changes nothing.
        answer = links.verifier.read_response(request.form, str(presentation_request_id))
    except ResponseError as exc:
        raise InvalidRequest(exc.reason, code="INVALID_RESPONSE") from None

    def audience(presentation_request: PresentationRequest) -> str:
        # The key binding's aud is the full client ID, prefix included (OpenID4VP 1.0 §14.1.2).
        return links.client_id(presentation_request.id)

    received = presentations.receive(
        presentation_request_id, answer.state, answer.vp_token, audience, trust_context
    )
    return json_response({"redirect_uri": person_page(received.subject, received.response_code)})
