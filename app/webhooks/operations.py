"""Webhook endpoints: registered, listed, rotated, disabled, deleted; their delivery log.

The signing secret is returned once, by the call that made it (creation or rotation), and
stored sealed. Another organization's endpoint reads as missing, like an unknown one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import func, select

from app import clock
from app.errors import InvalidRequest, NotFound
from app.extensions import db
from app.organizations.models import Organization
from app.trust.fetch import host_problem, normalized_host
from app.webhooks import settings
from app.webhooks.models import (
    DeliveryState,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from app.webhooks.outbox import EVENT_TYPES, deliver_after_commit
from app.webhooks.sealing import new_secret, open_sealed, seal

# After a rotation the previous secret keeps signing this long beside the new one.
ROTATION_OVERLAP = timedelta(hours=24)
MAX_URL_LENGTH = 2000


@dataclass(frozen=True)
class CreatedEndpoint:
    endpoint: WebhookEndpoint
    secret: str  # shown once


# The setting is spelled as everywhere else (the settings reference, the tutorials): ``=1``.
# The example is a receiver of its own, never Verity's own port (8000 is ``make run``'s).
DEVELOPMENT_HINT = (
    "For development, set TRUST_ALLOW_PRIVATE=1 to allow http:// and private addresses "
    "such as http://127.0.0.1:9000/hooks"
)


def check_url(url: str) -> str:
    """https only (plain http too where outbound fetches may reach private addresses, the
    development setting). The host is normalized as every delivery names it (IDNA with
    UTS #46 mapping: ``ⓛocalhost`` is ``localhost``) and the URL kept in that form; a URL the
    deliveries would refuse by that host alone (an address that is not public,
    ``localhost``) is refused now, by the outbound fetcher's own rules, rather than accepted
    and failed for days; a name is checked on every delivery, when it is resolved."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidRequest("Webhook url is not a valid URL") from exc
    allow_private = settings.current().allow_private
    allowed = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in allowed or not parts.hostname:
        hint = "" if allow_private else f". {DEVELOPMENT_HINT}"
        raise InvalidRequest(f"Webhook url must be an https:// URL{hint}")
    if parts.username is not None or parts.password is not None:
        raise InvalidRequest("Webhook url must not carry a user name or password")
    try:
        host = normalized_host(parts.hostname)
    except ValueError:
        raise InvalidRequest(
            f"Webhook url's host {parts.hostname} is not a valid domain name"
        ) from None
    shown = parts.hostname if host == parts.hostname else f"{parts.hostname} ({host})"
    problem = None if allow_private else host_problem(host)
    if problem:
        raise InvalidRequest(
            f"Webhook url points at {shown}, {problem}: deliveries go only to public "
            f"addresses. {DEVELOPMENT_HINT}"
        )
    if host != parts.hostname:
        netloc = f"[{host}]" if ":" in host else host
        url = urlunsplit(parts._replace(netloc=netloc if port is None else f"{netloc}:{port}"))
    if len(url) > MAX_URL_LENGTH:
        raise InvalidRequest(f"Webhook url is longer than {MAX_URL_LENGTH} characters")
    return url


def check_events(events: list[str]) -> list[str]:
    unknown = sorted(set(events) - set(EVENT_TYPES))
    if unknown:
        raise InvalidRequest(
            f"Unknown event types: {', '.join(unknown)} (known: {', '.join(EVENT_TYPES)})"
        )
    return list(dict.fromkeys(events))


def create_endpoint(
    organization: Organization,
    url: str,
    events: list[str] | None = None,
    description: str = "",
    include_claims: bool = False,
) -> CreatedEndpoint:
    """Tier-gating is the caller's (the API and the dashboard both gate creation)."""
    secret = new_secret()
    endpoint = WebhookEndpoint(
        organization_id=organization.id,
        url=check_url(url),
        events=check_events(events or []),
        description=description.strip(),
        include_claims=include_claims,
        sealed_secret=seal(secret, settings.current().kek),
        enabled=True,
    )
    db.session.add(endpoint)
    db.session.flush()
    return CreatedEndpoint(endpoint, secret)


def list_endpoints(organization: Organization) -> list[WebhookEndpoint]:
    return list(
        db.session.scalars(
            select(WebhookEndpoint)
            .where(WebhookEndpoint.organization_id == organization.id)
            .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
        )
    )


def get_endpoint(organization: Organization, endpoint_id: uuid.UUID) -> WebhookEndpoint:
    endpoint = db.session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or endpoint.organization_id != organization.id:
        raise NotFound()
    return endpoint


def delete_endpoint(organization: Organization, endpoint_id: uuid.UUID) -> None:
    """Its deliveries (pending ones too) go with it."""
    db.session.delete(get_endpoint(organization, endpoint_id))
    db.session.flush()


def rotate_secret(organization: Organization, endpoint_id: uuid.UUID) -> CreatedEndpoint:
    """A new secret signs from now on; the current one also signs for ``ROTATION_OVERLAP``,
    so a receiver can switch to the new one without refusing a delivery."""
    endpoint = get_endpoint(organization, endpoint_id)
    secret = new_secret()
    endpoint.previous_sealed_secret = endpoint.sealed_secret
    endpoint.previous_secret_expires_at = clock.now() + ROTATION_OVERLAP
    endpoint.sealed_secret = seal(secret, settings.current().kek)
    db.session.flush()
    return CreatedEndpoint(endpoint, secret)


def set_enabled(organization: Organization, endpoint_id: uuid.UUID, enabled: bool) -> None:
    """Disabling stops deliveries (the pending ones give up); enabling takes new events."""
    endpoint = get_endpoint(organization, endpoint_id)
    endpoint.enabled = enabled
    endpoint.disabled_at = None if enabled else clock.now()
    endpoint.disabled_reason = None if enabled else "Disabled by a member of the organization"
    db.session.flush()


def signing_secrets(endpoint: WebhookEndpoint) -> list[str]:
    """The secrets a delivery is signed with now: the current one, and the previous one while
    its overlap lasts."""
    kek = settings.current().kek
    found = [open_sealed(endpoint.sealed_secret, kek)]
    if (
        endpoint.previous_sealed_secret is not None
        and endpoint.previous_secret_expires_at is not None
        and endpoint.previous_secret_expires_at > clock.now()
    ):
        found.append(open_sealed(endpoint.previous_sealed_secret, kek))
    return found


def list_deliveries(
    organization: Organization, endpoint_id: uuid.UUID, offset: int = 0, limit: int = 50
) -> tuple[list[WebhookDelivery], int]:
    """Newest first, each with its event."""
    endpoint = get_endpoint(organization, endpoint_id)
    where = WebhookDelivery.endpoint_id == endpoint.id
    total = db.session.scalar(select(func.count()).select_from(WebhookDelivery).where(where))
    rows = db.session.scalars(
        select(WebhookDelivery)
        .where(where)
        .order_by(WebhookDelivery.event_sequence.desc())
        .offset(offset)
        .limit(limit)
    )
    return list(rows), total or 0


def get_delivery(
    organization: Organization, endpoint_id: uuid.UUID, delivery_id: uuid.UUID
) -> WebhookDelivery:
    """One delivery of one of the organization's endpoints; any other reads as missing."""
    endpoint = get_endpoint(organization, endpoint_id)
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.endpoint_id != endpoint.id:
        raise NotFound()
    return delivery


def attempts_of(delivery: WebhookDelivery) -> list[WebhookAttempt]:
    return list(
        db.session.scalars(
            select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id == delivery.id)
            .order_by(WebhookAttempt.started_at, WebhookAttempt.id)
        )
    )


