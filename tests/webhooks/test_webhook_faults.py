"""Faults: the worker killed mid-delivery and restarted, the web process killed right after a
decision. Every event is still delivered; a duplicate carries the same ``webhook-id``.

The worker is the real command (``flask --app wsgi jobs worker``) in a process of its own,
on the same database and queue storage as the test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from config_for_tests import TEST_CONFIG
from factories import make_staff
from flask import Flask
from sqlalchemy import select
from webhook_support import (
    Person,
    add_endpoint,
    drain,
    environment,
    sweep,
    verification,
    wait_until,
)

from app import clock
from app.extensions import db
from app.jobs.queue import queue_of
from app.verifications.models import Individual, Status
from app.webhooks.models import DeliveryState, WebhookDelivery, WebhookEvent

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


class Worker:
    def __init__(self, app: Flask) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "wsgi", "jobs", "worker", "--threads", "1"],
            cwd=ROOT,
            env=environment(app),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)


@pytest.fixture
def workers(hooks_app) -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


def delivery_state(app: Flask) -> DeliveryState | None:
    with app.app_context():
        state = db.session.scalar(select(WebhookDelivery.state))
        db.session.remove()
        return state


def test_a_worker_killed_mid_delivery_is_replaced_and_the_event_delivered(
    hooks_app, receiver, workers
):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    receiver.hold_next = True  # the first delivery is held open while its worker is killed
    workers.append(Worker(hooks_app))
    Person(client, verification(client, staff), "crm-1").present()

    assert receiver.holding.wait(60), "the worker never delivered"
    workers[0].kill()
    receiver.release.set()
    assert delivery_state(hooks_app) == DeliveryState.PENDING  # the answer was never recorded

    workers.append(Worker(hooks_app))
    # The dead worker's lease runs out; the sweep frees it and hands the delivery over.
    later = datetime.now(UTC) + timedelta(minutes=2)
    clock.set_source(lambda: later)
    sweep(hooks_app)
    wait_until(lambda: delivery_state(hooks_app) == DeliveryState.DELIVERED, "the delivery")

    first, second = receiver.received
    assert first.webhook_id == second.webhook_id
    assert first.verified(endpoint["secret"]) == second.verified(endpoint["secret"])
    assert second.verified(endpoint["secret"])["type"] == "individual.verified"
    with hooks_app.app_context():
        row = db.session.scalar(select(WebhookDelivery))
        assert row.attempt_count == 1  # the killed attempt left no record; the second did


def test_the_worker_delivers_events_of_decisions_made_while_it_was_down(
    hooks_app, receiver, workers
):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url)
    people = [Person(client, verification(client, staff), f"crm-{n}") for n in range(3)]
    for person in people:
        person.present()
    workers.append(Worker(hooks_app))
    wait_until(lambda: len(receiver.received) >= 6, "six deliveries")
    workers[0].stop()

    received = [r.verified(endpoint["secret"]) for r in receiver.received]
    for person in people:
        mine = [p["type"] for p in received if p["data"]["id"] == person.id]
        assert mine == ["individual.requested", "individual.verified"]
    assert len({r.webhook_id for r in receiver.received}) == 6


def test_the_web_process_killed_right_after_a_decision_still_gets_its_event_delivered(
    hooks_app, receiver, db_settings
):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    person = Person(client, verification(client, staff), "crm-1")
    request, presentation = person.presentation()
    drain(hooks_app)  # the requested event's relay, so only what follows is in question

    config = {
        **TEST_CONFIG,
        **db_settings,
        "TRUST_ALLOW_PRIVATE": True,
        "CONNECT_LINK_SECONDS": 0,
        "JOBS_QUEUE_URL": hooks_app.config["JOBS_QUEUE_URL"],
        "JOBS_QUEUE_NAME": hooks_app.config["JOBS_QUEUE_NAME"],
    }
    answer = {
        "path": urlsplit(request.response_uri).path,
        "form": {
            "vp_token": json.dumps({"credential": [presentation]}),
            "state": request.state,
        },
    }
    died = subprocess.run(
        [sys.executable, str(HERE / "decide_then_die.py"), json.dumps(config)],
        input=json.dumps(answer),
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=120,
    )
    assert died.returncode == -signal.SIGKILL, died.stderr

    with hooks_app.app_context():
        individual = db.session.get(Individual, uuid.UUID(person.id))
        assert individual.status == Status.VERIFIED
        event = db.session.scalar(
            select(WebhookEvent).where(WebhookEvent.type == "individual.verified")
        )
        assert event is not None and event.dispatched_at is None
    assert queue_of(hooks_app).pending_count() == 0  # nothing was handed to the queue
    assert receiver.received == []

    sweep(hooks_app)  # what the worker's periodic sweep does every minute
    drain(hooks_app)
    [received] = receiver.received
    assert received.verified(endpoint["secret"])["data"]["id"] == person.id
    assert received.webhook_id == event.webhook_id
