"""gunicorn settings of the event stream server, which holds ``GET /events`` streams.

A stream stays open for as long as its client listens, mostly idle. On the web server's
synchronous workers each would hold a whole worker, and a few would leave none for the
person's pages. Here a stream holds one thread of a ``gthread`` worker (``EVENTS_THREADS``,
64 by default), and the web server's workers never see one: nginx routes ``/events`` here
(deploy/nginx/verity.conf), ``make run`` starts this server beside the web server on
``EVENTS_PORT``. Between its reads of the log a stream holds no database connection.

Everything else is the web server's (``gunicorn.conf.py``): the redacting access log, the
metrics directory, a control socket of its own named after the address it listens on.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "verity_gunicorn_conf", Path(__file__).resolve().with_name("gunicorn.conf.py")
)
assert _spec is not None and _spec.loader is not None
_web = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_web)

logger_class = _web.RedactingLogger
on_starting = _web.on_starting
child_exit = _web.child_exit
on_exit = _web.on_exit

worker_class = "gthread"
workers = 1
# At least two: a single-threaded worker says so (wsgi.multithread) and /events refuses it.
threads = max(int(os.environ.get("EVENTS_THREADS") or 64), 2)
# A stopping server does not wait for its streams: their clients reconnect elsewhere with
# Last-Event-ID and miss nothing.
graceful_timeout = 2
