"""A delivery attempt has a total deadline, and its error says what failed, never the address
the endpoint's host resolved to. Read through the delivery log of the API."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

import pytest
from factories import make_staff
from flask import Flask
from sqlalchemy import select
from support.slow_receiver import SlowReceiver
from webhook_support import Person, add_endpoint, drain, queue_url, verification

from app.extensions import db
from app.jobs.queue import queue_of
from app.webhooks import delivery
from app.webhooks.models import WebhookDelivery

DEADLINE = 1.0


@pytest.fixture
def deadline_app(make_app, tmp_path: Path):
    app = make_app(
        TRUST_ALLOW_PRIVATE=True,
        WEBHOOK_TIMEOUT=DEADLINE,
        JOBS_QUEUE_URL=queue_url(tmp_path),
        JOBS_QUEUE_NAME=f"verity-test-{os.getpid()}-{uuid.uuid4().hex[:8]}",
    )
    yield app
    queue_of(app).flush()


@pytest.fixture
def slow_receiver():
    receiver = SlowReceiver(interval=1.0)
    yield receiver
    receiver.close()


def delivery_log(client, staff, endpoint_id: str) -> list[dict]:
    listed = client.get(f"/webhooks/endpoints/{endpoint_id}/deliveries", headers=staff.headers())
    assert listed.status_code == 200, listed.get_json()
    return listed.get_json()["results"]


def test_a_receiver_dribbling_its_answer_is_cut_off_at_the_deadline(
    deadline_app: Flask, slow_receiver: SlowReceiver
):
    client = deadline_app.test_client()
    staff = make_staff(deadline_app)
    endpoint = add_endpoint(client, staff, slow_receiver.url, events=["individual.requested"])
    Person(client, verification(client, staff), "crm-slow").request()

    drain(deadline_app)  # the relay, then the attempt, in this process

    [connection] = slow_receiver.wait_until_ended(1)
    # A byte a second would take the whole answer many deadlines; the sender hung up first.
    assert slow_receiver.whole_answer_takes > 20 * DEADLINE
    assert connection.cut_off and not connection.finished
    assert connection.sent < 20
    [logged] = delivery_log(client, staff, endpoint["id"])
    assert logged["state"] == "PENDING"  # retried later, like any failed attempt
    assert logged["attempts"] == 1
    assert logged["last_status_code"] is None
    assert logged["last_error"] == "No answer within 1 s"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_names_the_host_not_the_address(deadline_app: Flask):
    client = deadline_app.test_client()
    staff = make_staff(deadline_app)
    url = f"http://localhost:{closed_port()}/hooks"
    endpoint = add_endpoint(client, staff, url, events=["individual.requested"])
    Person(client, verification(client, staff), "crm-refused").request()

    drain(deadline_app)

    [logged] = delivery_log(client, staff, endpoint["id"])
    assert logged["state"] == "PENDING"
    assert logged["last_error"] == "Connection refused by localhost"


def test_a_host_resolving_to_a_refused_address_is_logged_without_the_address(
    make_app, app: Flask, tmp_path: Path
):
    """Without the development setting a host that resolves to loopback is refused; the log
    says so in words, and does not tell whoever registered the name where it leads."""
    from app.webhooks import settings
    from app.webhooks.models import WebhookEndpoint
    from app.webhooks.sealing import new_secret, seal

    client = app.test_client()
    staff = make_staff(app)
    with app.app_context():
        # Stored as an endpoint added before creation refused localhost: a delivery checks
        # the address again, whatever was stored.
        endpoint = WebhookEndpoint(
            organization_id=uuid.UUID(staff.organization_id),
            url="https://localhost:1/hooks",
            events=["individual.requested"],
            sealed_secret=seal(new_secret(), settings.current().kek),
        )
        db.session.add(endpoint)
        db.session.commit()
        endpoint_id = str(endpoint.id)
    Person(client, verification(client, staff), "crm-internal").request()
    with app.app_context():
        delivery.relay()
        [row] = db.session.scalars(
            select(WebhookDelivery.id).where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint_id))
        )
        delivery.deliver(row)

    [logged] = delivery_log(client, staff, endpoint_id)
    assert (
        logged["last_error"] == "Refused to deliver to localhost: it resolves to a loopback address"
    )
    assert "127.0.0.1" not in logged["last_error"] and "::1" not in logged["last_error"]
