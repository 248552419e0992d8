"""The dashboard's webhooks: endpoints the organization's backend receives signed events at.

A signing secret exists in clear only in the response that made it (adding an endpoint,
rotating its secret): the page that shows it is the POST's own response, never a redirect, a
flash or a URL, as with integration keys. Everything else (which URLs and events are allowed,
what disabling and replaying do) is the webhooks domain's.
"""

from __future__ import annotations

from typing import Any

from flask import render_template, request, url_for
from flask.typing import ResponseReturnValue

from app.errors import ApiError, InvalidRequest
from app.organizations.models import Organization
from app.staff.blueprint import bp, navigate
from app.staff.page_kit import finished, form_values, refusal
from app.web import shown_once
from app.web.access import acting_organization, require_staff, tier_gated, upgrade_prompt
from app.web.paging import page_args, pager
from app.web.requests import parse_id
from app.webhooks import operations as hooks
from app.webhooks import settings as hooks_settings
from app.webhooks.exchange import KEPT_BYTES, redact_url
from app.webhooks.models import WebhookEndpoint
from app.webhooks.outbox import EVENT_TYPES

GATED_ACTION = "Adding a webhook endpoint"
MAX_DESCRIPTION = 500

# What each event type means, for the checkboxes.
EVENT_WORDS = {
    "individual.requested": "a person was handed a connection link",
    "individual.verified": "a person's credential passed",
    "individual.failed": "a person's credential did not pass",
    "individual.revoked": "a verified person's credential was revoked later",
    "policy_request.verified": "a policy request passed",
    "policy_request.failed": "a policy request did not pass",
    "policy_request.expired": "a policy request expired unanswered",
    "credential.offered": "a credential was offered to a recipient",
    "credential.issued": "a recipient's wallet took a credential",
    "credential.revoked": "an issued credential was revoked",
}
assert set(EVENT_WORDS) == set(EVENT_TYPES)

EMPTY_FORM: dict[str, Any] = {"url": "", "description": "", "events": [], "include_claims": False}


def webhooks_page(organization: Organization, status: int = 200, **extra: Any):
    page = render_template(
        "staff/webhooks/index.html",
        rows=hooks.list_endpoints(organization),
        upgrade=upgrade_prompt(organization, GATED_ACTION),
        values=extra.pop("values", EMPTY_FORM),
        event_words=EVENT_WORDS,
        allow_private=hooks_settings.current().allow_private,
        **extra,
    )
    return page, status


def submitted() -> dict[str, Any]:
    values: dict[str, Any] = form_values(("url", "description"))
    values["events"] = [e for e in request.form.getlist("events") if e]
    values["include_claims"] = request.form.get("include_claims") == "on"
    return values


@bp.get("/webhooks")
@require_staff
def webhooks() -> ResponseReturnValue:
    """The endpoints and the form to add one; on the Free plan the form gives way to the
    upgrade text. Right after adding one, its signing secret, this once."""
    return webhooks_page(acting_organization(), **shown_once.take("webhooks"))


@bp.post("/webhooks")
@require_staff
@tier_gated(GATED_ACTION)
def webhooks_create() -> ResponseReturnValue:
    """Add an endpoint and show its signing secret once, on the page this redirects to
    (tier-gated)."""
    organization = acting_organization()
    values = submitted()
    try:
        if len(values["description"]) > MAX_DESCRIPTION:
            raise InvalidRequest(f"Description is longer than {MAX_DESCRIPTION} characters")
        created = hooks.create_endpoint(
            organization,
            values["url"],
            events=values["events"],
            description=values["description"],
            include_claims=values["include_claims"],
        )
    except ApiError as exc:
        message, status = refusal(exc)
        return webhooks_page(organization, status, values=values, error=message)
    endpoint = created.endpoint
    shown_once.keep_for_next_page(
        "webhooks", created={"id": str(endpoint.id), "url": endpoint.url}, secret=created.secret
    )
    return navigate(url_for("staff.webhooks"))


def the_endpoint(endpoint_id: str) -> WebhookEndpoint:
    return hooks.get_endpoint(acting_organization(), parse_id(endpoint_id))


def endpoint_page(endpoint: WebhookEndpoint, status: int = 200, **extra: Any):
    """The endpoint, what can be done with it, and its deliveries newest first."""
    offset, limit = page_args()
    rows, total = hooks.list_deliveries(acting_organization(), endpoint.id, offset, limit)
    page = render_template(
        "staff/webhooks/detail.html",
        endpoint=endpoint,
        deliveries=rows,
        attempts={row.id: hooks.attempts_of(row) for row in rows},
        event_words=EVENT_WORDS,
        pages=pager("staff.webhooks_detail", offset, limit, total, endpoint_id=endpoint.id),
        **extra,
    )
    return page, status


