"""Trust sources of the acting organization (session token): PEM anchors, ETSI trusted lists,
the EU List of Trusted Lists, Lists of Trusted Entities and VICALs, and "refresh now".

Another organization's source reads as missing (400, ``NOT_FOUND``), like an unknown one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Blueprint

from app import clock
from app.api.common import (
    deleted,
    documented,
    json_response,
    listing,
    parse_body,
    parse_id,
    refuse_unknown_args,
)
from app.trust_sources import operations as sources
from app.trust_sources.models import PEM_KINDS, TrustSource
from app.web.access import acting_organization, require_session
from app.web.trust_sources import (
    ServiceTypeList,
    TrustSourceIn,
    TrustSourceList,
    TrustSourceOut,
    TrustSourcePatch,
)

bp = Blueprint("trust_sources", __name__)


def render(row: TrustSource) -> dict[str, Any]:
    now = clock.now()
    pem = row.kind in PEM_KINDS
    return {
        "id": str(row.id),
        "name": row.name,
        "kind": row.kind.value,
        "url": row.url,
        "certificates": row.certificates_pem if pem else None,
        "signer_certificates": None if pem else row.certificates_pem,
        "territories": list(row.territories or []),
        "service_types": list(row.service_types or []),
        "sequence_number": row.sequence_number,
        "issued_at": _time(row.issued_at),
        "next_update": _time(row.next_update),
        "stale": sources.freshness(row, now).stale,
        "refreshed_at": _time(row.refreshed_at),
        "last_attempt_at": _time(row.last_attempt_at),
        "last_error": row.last_error,
        "last_error_at": _time(row.last_error_at),
        "certificate_count": sources.certificate_count(row),
        "lists": [_list(info, now) for info in row.lists or []],
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
    }


def _list(info: dict[str, Any], now: datetime) -> dict[str, Any]:
    next_update = info.get("next_update")
    return {
        "territory": info.get("territory"),
        "url": info.get("url"),
        "sequence_number": info.get("sequence_number"),
        "issued_at": info.get("issued_at"),
        "next_update": next_update,
        "stale": bool(next_update) and datetime.fromisoformat(next_update) < now,
        "error": info.get("error"),
    }


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


@bp.get("/trust/sources")
@require_session
@documented(
    "Trust sources of the acting organization, with each one's refresh state",
    responses={200: TrustSourceList},
    tags=("trust",),
)
def list_sources():
    refuse_unknown_args()
    rows = sources.list_sources(acting_organization())
    return json_response(listing(rows, len(rows), render))


@bp.post("/trust/sources")
@require_session
@documented(
    "Add a trust source; a list is fetched at once by the refresh job",
    body=TrustSourceIn,
    responses={201: TrustSourceOut},
    tags=("trust",),
)
def create_source():
    body = parse_body(TrustSourceIn)
    row = sources.create_source(acting_organization(), body.model_dump())
    return json_response(render(row), 201)


@bp.get("/trust/sources/<source_id>")
@require_session
@documented("One trust source", responses={200: TrustSourceOut}, tags=("trust",))
def get_source(source_id: str):
    return json_response(render(sources.get_source(acting_organization(), parse_id(source_id))))


@bp.put("/trust/sources/<source_id>")
@require_session
@documented(
    "Change a trust source; a changed URL, signer, territory or service type drops the kept "
    "copy and fetches the list again",
    body=TrustSourcePatch,
    responses={200: TrustSourceOut},
    tags=("trust",),
)
def update_source(source_id: str):
    body = parse_body(TrustSourcePatch)
    row = sources.update_source(
        acting_organization(), parse_id(source_id), body.model_dump(exclude_unset=True)
    )
    return json_response(render(row))


@bp.delete("/trust/sources/<source_id>")
@require_session
@documented(
    "Delete a trust source (409 CONFLICT while a verification uses it)",
    responses={204: None},
    tags=("trust",),
)
def delete_source(source_id: str):
    return deleted(sources.delete_source, source_id)


@bp.post("/trust/sources/<source_id>/refresh")
@require_session
@documented(
    "Refresh now: the list is fetched again by the job queue; read the source for the outcome",
    responses={202: TrustSourceOut},
    tags=("trust",),
)
def refresh_source(source_id: str):
    row = sources.request_refresh(acting_organization(), parse_id(source_id))
    return json_response(render(row), 202)


@bp.get("/trust/service-types")
@require_session
@documented(
    "Service type URIs offered as presets (any other URI may be given)",
    responses={200: ServiceTypeList},
    tags=("trust",),
)
def service_types():
    refuse_unknown_args()
    rows = [{"uri": uri, "label": label} for uri, label in sources.SERVICE_TYPE_PRESETS.items()]
    return json_response({"results": rows, "total": len(rows)})
