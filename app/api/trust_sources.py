"""Trust sources of the acting organization (session token): PEM anchors, ETSI trusted lists,
the EU List of Trusted Lists, Lists of Trusted Entities and VICALs, and "refresh now".

Another organization's source reads as missing (400, ``NOT_FOUND``), like an unknown one.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from flask import Blueprint
from pydantic import Field

from app import clock
from app.api.common import documented, json_response, listing, parse_body, parse_id
from app.trust_sources import operations as sources
from app.trust_sources.models import SourceKind, TrustSource
from app.web.access import acting_organization, require_session
from app.web.payloads import Body, Out

bp = Blueprint("trust_sources", __name__)

Kind = Literal["PEM", "TRUSTED_LIST", "LIST_OF_TRUSTED_LISTS", "LIST_OF_TRUSTED_ENTITIES", "VICAL"]
PemText = Field(default=None, max_length=sources.MAX_PEM_LENGTH)


class TrustSourceIn(Body):
    name: str = Field(min_length=1, max_length=sources.MAX_NAME_LENGTH)
    kind: Kind
    url: str | None = Field(
        default=None, max_length=sources.MAX_URL_LENGTH, description="Lists: where it is published."
    )
    certificates: str | None = Field(
        default=None,
        max_length=sources.MAX_PEM_LENGTH,
        description="PEM: the anchor certificates (one or more PEM blocks).",
    )
    signer_certificates: str | None = Field(
        default=None,
        max_length=sources.MAX_PEM_LENGTH,
        description=(
            "Lists: PEM certificates allowed to sign the list (a VICAL: the anchors its "
            "signer's chain must lead to)."
        ),
    )
    territories: list[str] = Field(
        default_factory=list,
        max_length=60,
        description="LIST_OF_TRUSTED_LISTS: member states to follow (DE, FR ...); empty: all.",
    )
    service_types: list[str] = Field(
        default_factory=list,
        max_length=30,
        description=(
            "Trusted lists and Lists of Trusted Entities: service type URIs to take; empty: "
            "CA/QC for trusted lists, every type for a List of Trusted Entities."
        ),
    )


class TrustSourcePatch(Body):
    name: str | None = Field(default=None, min_length=1, max_length=sources.MAX_NAME_LENGTH)
    kind: Kind | None = Field(default=None, description="Cannot change; accepted if the same.")
    url: str | None = Field(default=None, max_length=sources.MAX_URL_LENGTH)
    certificates: str | None = PemText
    signer_certificates: str | None = PemText
    territories: list[str] | None = Field(default=None, max_length=60)
    service_types: list[str] | None = Field(default=None, max_length=30)


class ListOut(Out):
    territory: str | None
    url: str | None
    sequence_number: int | None
    issued_at: str | None
    next_update: str | None
    stale: bool
    error: str | None = Field(description="Why this list's last refresh failed (copy kept).")


class TrustSourceOut(Out):
    id: uuid.UUID
    name: str
    kind: Kind
    url: str | None
    certificates: str | None
    signer_certificates: str | None
    territories: list[str]
    service_types: list[str]
    sequence_number: int | None
    issued_at: datetime | None
    next_update: datetime | None
    stale: bool = Field(description="A list kept is past its next update (TRUST_LIST_STALE).")
    refreshed_at: datetime | None = Field(description="When the kept copy was fetched.")
    last_attempt_at: datetime | None
    last_error: str | None = Field(description="Why the last refresh kept the old copy.")
    last_error_at: datetime | None
    certificate_count: int = Field(description="Certificates kept, granted or not.")
    lists: list[ListOut]
    created_at: datetime
    updated_at: datetime


class TrustSourceList(Out):
    results: list[TrustSourceOut]
    total: int


class ServiceTypeOut(Out):
    uri: str
    label: str


class ServiceTypeList(Out):
    results: list[ServiceTypeOut]
    total: int


def render(row: TrustSource) -> dict[str, Any]:
    now = clock.now()
    pem = row.kind is SourceKind.PEM
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
    sources.delete_source(acting_organization(), parse_id(source_id))
    return "", 204


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
    rows = [{"uri": uri, "label": label} for uri, label in sources.SERVICE_TYPE_PRESETS.items()]
    return json_response({"results": rows, "total": len(rows)})