@bp.get("/webhooks/<endpoint_id>")
@require_staff
def webhooks_detail(endpoint_id: str) -> ResponseReturnValue:
    """One endpoint with its delivery log: each delivery's state and response codes; right
    after a rotation, the new secret, this once."""
    endpoint = the_endpoint(endpoint_id)
    return endpoint_page(endpoint, **shown_once.take(f"webhook:{endpoint.id}"))


@bp.post("/webhooks/<endpoint_id>/rotate")
@require_staff
def webhooks_rotate(endpoint_id: str) -> ResponseReturnValue:
    """A new secret, shown once on the page this redirects to; the old one signs too for a day."""
    endpoint = the_endpoint(endpoint_id)
    rotated = hooks.rotate_secret(acting_organization(), endpoint.id)
    shown_once.keep_for_next_page(f"webhook:{endpoint.id}", secret=rotated.secret)
    return navigate(url_for("staff.webhooks_detail", endpoint_id=endpoint.id))


@bp.post("/webhooks/<endpoint_id>/disable")
@require_staff
def webhooks_disable(endpoint_id: str) -> ResponseReturnValue:
    """No more deliveries until enabled again."""
    endpoint = the_endpoint(endpoint_id)
    hooks.set_enabled(acting_organization(), endpoint.id, False)
    return finished(
        "Endpoint disabled: nothing more is sent to it.",
        "staff.webhooks_detail",
        endpoint_id=endpoint.id,
    )


@bp.post("/webhooks/<endpoint_id>/enable")
@require_staff
def webhooks_enable(endpoint_id: str) -> ResponseReturnValue:
    """New events are sent to it again."""
    endpoint = the_endpoint(endpoint_id)
    hooks.set_enabled(acting_organization(), endpoint.id, True)
    return finished(
        "Endpoint enabled: new events are sent to it.",
        "staff.webhooks_detail",
        endpoint_id=endpoint.id,
    )


@bp.post("/webhooks/<endpoint_id>/test")
@require_staff
def webhooks_test(endpoint_id: str) -> ResponseReturnValue:
    """Queue a ``webhook.test`` event for this endpoint only; its delivery appears below."""
    endpoint = the_endpoint(endpoint_id)
    hooks.send_test_event(acting_organization(), endpoint.id)
    return finished(
        "Test event queued: its delivery and the endpoint's answer appear below.",
        "staff.webhooks_detail",
        endpoint_id=endpoint.id,
    )


@bp.get("/webhooks/<endpoint_id>/deliveries/<delivery_id>")
@require_staff
def webhooks_delivery(endpoint_id: str, delivery_id: str) -> ResponseReturnValue:
    """One delivery and each attempt: the request sent and the response received, headers
    and the first 4 KiB of each body (secrets redacted), or the error."""
    endpoint = the_endpoint(endpoint_id)
    delivery = hooks.get_delivery(acting_organization(), endpoint.id, parse_id(delivery_id))
    return render_template(
        "staff/webhooks/delivery.html",
        endpoint=endpoint,
        delivery=delivery,
        attempts=hooks.attempts_of(delivery),
        kept_bytes=KEPT_BYTES,
        shown_url=redact_url(endpoint.url),
    )


@bp.post("/webhooks/<endpoint_id>/deliveries/<delivery_id>/replay")
@require_staff
def webhooks_replay(endpoint_id: str, delivery_id: str) -> ResponseReturnValue:
    """Send one delivery again, with the same ``webhook-id`` (receivers de-duplicate by it)."""
    endpoint = the_endpoint(endpoint_id)
    # Handed to the queue once this request commits.
    delivery = hooks.replay_delivery(acting_organization(), endpoint.id, parse_id(delivery_id))
    if request.form.get("back") == "delivery":
        return finished(
            "Delivery queued to be sent again.",
            "staff.webhooks_delivery",
            endpoint_id=endpoint.id,
            delivery_id=delivery.id,
        )
    return finished(
        "Delivery queued to be sent again.", "staff.webhooks_detail", endpoint_id=endpoint.id
    )


@bp.get("/webhooks/<endpoint_id>/delete")
@require_staff
def webhooks_confirm_delete(endpoint_id: str) -> ResponseReturnValue:
    """Without JavaScript, the confirmation ``hx-confirm`` would have asked for."""
    return render_template("staff/webhooks/delete.html", endpoint=the_endpoint(endpoint_id))


@bp.post("/webhooks/<endpoint_id>/delete")
@require_staff
def webhooks_delete(endpoint_id: str) -> ResponseReturnValue:
    """Its pending deliveries are dropped with it."""
    endpoint = the_endpoint(endpoint_id)
    url = endpoint.url
    hooks.delete_endpoint(acting_organization(), endpoint.id)
    return finished(f"Endpoint {url} deleted.", "staff.webhooks")
