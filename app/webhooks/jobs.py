"""The webhook jobs on the queue: relay the outbox, attempt a delivery, sweep every minute.

Relaying and delivering run on the deliveries queue, apart from the scheduled jobs; the sweep
only reads and writes the database, so it is scheduled with the housekeeping."""

from __future__ import annotations

import uuid

from app import jobs
from app.webhooks import delivery
from app.webhooks.outbox import DELIVER_JOB, RELAY_JOB

SWEEP_JOB = "webhooks.sweep"


@jobs.job(name=RELAY_JOB, queue=jobs.DELIVERIES)
def relay() -> None:
    delivery.enqueue_deliveries(delivery.relay())


@jobs.job(name=DELIVER_JOB, queue=jobs.DELIVERIES)
def deliver(delivery_id: str) -> None:
    delivery.enqueue_deliveries(delivery.deliver(uuid.UUID(delivery_id)))


@jobs.periodic(jobs.crontab(minute="*"), name=SWEEP_JOB)
def sweep() -> None:
    delivery.enqueue_deliveries(delivery.sweep())
