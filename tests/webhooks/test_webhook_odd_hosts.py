"""A host that IDNA maps onto another, and an attempt that fails in a way no rule foresaw.

``ⓛocalhost`` is ``localhost`` once mapped (IDNA with UTS #46, as every delivery names it):
registration judges and keeps that form. An endpoint stored before that (or any attempt that
raises an error outside the fetcher's own) is a failed attempt with its reason, and its lease
is freed, so it never holds one of its organization's delivery slots."""

from __future__ import annotations

import uuid

from factories import make_staff
from sqlalchemy import select
from webhook_support import Person, add_endpoint, verification

from app.extensions import db
from app.webhooks import delivery, settings
from app.webhooks.models import DeliveryState, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from app.webhooks.sealing import new_secret, seal


def test_a_host_that_maps_onto_localhost_is_refused_like_localhost(app, client):
    staff = make_staff(app)
    response = client.post(
        "/webhooks/endpoints", json={"url": "https://ⓛocalhost:8443/x"}, headers=staff.headers()
    )
    body = response.get_json()
    assert (response.status_code, body["code"]) == (400, "INVALID_REQUEST"), body
    assert "ⓛocalhost (localhost), a loopback address" in body["error"]
    assert client.get("/webhooks/endpoints", headers=staff.headers()).get_json()["results"] == []


def test_a_host_is_kept_as_deliveries_name_it(hooks_app, receiver):
    """In development (loopback allowed) the endpoint is kept under its mapped host, and the
    deliveries reach it there."""
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    odd = f"http://ⓛocalhost:{receiver.port}/hooks?k=1"
    endpoint = add_endpoint(client, staff, odd, events=["individual.verified"])
    assert endpoint["url"] == f"http://localhost:{receiver.port}/hooks?k=1"
    Person(client, verification(client, staff), "crm-1").present()
    with hooks_app.app_context():
        delivery.relay()
        [row] = db.session.scalars(select(WebhookDelivery))
        delivery.deliver(row.id)
        db.session.refresh(row)
        assert row.state == DeliveryState.DELIVERED
    [received] = receiver.received
    assert received.verified(endpoint["secret"])["type"] == "individual.verified"


def test_an_attempt_that_raises_is_recorded_and_frees_the_organizations_slot(
    make_app, hooks_app, receiver
):
    """One delivery in flight per organization: the one whose URL the HTTP library refuses to
    send (stored before registration mapped hosts) records a failed attempt with its reason,
    and the organization's next delivery goes out."""
    app = make_app(
        TRUST_ALLOW_PRIVATE=True,
        WEBHOOK_DELIVERIES_PER_ORGANIZATION=1,
        JOBS_QUEUE_URL=hooks_app.config["JOBS_QUEUE_URL"],
        JOBS_QUEUE_NAME=hooks_app.config["JOBS_QUEUE_NAME"],
    )
    client = app.test_client()
    staff = make_staff(app)
    with app.app_context():
        odd = WebhookEndpoint(
            organization_id=uuid.UUID(staff.organization_id),
            url=f"http://ⓛocalhost:{receiver.port}/hooks",
            events=["individual.verified"],
            sealed_secret=seal(new_secret(), settings.current().kek),
        )
        db.session.add(odd)
        db.session.commit()
        odd_id = odd.id
    good = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    Person(client, verification(client, staff), "crm-1").present()
    with app.app_context():
        delivery.relay()
        rows = {row.endpoint_id: row for row in db.session.scalars(select(WebhookDelivery))}
        stuck, waiting = rows[odd_id], rows[uuid.UUID(good["id"])]
        assert delivery.deliver(stuck.id) == [waiting.id]  # the slot is free at once

        db.session.refresh(stuck)
        assert stuck.state == DeliveryState.PENDING  # retried later, like any failed attempt
        assert (stuck.attempt_count, stuck.leased_until) == (1, None)
        assert stuck.next_attempt_at is not None
        assert "could not be sent" in stuck.last_error and "InvalidURL" in stuck.last_error
        [attempt] = db.session.scalars(
            select(WebhookAttempt).where(WebhookAttempt.delivery_id == stuck.id)
        )
        assert attempt.error == stuck.last_error and attempt.status_code is None

        delivery.deliver(waiting.id)
        db.session.refresh(waiting)
        assert waiting.state == DeliveryState.DELIVERED
    [received] = receiver.received
    assert received.verified(good["secret"])["type"] == "individual.verified"
