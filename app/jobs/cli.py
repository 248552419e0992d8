"""``flask --app wsgi jobs worker``: the process that runs queued and periodic jobs."""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

import click
from flask import current_app
from flask.cli import AppGroup
from huey.consumer import Consumer

from app import jobs
from app.jobs.queue import queue_of

jobs_cli = AppGroup("jobs", help="The background job queue.")

# Seconds between checks that every worker thread is alive (a dead one is replaced).
HEALTH_CHECK_SECONDS = 10.0
# How long a stop waits for running jobs to finish: past a delivery's deadline.
STOP_SECONDS = 30.0


@jobs_cli.command("worker")
@click.option(
    "--threads", default=2, show_default=True, help="Housekeeping jobs (the schedule) at once."
)
@click.option(
    "--delivery-threads", default=4, show_default=True, help="Webhook deliveries at once."
)
@click.option("--upload-threads", default=2, show_default=True, help="CSV uploads issued at once.")
@click.option(
    "--didcomm-threads",
    default=4,
    show_default=True,
    help="DIDComm messages handled and sent at once.",
)
@click.option(
    "--zk-threads",
    default=None,
    type=int,
    help="Zero-knowledge answers checked at once  [default: ZK_VERIFY_WORKERS]",
)
def worker(
    threads: int,
    delivery_threads: int,
    upload_threads: int,
    didcomm_threads: int,
    zk_threads: int | None,
) -> None:
    """Run queued jobs and the periodic schedule until stopped (SIGINT or SIGTERM).

    Each queue gets threads of its own, so a delivery waiting on a slow receiver never holds
    a thread the scheduled jobs need, and a DIDComm message to a mediator that never answers
    never holds a webhook delivery's; all stop together.
    """
    logging.getLogger("huey").setLevel(logging.INFO)
    queue = queue_of(current_app)
    sizes = {
        jobs.HOUSEKEEPING: threads,
        jobs.DELIVERIES: delivery_threads,
        jobs.UPLOADS: upload_threads,
        jobs.DIDCOMM: didcomm_threads,
        # One thread per proof worker process: each waits on its proof, holding no CPU.
        jobs.ZK: zk_threads or current_app.config["ZK_VERIFY_WORKERS"],
    }
    consumers = [
        queue.hueys[name].create_consumer(
            workers=max(size, 1),
            worker_type="thread",
            periodic=True,
            check_worker_health=True,
            shutdown_timeout=STOP_SECONDS,
        )
        for name, size in sizes.items()
    ]
    run_until_signalled(consumers)


def run_until_signalled(consumers: list[Consumer]) -> None:
    """Start every consumer, keep their threads alive, stop them all on SIGINT or SIGTERM.

    Huey's own ``Consumer.run`` drives one consumer and takes the signals for itself; here one
    handler stops every queue's consumer, so no queue outlives the others.
    """
    stopping = threading.Event()
    for consumer in consumers:
        consumer.start()

    def stop(*_: Any) -> None:
        stopping.set()

    # Installed after the consumers' own handlers, which each would stop one consumer only.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    while not stopping.wait(HEALTH_CHECK_SECONDS):
        for consumer in consumers:
            consumer.check_worker_health()
    for consumer in consumers:
        consumer.stop_flag.set()  # every queue stops taking jobs at once
    for consumer in consumers:
        consumer.stop(graceful=True)


@jobs_cli.command("run-pending")
def run_pending() -> None:
    """Run the jobs waiting in the queue once, in this process, and exit."""
    click.echo(queue_of(current_app).run_pending())
