"""The dashboard's schemas: the organization's credential types beside the public ones that
ship with the service.

Forms send the body ``POST /schemas`` and ``PUT /schemas/<id>`` accept, attributes included, and
validate it with the same models. The attribute rows grow by one either through an htmx fragment
or, without JavaScript, by posting the form with ``action=add-attribute``, which re-renders it
with what was typed and one more row.

A published schema's attribute names, types and format are what verifications and issued
credentials rely on, so its page no longer offers that form. It offers "How wallets show it"
instead: the name, description, colours, logo and attribute labels (what the type metadata at
its ``vct`` and the issuer metadata show), saved with the same operation as ``PUT
/schemas/<id>``, and nothing else it is sent.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from flask import render_template, request
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.errors import ApiError, InvalidRequest
from app.organizations.models import Organization
from app.schemas import operations as schema_ops
from app.schemas.models import Schema
from app.staff.blueprint import bp
from app.staff.page_kit import finished, form_values, refusal
from app.web.access import acting_organization, require_staff
from app.web.language import DEFAULT, LANGUAGES
from app.web.paging import page_args, pager
from app.web.payloads.schemas import SchemaIn, SchemaPatch
from app.web.requests import base_url, parse_id

SCHEMA_FIELDS = (
    "name",
    "description",
    "format",
    "vct",
    "doctype",
    "namespace",
    "types",
    "validity_days",
    *schema_ops.DISPLAY_FIELDS,
)
FORMAT_FIELDS = ("vct", "doctype", "namespace")
# What the "How wallets show it" form of a published schema may change, besides the labels.
SHOWN_FIELDS = ("name", "description", *schema_ops.DISPLAY_FIELDS)
# The issuer's settings of the schema, checkboxes: an unticked box is not sent at all.
FLAG_FIELDS = ("authorization_code_by_mail", "key_attestations_required")
ADD_ATTRIBUTE = "add-attribute"
TRANSLATED = [code for code in LANGUAGES if code != DEFAULT]


def blank_attribute() -> dict[str, str]:
    return {"name": "", "description": "", "type": schema_ops.ATTRIBUTE_TYPES[0]}


def submitted() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The schema's fields and its attribute rows, in the order the form lists them, without
    the rows ticked "Remove this attribute" (each row names itself by ``attribute_key``).

    Each row sends its description in every other language, empty where staff wrote none, so
    the n-th value of each language belongs to the n-th row.
    """
    removed = set(request.form.getlist("attribute_remove"))
    names = request.form.getlist("attribute_name")
    keys = request.form.getlist("attribute_key") or [""] * len(names)
    rows = zip(
        names,
        request.form.getlist("attribute_description"),
        request.form.getlist("attribute_type"),
        keys,
        strict=False,
    )
    translations = {
        code: request.form.getlist(f"attribute_description_{code}") for code in TRANSLATED
    }
    attributes: list[dict[str, Any]] = []
    for index, (name, description, kind, key) in enumerate(rows):
        if key in removed:
            continue
        attribute: dict[str, Any] = {"name": name, "description": description, "type": kind}
        written = {
            code: texts[index].strip()
            for code, texts in translations.items()
            if index < len(texts) and texts[index].strip()
        }
        if written:
            attribute["description_translations"] = written
        attributes.append(attribute)
    flags = {name: request.form.get(name) == "on" for name in FLAG_FIELDS}
    return {**form_values(SCHEMA_FIELDS), **flags}, attributes


