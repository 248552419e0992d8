"""One structured log line per request (request id, method, redacted path, status, duration)
and, when metrics are on, its count and latency under its route."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from urllib.parse import parse_qsl, urlencode, urlsplit

from flask import Flask, Response, request

from app import metrics

log = logging.getLogger("verity.request")
# Query parameters that carry secrets: the integration key (the contract warns that query
# strings are logged), and the sign-in code and state on the OIDC callback.
# response_code lets the person's browser see a result; it is as secret as the result.
# _oob is a DIDComm invitation (``/didcomm/invitation`` and the scanner's ``/fetch`` of it):
# its id is a DIDComm offer's token, or a presentation request's ID. request_uri, on the
# issuer's authorization page, is the pushed authorization request the page continues.
SECRET_PARAMETERS = frozenset(
    {"apikey", "code", "state", "token", "response_code", "_oob", "request_uri", "customer_sig"}
)
REDACTED = "[redacted]"
# Path variables that are themselves secrets, whatever route carries them: a policy page's
# token opens it, an offer's token gives its pre-authorized code, an individual's ID gives a
# connect link, and a presentation request's ID gives its Request Object (nonce and state).
SECRET_VARIABLES = frozenset({"token", "individual_id", "request_id"})
# Every route with such a variable, as its blueprint writes it. One list for every log (the
# request log here, gunicorn's access log through gunicorn.conf.py); tests check that every
# route of the application with a secret variable is on it. A route matches with whatever
# follows it (``/o/<token>/status``), and under any method, also one that the route refuses.
SECRET_ROUTES = (
    "/p/<token>",
    "/o/<token>",
    "/issuers/<org_id>/offers/<token>",
    "/i/<individual_id>",
    "/verifications/<individual_id>/connect",
    "/verifications/<individual_id>/verify",
    "/oid4vp/requests/<request_id>",
    "/oid4vp/responses/<request_id>",
    "/oid4vp/dc-requests/<request_id>",
    "/oid4vp/dc-responses/<request_id>",
)
_VARIABLE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


def _route_pattern(route: str) -> re.Pattern[str]:
    """A route as a pattern whose groups are its secret segments."""
    parts, last = [], 0
    for variable in _VARIABLE.finditer(route):
        parts.append(re.escape(route[last : variable.start()]))
        secret = variable.group(1) in SECRET_VARIABLES
        parts.append("([^/]+)" if secret else "[^/]+")
        last = variable.end()
    parts.append(re.escape(route[last:]))
    return re.compile("^" + "".join(parts) + "(?=/|$)")


SECRET_PATTERNS = tuple(_route_pattern(route) for route in SECRET_ROUTES)


def _redact_path(path: str) -> str:
    for pattern in SECRET_PATTERNS:
        found = pattern.match(path)
        if found is not None:
            for index in reversed(range(1, (found.lastindex or 0) + 1)):
                path = path[: found.start(index)] + REDACTED + path[found.end(index) :]
            return path
    return path


# Where the request's ID and start time ride along, in its WSGI environ.
ID_KEY = "verity.request_id"
STARTED_KEY = "verity.request_started"


def redacted_path(path: str, query_string: bytes) -> str:
    path = _redact_path(path)
    if not query_string:
        return path
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    safe = [(k, REDACTED if k.lower() in SECRET_PARAMETERS else v) for k, v in pairs]
    return f"{path}?{urlencode(safe, safe='[]')}"


def redacted_uri(uri: str) -> str:
    """A request target or a full URL (a ``Referer``) with its secrets redacted."""
    parts = urlsplit(uri)
    target = redacted_path(parts.path, parts.query.encode("latin-1"))
    return f"{parts.scheme}://{parts.netloc}{target}" if parts.netloc else target


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
