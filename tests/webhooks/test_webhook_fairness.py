"""A slow receiver delays only its own organization: deliveries run on threads of their own,
apart from the scheduled jobs, and one organization holds a bounded number of them.

The worker is the real command (``flask --app wsgi jobs worker``) in a process of its own.
Organization A's endpoint answers a byte a second (a minute for the whole answer) under a
deadline longer than the test, so its attempts stay in flight throughout."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from factories import make_apikey, make_staff
from flask import Flask
from receiver import Receiver
from sqlalchemy import select
from support.slow_receiver import SlowReceiver
from webhook_support import Person, add_endpoint, environment, verification, wait_until

from app import jobs
from app.extensions import db
from app.webhooks.models import WebhookEvent

ROOT = Path(__file__).resolve().parents[2]


class DeliveryWorker:
    def __init__(self, app: Flask, *, delivery_threads: int, per_organization: int) -> None:
        env = {
            **environment(app),
            "WEBHOOK_TIMEOUT": "120",
            "WEBHOOK_DELIVERIES_PER_ORGANIZATION": str(per_organization),
        }
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "flask", "--app", "wsgi", "jobs", "worker"),
                *("--threads", "1", "--delivery-threads", str(delivery_threads)),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)


@pytest.fixture
def slow() -> Iterator[SlowReceiver]:
    receiver = SlowReceiver(interval=1.0)
    yield receiver
    receiver.close()


@pytest.fixture
def started(slow: SlowReceiver) -> Iterator[list[DeliveryWorker]]:
    workers: list[DeliveryWorker] = []
    yield workers
    slow.close()  # A's attempts end at once, so the worker stops without waiting them out
    for worker in workers:
        worker.stop()


def organization_a_waits_on(hooks_app: Flask, slow: SlowReceiver, events: int) -> None:
    client = hooks_app.test_client()
    staff = make_staff(hooks_app, email="a@example.test", org_name="A")
    add_endpoint(client, staff, slow.url, events=["individual.requested"])
    verification_id = verification(client, staff)
    for number in range(events):
        Person(client, verification_id, f"a-{number}").request()


def test_another_organizations_webhook_arrives_while_a_slow_endpoint_holds_deliveries(
    hooks_app: Flask, receiver: Receiver, slow: SlowReceiver, started: list[DeliveryWorker]
):
    started.append(DeliveryWorker(hooks_app, delivery_threads=3, per_organization=2))
    organization_a_waits_on(hooks_app, slow, events=4)
    slow.wait_for(2)

    client = hooks_app.test_client()
    staff_b = make_staff(hooks_app, email="b@example.test", org_name="B")
    endpoint_b = add_endpoint(client, staff_b, receiver.url, events=["individual.requested"])
    person_b = Person(client, verification(client, staff_b), "b-1")
    person_b.request()

    [arrived] = receiver.wait_for(1)
    assert arrived.verified(endpoint_b["secret"])["data"]["id"] == person_b.id
    # A's attempts are all still going: B did not wait for any of them to end, and A never
    # held more than its two deliveries although a third thread was there.
    assert slow.in_flight() == 2
    assert len(slow.connections) == 2


def test_scheduled_jobs_run_while_every_delivery_thread_waits_on_a_slow_endpoint(
    hooks_app: Flask, receiver: Receiver, slow: SlowReceiver, started: list[DeliveryWorker]
):
    started.append(DeliveryWorker(hooks_app, delivery_threads=2, per_organization=2))
    organization_a_waits_on(hooks_app, slow, events=3)
    slow.wait_for(2)  # both delivery threads are now held

    client = hooks_app.test_client()
    staff_b = make_staff(hooks_app, email="b@example.test", org_name="B")
    add_endpoint(client, staff_b, receiver.url, events=["policy_request.expired"])
    created = client.post(
        "/policy-requests",
        json={"verification_id": verification(client, staff_b), "expires_in": 1},
        headers={"apikey": make_apikey(hooks_app, staff_b.organization_id)},
    )
    assert created.status_code == 201, created.get_json()
    policy = created.get_json()
    expires_at = datetime.fromisoformat(policy["expires_at"])
    wait_until(lambda: datetime.now(UTC) > expires_at, "the policy request to lapse")

    with hooks_app.app_context():
        jobs.enqueue("policies.report_expired")  # what the schedule does every minute

    def reported() -> bool:
        with hooks_app.app_context():
            found = db.session.scalar(
                select(WebhookEvent.id).where(
                    WebhookEvent.subject_id == uuid.UUID(policy["id"]),
                    WebhookEvent.type == "policy_request.expired",
                )
            )
            db.session.remove()
            return found is not None

    wait_until(reported, "the expiry job to run")
    assert slow.in_flight() == 2  # the delivery threads were held all along