def schema_body(values: dict[str, Any], attributes: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON API's body; a row left entirely empty is a row the person did not use."""
    used = [a for a in attributes if a["name"].strip() or a["description"].strip()]
    # An empty validity means credentials without ``exp``.
    validity: str | int | None = (values.get("validity_days") or "").strip() or None
    if isinstance(validity, str) and validity.isascii() and validity.isdigit():
        validity = int(validity)
    # A format's fields left empty are fields of another format: the API says which is missing.
    identifiers = {name: (values.get(name) or "").strip() or None for name in FORMAT_FIELDS}
    types = [t.strip() for t in re.split(r"[,\n]", values.get("types") or "") if t.strip()]
    # Display fields left empty say nothing (and clear what a draft said).
    shown = {name: (values.get(name) or "").strip() or None for name in schema_ops.DISPLAY_FIELDS}
    body = {**values, **identifiers, **shown, "types": types or None}
    if not values.get("format"):
        body.pop("format", None)  # the API's default: SD-JWT VC
    return {**body, "validity_days": validity, "attributes": used}


def stored_values(schema: Schema) -> dict[str, Any]:
    """The form's fields as the schema holds them (its types one line, comma separated)."""
    values = {name: getattr(schema, name) for name in (*SCHEMA_FIELDS, *FLAG_FIELDS)}
    values["types"] = ", ".join(schema.types or ())
    return {name: "" if value is None else value for name, value in values.items()}


def adding_a_row() -> bool:
    return request.form.get("action") == ADD_ATTRIBUTE


def list_page(
    organization: Organization,
    status: int = 200,
    values: dict[str, Any] | None = None,
    attributes: list[dict[str, Any]] | None = None,
    error: str | None = None,
):
    offset, limit = page_args()
    rows, total = schema_ops.list_schemas(organization, offset, limit)
    page = render_template(
        "staff/schemas/index.html",
        schemas=rows,
        pages=pager("staff.schemas", offset, limit, total),
        values=values or {**dict.fromkeys(SCHEMA_FIELDS, ""), **dict.fromkeys(FLAG_FIELDS, False)},
        attributes=attributes or [blank_attribute()],
        types=schema_ops.ATTRIBUTE_TYPES,
        error=error,
    )
    return page, status


def relabelled(schema: Schema) -> list[dict[str, Any]]:
    """The schema's attributes with the labels the display form sent, row by row: names,
    types and namespaces stay as stored, whatever else the form carries."""
    labels = request.form.getlist("attribute_description")
    if len(labels) != len(schema.attributes):
        raise InvalidRequest("Send one label per attribute of the schema")
    translations = {
        code: request.form.getlist(f"attribute_description_{code}") for code in TRANSLATED
    }
    attributes = []
    for index, (stored, label) in enumerate(zip(schema.attributes, labels, strict=True)):
        attribute = {k: v for k, v in stored.items() if k != "description_translations"}
        attribute["description"] = label.strip()
        written = {
            code: texts[index].strip()
            for code, texts in translations.items()
            if index < len(texts) and texts[index].strip()
        }
        if written:
            attribute["description_translations"] = written
        attributes.append(attribute)
    return attributes


def shown_body(values: dict[str, str], attributes: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``PUT /schemas/<id>`` body of the display form: an emptied display field clears it."""
    shown = {name: values[name].strip() or None for name in schema_ops.DISPLAY_FIELDS}
    return {
        "name": values["name"].strip(),
        "description": values["description"].strip(),
        **shown,
        "attributes": attributes,
    }


def detail_page(
    organization: Organization,
    schema: Schema,
    status: int = 200,
    values: dict[str, Any] | None = None,
    attributes: list[dict[str, Any]] | None = None,
    error: str | None = None,
):
    """Own drafts come with the edit form and the Publish button, own published schemas with
    the display form (``values``, ``attributes`` and ``error`` fill whichever form is shown);
    public schemas that ship with the service are read-only."""
    own = schema.organization_id == organization.id
    page = render_template(
        "staff/schemas/detail.html",
        schema=schema,
        own=own,
        editable=own and not schema.published,
        values=values or stored_values(schema),
        attributes=attributes or [dict(a) for a in schema.attributes] or [blank_attribute()],
        types=schema_ops.ATTRIBUTE_TYPES,
        error=error,
    )
    return page, status


@bp.get("/schemas")
@require_staff
def schemas() -> ResponseReturnValue:
    """Public schemas first, then the organization's, and the form to create one."""
    return list_page(acting_organization())


@bp.post("/schemas")
@require_staff
def schemas_create() -> ResponseReturnValue:
    """A new schema is a draft until published."""
    organization = acting_organization()
    values, attributes = submitted()
    if adding_a_row():
        return list_page(organization, values=values, attributes=[*attributes, blank_attribute()])
    try:
        body = SchemaIn.model_validate(schema_body(values, attributes))
        schema = schema_ops.create_schema(organization, body.model_dump(), base_url())
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return list_page(organization, status, values, attributes, message)
    return finished(
        f"Schema {schema.name} created as a draft.", "staff.schemas_detail", schema_id=schema.id
    )


@bp.get("/schemas/attribute-row")
@require_staff
def schemas_attribute_row() -> ResponseReturnValue:
    """One empty attribute row for htmx to append; its ids only need to be unique."""
    return render_template(
        "staff/schemas/attribute_row.html",
        attribute=blank_attribute(),
        key=secrets.token_hex(4),
        types=schema_ops.ATTRIBUTE_TYPES,
    )


@bp.get("/schemas/<schema_id>")
@require_staff
def schemas_detail(schema_id: str) -> ResponseReturnValue:
    """The attributes; another organization's schema reads as missing."""
    organization = acting_organization()
    return detail_page(organization, schema_ops.get_schema(organization, parse_id(schema_id)))


@bp.post("/schemas/<schema_id>")
@require_staff
def schemas_update(schema_id: str) -> ResponseReturnValue:
    """Replace a draft's fields and attributes; public schemas refuse before anything is read,
    and a published schema changes only through its display form."""
    organization = acting_organization()
    schema = schema_ops.get_own_schema(organization, parse_id(schema_id))
    if schema.published:
        message, status = refusal(
            schema_ops.SchemaPublished(
                f"Schema {schema.name} is published: only how wallets show it can change"
            )
        )
        return detail_page(organization, schema, status, error=message)
    values, attributes = submitted()
    if adding_a_row():
        return detail_page(
            organization, schema, values=values, attributes=[*attributes, blank_attribute()]
        )
    try:
        body = SchemaPatch.model_validate(schema_body(values, attributes))
        schema_ops.update_schema(organization, schema.id, body.model_dump(exclude_unset=True))
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return detail_page(organization, schema, status, values, attributes, message)
    return finished(f"Schema {schema.name} saved.", "staff.schemas_detail", schema_id=schema.id)


@bp.post("/schemas/<schema_id>/publish")
@require_staff
def schemas_publish(schema_id: str) -> ResponseReturnValue:
    """Publishing is idempotent, as in the JSON API."""
    schema = schema_ops.publish_schema(acting_organization(), parse_id(schema_id))
    return finished(f"Schema {schema.name} published.", "staff.schemas_detail", schema_id=schema.id)


@bp.post("/schemas/<schema_id>/display")
@require_staff
def schemas_display(schema_id: str) -> ResponseReturnValue:
    """How wallets show a schema: name, description, colours, logo and attribute labels,
    through the same operation as the JSON API's PUT (audited as ``schema.updated``)."""
    organization = acting_organization()
    schema = schema_ops.get_own_schema(organization, parse_id(schema_id))
    values = form_values(SHOWN_FIELDS)
    attributes: list[dict[str, Any]] | None = None
    try:
        attributes = relabelled(schema)
        body = SchemaPatch.model_validate(shown_body(values, attributes))
        schema_ops.update_schema(organization, schema.id, body.model_dump(exclude_unset=True))
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return detail_page(organization, schema, status, values, attributes, message)
    return finished(
        f"How wallets show {schema.name} saved.", "staff.schemas_detail", schema_id=schema.id
    )
