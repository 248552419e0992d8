"""Webhook endpoints of the acting organization and their delivery log (session token).

Not to be confused with ``app.api.webhooks``, which receives the payment processor's events;
these are the endpoints this service sends its own events to. Creating one is tier-gated like
integration keys; its signing secret is in the creating response only.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from flask import Blueprint, current_app, has_request_context
from pydantic import Field

from app.api import render
from app.api.common import (
    PAGING_QUERY,
    documented,
    json_response,
    list_args,
    listing,
    parse_body,
    parse_id,
    refuse_unknown_args,
)
from app.issuance.links import IssuerLinks
from app.web.access import acting_organization, require_session, tier_gated
from app.web.links import links
from app.web.payloads.base import Body, Out, Text
from app.webhooks import operations as webhooks
from app.webhooks.outbox import EVENT_TYPES, Rendered, provide_renderer

bp = Blueprint("webhook_endpoints", __name__)

EventType = Literal[EVENT_TYPES]  # type: ignore[valid-type]


class WebhookEndpointIn(Body):
    url: str = Field(min_length=1, max_length=webhooks.MAX_URL_LENGTH)
    events: list[EventType] = Field(  # type: ignore[valid-type]
        default_factory=list, description="Event types to receive; empty or absent: all."
    )
    description: str = Text
    include_claims: bool = Field(
        default=False, description="Send disclosed claims in events (off: outcomes only)."
    )


class WebhookEndpointOut(Out):
    id: uuid.UUID
    url: str
    events: list[str]
    description: str
    include_claims: bool
    enabled: bool
    disabled_reason: str | None
    created_at: datetime


class WebhookEndpointCreated(WebhookEndpointOut):
    secret: str = Field(
        description="The signing secret (whsec_...). Shown once; stored sealed, never shown again."
    )


class WebhookEndpointList(Out):
    results: list[WebhookEndpointOut]
    total: int


class WebhookDeliveryOut(Out):
    id: uuid.UUID
    event_id: uuid.UUID
    webhook_id: str
    type: str
    state: Literal["PENDING", "DELIVERED", "FAILED"]
    attempts: int
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime


class WebhookRequestOut(Out):
    method: str
    url: str = Field(description="The endpoint's URL, every query value read as [redacted].")
    headers: dict[str, str] = Field(
        description="Every header sent; authentication and secret-named ones read as "
        "[redacted] (webhook-signature is shown: it signs this body only)."
    )
    body: str | None = Field(
        description="The first 4 KiB of the body; null once the claims it carried were "
        "deleted (retention)."
    )
    body_cut: bool = Field(description="The body was longer than the 4 KiB shown.")


class WebhookResponseOut(Out):
    status_code: int
    headers: dict[str, str] = Field(
        description="As received; Set-Cookie, Authorization and secret-named ones [redacted]."
    )
    headers_cut: bool = Field(description="Headers past the first 4 KiB were left out.")
    body: str = Field(description="The first 4 KiB of the body, as text.")
    body_cut: bool = Field(description="The body was longer than the 4 KiB shown.")


class WebhookAttemptOut(Out):
    id: uuid.UUID
    started_at: datetime
    duration_ms: int
    status_code: int | None
    error: str | None = Field(
        description="Why no answer came: timeout, connection refused, TLS, ... (by host name)."
    )
    request: WebhookRequestOut | None = Field(
        description="What was sent; null for attempts made before requests were kept."
    )
    response: WebhookResponseOut | None = Field(description="What was answered; null if none.")


class WebhookDeliveryDetail(WebhookDeliveryOut):
    attempt_log: list[WebhookAttemptOut] = Field(
        description="Each attempt, oldest first, with its request and response."
    )


class WebhookDeliveryList(Out):
    results: list[WebhookDeliveryOut]
    total: int


@bp.get("/webhooks/endpoints")
@require_session
@documented(
    "Webhook endpoints of the acting organization (secrets are never shown again)",
    responses={200: WebhookEndpointList},
    tags=("webhooks",),
)
def list_endpoints():
    refuse_unknown_args()
    rows = webhooks.list_endpoints(acting_organization())
    return json_response(listing(rows, len(rows), render.webhook_endpoint))


@bp.post("/webhooks/endpoints")
@require_session
@tier_gated("Adding a webhook endpoint")
@documented(
    "Add a webhook endpoint (tier-gated; its signing secret is shown once)",
    body=WebhookEndpointIn,
    responses={201: WebhookEndpointCreated},
    tags=("webhooks",),
)
def create_endpoint():
    """The only response that ever contains the signing secret."""
    body = parse_body(WebhookEndpointIn)
    created = webhooks.create_endpoint(
        acting_organization(),
        body.url,
        events=list(body.events),
        description=body.description,
        include_claims=body.include_claims,
    )
    return json_response(
        {**render.webhook_endpoint(created.endpoint), "secret": created.secret}, 201
    )


@bp.delete("/webhooks/endpoints/<endpoint_id>")
@require_session
@documented(
    "Delete a webhook endpoint; its pending deliveries are dropped",
    responses={204: None},
    tags=("webhooks",),
)
def delete_endpoint(endpoint_id: str):
    webhooks.delete_endpoint(acting_organization(), parse_id(endpoint_id))
    return "", 204


@bp.post("/webhooks/endpoints/<endpoint_id>/test")
@require_session
@documented(
    "Send a test event (type webhook.test) to this endpoint only, signed like any other; "
    "its delivery shows in the endpoint's deliveries",
    responses={202: WebhookDeliveryOut},
    tags=("webhooks",),
)
def send_test_event(endpoint_id: str):
    """Queued once this request commits; 202 with the delivery to follow."""
    delivery = webhooks.send_test_event(acting_organization(), parse_id(endpoint_id))
    return json_response(render.webhook_delivery(delivery), 202)


@bp.get("/webhooks/endpoints/<endpoint_id>/deliveries")
@require_session
@documented(
    "An endpoint's deliveries, newest first: state, attempts, last response code",
    responses={200: WebhookDeliveryList},
    query=PAGING_QUERY,
    tags=("webhooks",),
)
def list_deliveries(endpoint_id: str):
    offset, limit = list_args()
    rows, total = webhooks.list_deliveries(
        acting_organization(), parse_id(endpoint_id), offset, limit
    )
    return json_response(listing(rows, total, render.webhook_delivery))


@bp.get("/webhooks/endpoints/<endpoint_id>/deliveries/<delivery_id>")
@require_session
@documented(
    "One delivery with every attempt: the request sent and the response received (headers "
    "and the first 4 KiB of each body, secrets redacted), or the error",
    responses={200: WebhookDeliveryDetail},
    tags=("webhooks",),
)
def show_delivery(endpoint_id: str, delivery_id: str):
    """Another organization's delivery reads as missing, like an unknown one."""
    refuse_unknown_args()
    delivery = webhooks.get_delivery(
        acting_organization(), parse_id(endpoint_id), parse_id(delivery_id)
    )
    attempts = webhooks.attempts_of(delivery)
    return json_response(render.webhook_delivery_with_attempts(delivery, attempts))


# -- how records appear in events -------------------------------------------------------------


def _individual(row: Any) -> Rendered:
    """As the authenticated lookup returns it; the claims apart."""
    data = render.individual_for_owner(row, links() if has_request_context() else None)
    claims = data.pop("claims")
    return Rendered(data, claims)


def _policy_request(row: Any) -> Rendered:
    data = render.policy_status(row)
    return Rendered(data, data.pop("claims"))


def _credential(row: Any) -> Rendered:
    data = render.credential(row, IssuerLinks(current_app.config["PUBLIC_URL"]))
    return Rendered(data, data.pop("claims"))


def provide_renderers() -> None:
    """Called by the application factory: events carry records in their API shapes."""
    provide_renderer("individual", _individual)
    provide_renderer("policy_request", _policy_request)
    provide_renderer("credential", _credential)
