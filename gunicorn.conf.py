"""gunicorn settings read by ``make run`` (and by gunicorn itself when started here).

The metrics: with ``METRICS_TOKEN`` set, every worker counts into files under
``PROMETHEUS_MULTIPROC_DIR`` so that a scrape sees the whole server, not one worker. The
master makes a temporary directory for them before the first worker starts (unless the
variable is already set), forgets each worker's live values when it exits, and removes the
directory when it stops.

The control socket (gunicorn 25.1+, for ``gunicornc``): gunicorn's default is one path for
every server a user runs ($XDG_RUNTIME_DIR/gunicorn.ctl or ~/.gunicorn/gunicorn.ctl), so a
second server takes it over and stopping either removes it for both. Unless one is given
(``--control-socket``, as deploy/cluster.py gives each instance), a server gets its own,
named after the address it listens on, in ``instance/run/``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
RUN_DIR = Path(__file__).resolve().parent / "instance" / "run"
_made: list[str] = []


def control_socket_for(bind: list[str]) -> Path:
    """One path per listening address: two servers cannot listen on the same one."""
    return RUN_DIR / ("gunicorn-" + re.sub(r"[^A-Za-z0-9.-]+", "_", "-".join(bind)) + ".ctl")


def own_control_socket(server) -> None:
    # Imported here: every module-level name of this file is read as a gunicorn setting.
    from gunicorn import config

    gunicorn_default = getattr(getattr(config, "ControlSocket", None), "default", None)
    if gunicorn_default is None or server.cfg.control_socket_disable:
        return  # a gunicorn without control sockets, or told to open none
    if server.cfg.control_socket == gunicorn_default:
        server.cfg.set("control_socket", str(control_socket_for(server.cfg.bind)))


def on_starting(server):
    own_control_socket(server)
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
