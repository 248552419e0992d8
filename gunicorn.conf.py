"""gunicorn settings read by ``make run`` (and by gunicorn itself when started here).

Only the metrics need anything: with ``METRICS_TOKEN`` set, every worker counts into files
under ``PROMETHEUS_MULTIPROC_DIR`` so that a scrape sees the whole server, not one worker.
The master makes a temporary directory for them before the first worker starts (unless the
variable is already set), forgets each worker's live values when it exits, and removes the
directory when it stops.
"""

from __future__ import annotations

import os
import shutil
import tempfile

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
_made: list[str] = []


def on_starting(server):
    if os.environ.get("METRICS_TOKEN") and not os.environ.get(MULTIPROCESS_DIR):
        path = tempfile.mkdtemp(prefix="verity-metrics-")
        os.environ[MULTIPROCESS_DIR] = path
        _made.append(path)


def child_exit(server, worker):
    if os.environ.get(MULTIPROCESS_DIR):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    for path in _made:
        shutil.rmtree(path, ignore_errors=True)
