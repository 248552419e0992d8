"""``flask --app wsgi jobs worker``: the process that runs queued and periodic jobs."""

from __future__ import annotations

import logging

import click
from flask import current_app
from flask.cli import AppGroup

from app.jobs.queue import queue_of

jobs_cli = AppGroup("jobs", help="The background job queue.")


@jobs_cli.command("worker")
@click.option("--threads", default=2, show_default=True, help="Jobs run at once.")
def worker(threads: int) -> None:
    """Run queued jobs and the periodic schedule until stopped (SIGINT or SIGTERM)."""
    logging.getLogger("huey").setLevel(logging.INFO)
    consumer = queue_of(current_app).huey.create_consumer(
        workers=threads, worker_type="thread", periodic=True, check_worker_health=True
    )
    consumer.run()


@jobs_cli.command("run-pending")
def run_pending() -> None:
    """Run the jobs waiting in the queue once, in this process, and exit."""
    click.echo(queue_of(current_app).run_pending())
