"""One structured log line per request: request id, method, redacted path, status, duration."""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from urllib.parse import parse_qsl, urlencode

from flask import Flask, Response, g, request

log = logging.getLogger("verity.request")
# Query parameters that carry secrets: the integration key (INTERFACE.md 5.1 warns that query
# strings are logged), and the sign-in code and state on the OIDC callback.
# response_code lets the person's browser see a result; it is as secret as the result.
SECRET_PARAMETERS = {"apikey", "code", "state", "token", "response_code"}
REDACTED = "[redacted]"
# Path segments that are themselves secrets: a policy page's token (``/p/vp_...``) opens it.
SECRET_SEGMENTS = re.compile(r"^(/p/)[^/]+")


def redacted_path(path: str, query_string: bytes) -> str:
    path = SECRET_SEGMENTS.sub(rf"\g<1>{REDACTED}", path)
    if not query_string:
        return path
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    safe = [(k, REDACTED if k.lower() in SECRET_PARAMETERS else v) for k, v in pairs]
    return f"{path}?{urlencode(safe, safe='[]')}"


def register_request_log(app: Flask) -> None:
    @app.before_request
    def start_timer() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = (
            incoming
            if 0 < len(incoming) <= 100 and incoming.isprintable()
            else secrets.token_hex(8)
        )
        g.request_started = time.perf_counter()

    @app.after_request
    def write_line(response: Response) -> Response:
        response.headers["X-Request-ID"] = g.get("request_id", "")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        if app.config["REQUEST_LOG"]:
            started = g.get("request_started", time.perf_counter())
            log.info(
                json.dumps(
                    {
                        "request_id": g.get("request_id"),
                        "method": request.method,
                        "path": redacted_path(request.path, request.query_string),
                        "status": response.status_code,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    }
                )
            )
        return response
