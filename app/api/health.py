"""Liveness, readiness, the API description and the metrics."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, request, url_for
from sqlalchemy import text

from app import metrics as counted
from app.api import openapi
from app.api.common import documented, json_response
from app.errors import ApiError
from app.extensions import db
from app.tokens import hash_secret, same
from app.web.access import bearer_token
from app.web.payloads.base import HealthOut
from app.web.requests import base_url

bp = Blueprint("health", __name__)


class NotReady(ApiError):
    status = 503
    code = "NOT_READY"


@bp.get("/healthz")
@documented("Liveness", responses={200: HealthOut}, tags=("operations",))
def healthz():
    """Answers without touching the database: the process is alive."""
    return json_response({"status": "ok"})


@bp.get("/readyz")
@documented("Readiness: the database answers", responses={200: HealthOut}, tags=("operations",))
def readyz():
    """503 NOT_READY when the database does not answer."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:
        raise NotReady("The database is not reachable") from exc
    return json_response({"status": "ready"})


@bp.get("/openapi.json")
def openapi_document():
    """Generated from the routes and their pydantic models; it names the interactive reference
    drawn from it (an absolute address: OpenAPI wants a URI there)."""
    document = openapi.build(current_app)
    document["externalDocs"] = {
        "description": "The interactive API reference",
        "url": base_url() + url_for("reference.api_reference"),
    }
    return json_response(document)


# Every method an unknown address answers 404 to, so that /metrics answers the same to each
# (a GET-only route would give itself away with a 405 to a POST, or with an OPTIONS answer).
ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@bp.route("/metrics", methods=ANY_METHOD, provide_automatic_options=False)
def metrics():
    """Prometheus text format, for a bearer of METRICS_TOKEN; to anyone else (and when no
    token is set) exactly what an unknown address answers. Not in the OpenAPI document."""
    token = current_app.config["METRICS_TOKEN"]
    if (
        not token
        or not same(hash_secret(bearer_token() or ""), hash_secret(token))
        or request.method not in ("GET", "HEAD")
    ):
        abort(404)
    body, content_type = counted.exposition()
    return body, 200, {"Content-Type": content_type, "Cache-Control": "no-store"}
