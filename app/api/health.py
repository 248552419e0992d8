"""Liveness, readiness and the API description."""

from __future__ import annotations

from flask import Blueprint, current_app
from sqlalchemy import text

from app.api import openapi
from app.api.common import documented, json_response
from app.errors import ApiError
from app.extensions import db
from app.web import payloads as p

bp = Blueprint("health", __name__)


class NotReady(ApiError):
    status = 503
    code = "NOT_READY"


@bp.get("/healthz")
@documented("Liveness", responses={200: p.HealthOut}, tags=("operations",))
def healthz():
    """Answers without touching the database: the process is alive."""
    return json_response({"status": "ok"})


@bp.get("/readyz")
@documented("Readiness: the database answers", responses={200: p.HealthOut}, tags=("operations",))
def readyz():
    """503 NOT_READY when the database does not answer."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as exc:
        raise NotReady("The database is not reachable") from exc
    return json_response({"status": "ready"})


@bp.get("/openapi.json")
def openapi_document():
    """Generated from the routes and their pydantic models."""
    return json_response(openapi.build(current_app))