def replay_delivery(
    organization: Organization, endpoint_id: uuid.UUID, delivery_id: uuid.UUID
) -> WebhookDelivery:
    """Send a delivery again (same ``webhook-id``), whatever became of it: it is handed to the
    queue when the caller's transaction commits. A replay of an event older than the retry
    window is tried once."""
    delivery = get_delivery(organization, endpoint_id, delivery_id)
    # Through the record rather than an UPDATE statement, so the audit trail sees the replay.
    delivery.state = DeliveryState.PENDING
    delivery.next_attempt_at = clock.now()
    delivery.leased_until = None
    delivery.delivered_at = None
    db.session.flush()
    deliver_after_commit(delivery.id)
    return delivery


TEST_EVENT = "webhook.test"


def send_test_event(organization: Organization, endpoint_id: uuid.UUID) -> WebhookDelivery:
    """A ``webhook.test`` event for this endpoint only, signed and delivered like any other
    (its attempts show on the endpoint's deliveries); handed to the queue on commit.

    The event is written already dispatched, so the relay never fans it out to the
    organization's other endpoints."""
    endpoint = get_endpoint(organization, endpoint_id)
    now = clock.now()
    event = WebhookEvent(
        organization_id=organization.id,
        type=TEST_EVENT,
        subject_id=endpoint.id,
        data={
            "endpoint_id": str(endpoint.id),
            "message": "A test event: the endpoint is reached and can check the signature.",
        },
        created_at=now,
        dispatched_at=now,
    )
    db.session.add(event)
    db.session.flush()
    delivery = WebhookDelivery(
        event_sequence=event.sequence,
        endpoint_id=endpoint.id,
        subject_id=endpoint.id,
        state=DeliveryState.PENDING,
        next_attempt_at=now,
        created_at=now,
    )
    db.session.add(delivery)
    db.session.flush()
    deliver_after_commit(delivery.id)
    return delivery
