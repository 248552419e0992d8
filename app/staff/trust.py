"""The dashboard's Trust page: the organization's trust sources, their refresh state, adding
one, "refresh now" and deleting one.

Forms are validated by the JSON API's pydantic model and changed by the same operations, so
the two surfaces refuse the same things with the same words.
"""

from __future__ import annotations

from typing import Any

from flask import render_template, request
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app import clock
from app.errors import ApiError
from app.organizations.models import Organization
from app.staff.blueprint import bp
from app.staff.page_kit import finished, refusal
from app.trust_sources import operations as sources
from app.trust_sources.models import PEM_KINDS, SourceKind, TrustSource
from app.web.access import acting_organization, require_staff
from app.web.requests import parse_id
from app.web.trust_sources import TrustSourceIn

EMPTY_FORM: dict[str, Any] = {
    "name": "",
    "kind": SourceKind.LIST_OF_TRUSTED_LISTS.value,
    "url": "",
    "certificates": "",
    "territories": "",
    "service_types": [sources.QC_CA],
    "other_service_types": "",
}


def _words(text: str) -> list[str]:
    return [part for part in text.replace(",", " ").split() if part]


def submitted() -> dict[str, Any]:
    form = request.form
    return {
        "name": form.get("name", ""),
        "kind": form.get("kind", ""),
        "url": form.get("url", "").strip(),
        "certificates": form.get("certificates", ""),
        "territories": form.get("territories", ""),
        "service_types": [t for t in form.getlist("service_types") if t],
        "other_service_types": form.get("other_service_types", ""),
    }


def body_of(values: dict[str, Any]) -> dict[str, Any]:
    """The JSON API's body for the form: one certificates box serves both kinds."""
    pem = values["kind"] in PEM_KINDS
    body: dict[str, Any] = {"name": values["name"], "kind": values["kind"]}
    if pem:
        body["certificates"] = values["certificates"]
        return body
    body["url"] = values["url"]
    body["signer_certificates"] = values["certificates"]
    if values["kind"] == SourceKind.LIST_OF_TRUSTED_LISTS.value:
        body["territories"] = _words(values["territories"])
    if values["kind"] != SourceKind.VICAL.value:
        body["service_types"] = [*values["service_types"], *_words(values["other_service_types"])]
    return body


def trust_page(organization: Organization, status: int = 200, **extra: Any):
    page = render_template(
        "staff/trust/index.html",
        rows=sources.list_sources(organization),
        values=extra.pop("values", EMPTY_FORM),
        kinds=sources.KIND_WORDS,
        presets=sources.SERVICE_TYPE_PRESETS,
        freshness=lambda row: sources.freshness(row, clock.now()),
        **extra,
    )
    return page, status


@bp.get("/trust")
@require_staff
def trust() -> ResponseReturnValue:
    """The sources and the form to add one."""
    return trust_page(acting_organization())


@bp.post("/trust")
@require_staff
def trust_create() -> ResponseReturnValue:
    """Add a source; a list is fetched by the refresh job right after."""
    organization = acting_organization()
    values = submitted()
    try:
        body = TrustSourceIn.model_validate(body_of(values))
        created = sources.create_source(organization, body.model_dump())
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return trust_page(organization, status, values=values, error=message)
    word = "It is being fetched now." if created.fetched else ""
    return finished(
        f"Trust source '{created.name}' added. {word}", "staff.trust_detail", source_id=created.id
    )


def the_source(source_id: str) -> TrustSource:
    return sources.get_source(acting_organization(), parse_id(source_id))


@bp.get("/trust/<source_id>")
@require_staff
def trust_detail(source_id: str) -> ResponseReturnValue:
    """One source: what it is, its last good copy, and why a refresh last failed."""
    source = the_source(source_id)
    organization = acting_organization()
    return render_template(
        "staff/trust/detail.html",
        source=source,
        kinds=sources.KIND_WORDS,
        presets=sources.SERVICE_TYPE_PRESETS,
        fresh=sources.freshness(source, clock.now()),
        count=sources.certificate_count(source),
        users=sources.verifications_using(organization, source.id),
    )


@bp.post("/trust/<source_id>/refresh")
@require_staff
def trust_refresh(source_id: str) -> ResponseReturnValue:
    """Refresh now: queued; the page shows the outcome once the job ran."""
    source = the_source(source_id)
    sources.request_refresh(acting_organization(), source.id)
    return finished(
        "Refresh queued: reload this page in a moment to see the outcome.",
        "staff.trust_detail",
        source_id=source.id,
    )


@bp.post("/trust/<source_id>/delete")
@require_staff
def trust_delete(source_id: str) -> ResponseReturnValue:
    """Refused while a verification uses the source."""
    source = the_source(source_id)
    name = source.name
    try:
        sources.delete_source(acting_organization(), source.id)
    except ApiError as exc:
        message, status = refusal(exc)
        return render_template(
            "staff/trust/detail.html",
            source=the_source(source_id),
            kinds=sources.KIND_WORDS,
            presets=sources.SERVICE_TYPE_PRESETS,
            fresh=sources.freshness(source, clock.now()),
            count=sources.certificate_count(source),
            users=sources.verifications_using(acting_organization(), source.id),
            error=message,
        ), status
    return finished(f"Trust source '{name}' deleted.", "staff.trust")
