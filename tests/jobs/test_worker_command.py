"""``flask --app wsgi jobs worker``: one process works every queue (deliveries, the
schedule's housekeeping, the CSV uploads and the DIDComm agent's work), each on threads of its own, and stops them together. Started the
way ``deploy/cluster.py`` starts it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from config_for_tests import TEST_CONFIG
from flask import Flask

from app import jobs
from app.jobs.queue import queue_of
from deploy import cluster

ROOT = Path(__file__).resolve().parents[2]


def worker_environment(app: Flask) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "JOBS_QUEUE_URL": app.config["JOBS_QUEUE_URL"],
        "JOBS_QUEUE_NAME": app.config["JOBS_QUEUE_NAME"],
        "SECRET_KEY": TEST_CONFIG["SECRET_KEY"],
        "ISSUER_KEY_SECRET": TEST_CONFIG["ISSUER_KEY_SECRET"],
        "REQUEST_LOG": "0",
    }


def test_one_worker_runs_every_queue_and_stops_them_together(make_app, tmp_path: Path):
    # The worker's own SQLite database: the jobs below find nothing to do in an empty one.
    database = f"sqlite:///{tmp_path / 'worker.sqlite3'}"
    subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database},
        check=True,
        capture_output=True,
        timeout=120,
    )
    app = make_app(
        JOBS_QUEUE_URL=f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
        JOBS_QUEUE_NAME=f"worker-{uuid.uuid4().hex[:8]}",
    )
    with app.app_context():
        jobs.enqueue("policies.report_expired")  # housekeeping
        jobs.enqueue("webhooks.relay")  # deliveries
        jobs.enqueue("uploads.issue", str(uuid.uuid4()))  # uploads: none by that ID
        jobs.enqueue("didcomm.handle", "")  # didcomm: not a message, dropped
        jobs.enqueue("zk.check", str(uuid.uuid4()))  # zk: no such check, nothing to do
    queue = queue_of(app)
    assert {name: huey.pending_count() for name, huey in queue.hueys.items()} == {
        jobs.HOUSEKEEPING: 1,
        jobs.DELIVERIES: 1,
        jobs.UPLOADS: 1,
        jobs.DIDCOMM: 1,
        jobs.ZK: 1,
    }

    # Started as deploy/cluster.py starts each instance's worker (and as `make run` does).
    worker = cluster.launch_worker(
        "jobs", {**worker_environment(app), "DATABASE_URL": database}, tmp_path / "worker.log"
    )
    try:
        end = time.monotonic() + 60
        while queue.pending_count() and time.monotonic() < end:
            time.sleep(0.1)
        assert queue.pending_count() == 0, worker.log()
    finally:
        worker.stop()  # SIGTERM to its process group
    output = worker.log()
    assert worker.process.returncode == 0, output
    assert output.count("Huey consumer started with 2 thread") == 2, output  # housekeeping, uploads
    assert output.count("Huey consumer started with 4 thread") == 2, output  # deliveries, didcomm
    assert "Traceback" not in output
