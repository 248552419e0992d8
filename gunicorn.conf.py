"""gunicorn settings read by ``make run`` (and by gunicorn itself when started here).

The access log (off unless ``--access-logfile`` is given) redacts the same secrets as the
request log: secret path segments and query parameters in the request line, the path, the
query and the ``Referer`` (a person's page polls its status with the page, token and all, as
referrer), and the headers that carry credentials, should a format name them.

The metrics need more: with ``METRICS_TOKEN`` set, every worker counts into files
under ``PROMETHEUS_MULTIPROC_DIR`` so that a scrape sees the whole server, not one worker.
The master makes a temporary directory for them before the first worker starts (unless the
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

from gunicorn.glogging import Logger

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
RUN_DIR = Path(__file__).resolve().parent / "instance" / "run"
_made: list[str] = []
CREDENTIAL_HEADERS = ("{apikey}i", "{authorization}i", "{cookie}i", "{dpop}i")


class RedactingLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        # Imported here, in the worker: the master must not import the application (and with
        # it prometheus_client) before on_starting has chosen the metrics directory.
        from app.request_log import REDACTED, redacted_uri

        atoms = super().atoms(resp, req, environ, request_time)
        target = redacted_uri(environ.get("RAW_URI") or environ.get("PATH_INFO", ""))
        path, _, query = target.partition("?")
        atoms["r"] = f"{environ['REQUEST_METHOD']} {target} {environ['SERVER_PROTOCOL']}"
        atoms["U"], atoms["q"] = path, query
        if atoms.get("f", "-") != "-":
            atoms["f"] = atoms["{referer}i"] = redacted_uri(atoms["f"])
        for header in CREDENTIAL_HEADERS:
            if header in atoms:
                atoms[header] = REDACTED
        return atoms


logger_class = RedactingLogger


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
