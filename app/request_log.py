"""One structured log line per request (request id, method, redacted path, status, duration)
and, when metrics are on, its count and latency under its route."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from urllib.parse import parse_qsl, urlencode

from flask import Flask, Response, request

from app import metrics

log = logging.getLogger("verity.request")
# Query parameters that carry secrets: the integration key (the contract warns that query
# strings are logged), and the sign-in code and state on the OIDC callback.
# response_code lets the person's browser see a result; it is as secret as the result.
SECRET_PARAMETERS = {"apikey", "code", "state", "token", "response_code"}
REDACTED = "[redacted]"
# Path segments that are themselves secrets: a policy page's token (``/p/vp_...``) opens it.
SECRET_SEGMENTS = re.compile(r"^(/p/)[^/]+")
# Where the request's ID and start time ride along, in its WSGI environ.
ID_KEY = "verity.request_id"
STARTED_KEY = "verity.request_started"


def redacted_path(path: str, query_string: bytes) -> str:
    path = SECRET_SEGMENTS.sub(rf"\g<1>{REDACTED}", path)
    if not query_string:
        return path
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    safe = [(k, REDACTED if k.lower() in SECRET_PARAMETERS else v) for k, v in pairs]
    return f"{path}?{urlencode(safe, safe='[]')}"


def request_id(environ: dict) -> str:
    """The caller's ``X-Request-ID`` when it is a sane one, else a fresh random one."""
    incoming = environ.get("HTTP_X_REQUEST_ID", "")
    if 0 < len(incoming) <= 100 and incoming.isprintable():
        return incoming
    return os.urandom(8).hex()


def register_request_log(app: Flask) -> None:
    """Two hooks that every request runs, so they read the WSGI environ directly and touch
    each context-local proxy once (measured: each proxy lookup costs about a microsecond,
    and the stock header lookups several)."""
    logging_on = app.config["REQUEST_LOG"]
    # Counted only where a scrape can read them (METRICS_TOKEN set): otherwise nobody could.
    observe = metrics.observe_request if app.config["METRICS_TOKEN"] else None

    @app.before_request
    def start_timer() -> None:
        environ = request.environ
        environ[ID_KEY] = request_id(environ)
        environ[STARTED_KEY] = time.perf_counter()

    @app.after_request
    def write_line(response: Response) -> Response:
        current = request._get_current_object()  # type: ignore[attr-defined]
        environ = current.environ
        headers = response.headers
        identifier = environ.get(ID_KEY, "")
        headers["X-Request-ID"] = identifier
        if "X-Content-Type-Options" not in headers:
            headers["X-Content-Type-Options"] = "nosniff"
        if observe is not None:
            rule = current.url_rule
            seconds = time.perf_counter() - environ.get(STARTED_KEY, time.perf_counter())
            observe(
                rule.rule if rule is not None else None,
                current.method,
                response.status_code,
                seconds,
            )
        if logging_on:
            started = environ.get(STARTED_KEY, time.perf_counter())
            log.info(
                json.dumps(
                    {
                        "request_id": identifier,
                        "method": current.method,
                        "path": redacted_path(current.path, current.query_string),
                        "status": response.status_code,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    }
                )
            )
        return response
