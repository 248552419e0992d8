"""Credential schemas: the organization's own, and the public ones every organization sees."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import or_, select, text

from app.errors import Conflict, Forbidden, InvalidRequest, NotFound
from app.extensions import db
from app.oid4vp.formats import MSO_MDOC, SD_JWT_VC
from app.organizations.models import Organization, Plan
from app.schemas.models import Schema
from app.schemas.type_metadata import served_here, type_url

# How wallets show the credential (``app.schemas.type_metadata``): optional, clearable.
DISPLAY_FIELDS = ("background_color", "text_color", "logo_uri", "logo_alt_text")
ATTRIBUTE_TYPES = ("TEXT", "NUMBER", "BOOLEAN", "URL", "DATETIME", "EMAIL")
# What verifications (of every organization that sees the schema) and issued credentials rely
# on once a schema is published: its format and type, and who may use it. How wallets show it
# (the name, the description, the display fields and the attribute labels) and how its next
# credentials are issued (validity, mailed code, key attestations) still change.
FROZEN_FIELDS = ("format", "vct", "doctype", "namespace", "types", "premium_plus")


class SchemaPublished(Conflict):
    """A change to what a published schema promises (409, whoever asks: API or dashboard)."""

    code = "SCHEMA_PUBLISHED"


class PublicByOperatorOnly(Forbidden):
    """A schema every organization sees is made public by an operator, not by a tenant."""

    code = "PUBLIC_SCHEMA_OPERATOR_ONLY"


def _check_attributes(attributes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = [a["name"] for a in attributes]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InvalidRequest(f"Duplicate attribute names: {', '.join(duplicates)}")
    return [_attribute(a) for a in attributes]


def _attribute(attribute: dict[str, Any]) -> dict[str, Any]:
    kept = {
        "name": attribute["name"],
        "description": attribute.get("description", ""),
        "type": attribute.get("type", "TEXT"),
    }
    if attribute.get("namespace"):
        kept["namespace"] = attribute["namespace"]
    if attribute.get("description_translations"):
        kept["description_translations"] = dict(attribute["description_translations"])
    return kept


def visible_to(organization: Organization):
    """Schemas an organization may see: its own and the published public ones."""
    return or_(
        Schema.organization_id == organization.id,
        (Schema.public.is_(True)) & (Schema.published.is_(True)),
    )


def list_schemas(organization: Organization, offset: int, limit: int) -> tuple[list[Schema], int]:
    query = select(Schema).where(visible_to(organization))
    total = db.session.scalar(select(db.func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(Schema.created_at, Schema.id).offset(offset).limit(limit)
    )
    return list(rows), total


def get_schema(organization: Organization, schema_id: uuid.UUID) -> Schema:
    schema = db.session.get(Schema, schema_id)
    if schema is None or not (
        schema.organization_id == organization.id or (schema.public and schema.published)
    ):
        raise NotFound()
    return schema


def get_own_schema(organization: Organization, schema_id: uuid.UUID) -> Schema:
    schema = get_schema(organization, schema_id)
    if schema.organization_id != organization.id:
        raise Forbidden("Public schemas that ship with the service cannot be changed")
    return schema


def create_schema(
    organization: Organization, fields: dict[str, Any], types_base_url: str | None = None
) -> Schema:
    """A draft. An SD-JWT VC schema given no ``vct`` gets the address where this deployment
    serves its type metadata (``<types_base_url>/types/<schema id>``)."""
    _refuse_public(fields, current=False)
    schema = Schema(id=uuid.uuid4(), organization_id=organization.id, published=False)
    if (
        types_base_url
        and (fields.get("format") or SD_JWT_VC) == SD_JWT_VC
        and not fields.get("vct")
    ):
        fields = {**fields, "vct": type_url(types_base_url, str(schema.id))}
    _apply(schema, fields)
    _check_type_address_free(schema, types_base_url or _types_base())
    db.session.add(schema)
    db.session.flush()
    return schema


def update_schema(
    organization: Organization,
    schema_id: uuid.UUID,
    fields: dict[str, Any],
    types_base_url: str | None = None,
) -> Schema:
    schema = get_own_schema(organization, schema_id)
    _refuse_public(fields, current=schema.public)
    if schema.published:
        _refuse_frozen_changes(schema, fields)
    vct_before = schema.vct
    _apply(schema, fields)
    if schema.vct != vct_before:
        _check_type_address_free(schema, types_base_url or _types_base())
    db.session.flush()
    return schema


def _refuse_public(fields: dict[str, Any], current: bool) -> None:
    """An organization cannot change whether a schema is public: every organization sees a
    public schema and builds verifications on it, so an operator makes one public
    (``flask schemas publish-public``). Sending the value it has is no change."""
    wanted = fields.get("public")
    if wanted is not None and wanted != current:
        raise PublicByOperatorOnly(
            "Only an operator makes a schema public (flask schemas publish-public <schema id>); "
            "send public: false or leave it out",
        )


def _refuse_frozen_changes(schema: Schema, fields: dict[str, Any]) -> None:
    """Checked before anything changes: a published schema's format, type, attribute names,
    types and namespaces and Premium+ flag stay as they are. A field sent with the value it
    already has is no change, so a client may send back what it read."""
    changed = [
        key
        for key in FROZEN_FIELDS
        if fields.get(key) is not None and fields[key] != getattr(schema, key)
    ]
    if fields.get("attributes") is not None and _shapes(fields["attributes"]) != _shapes(
        schema.attributes
    ):
        changed.append("attributes")
    if changed:
        raise SchemaPublished(
            f"Schema {schema.name} is published: {', '.join(changed)} cannot change, only how "
            "wallets show it (name, description, display, attribute labels)",
        )


def _shapes(attributes: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """What verifications and credentials rely on in the attributes: names, types, namespaces."""
    return sorted(
        (a.get("name", ""), a.get("type") or "TEXT", a.get("namespace") or "") for a in attributes
    )


def make_public(schema_id: uuid.UUID) -> Schema:
    """Publish a schema to every organization: an operator's decision (the CLI's
    ``schemas publish-public``). It stays its organization's to relabel, and frozen."""
    schema = db.session.get(Schema, schema_id)
    if schema is None:
        raise InvalidRequest(f"No schema with ID {schema_id}")
    schema.public = True
    schema.published = True
    db.session.flush()
    return schema


def _no_types_base() -> str | None:
    return None


_types_base_provider: Callable[[], str | None] = _no_types_base


def provide_types_base(provider: Callable[[], str | None]) -> None:
    """Called by the application factory: where this deployment serves type metadata
    (``PUBLIC_URL``), for writers that do not say it."""
    global _types_base_provider
    _types_base_provider = provider


def _types_base() -> str | None:
    return _types_base_provider()


def _check_type_address_free(schema: Schema, types_base_url: str | None) -> None:
    """A ``vct`` under this deployment's ``/types/`` is the address of one document, so one
    schema (of any organization) holds it: a second would be served the first's document
    and its credentials carry a ``vct#integrity`` the served bytes do not match.

    Race-safe inside the write transaction: on PostgreSQL a transaction-scoped advisory lock
    on the address makes a second writer wait until the first commits and then see its row;
    SQLite writers already run one at a time (``BEGIN IMMEDIATE``). A ``vct`` served
    elsewhere may be shared: its document is not ours to serve."""
    if not types_base_url or not served_here(schema, types_base_url):
        return
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
            {"key": f"schema-vct:{schema.vct}"},
        )
    taken = db.session.scalar(
        select(Schema.id)
        .where(Schema.vct == schema.vct, Schema.format == SD_JWT_VC, Schema.id != schema.id)
        .limit(1)
    )
    if taken is not None:
        raise InvalidRequest(
            f"vct {schema.vct} is already the type address of another schema; choose another "
            "name under /types/",
            code="VCT_TAKEN",
        )


def publish_schema(organization: Organization, schema_id: uuid.UUID) -> Schema:
    schema = get_own_schema(organization, schema_id)
    schema.published = True
    db.session.flush()
    return schema


def _apply(schema: Schema, fields: dict[str, Any]) -> None:
    keys = ("name", "description", "format", "vct", "doctype", "namespace", "types")
    flags = ("public", "premium_plus", "authorization_code_by_mail", "key_attestations_required")
    for key in (*keys, *flags):
        if key in fields and fields[key] is not None:
            setattr(schema, key, fields[key])
    if "validity_days" in fields:  # an explicit null clears it: credentials without exp
        schema.validity_days = fields["validity_days"]
    for key in DISPLAY_FIELDS:  # likewise: null or "" clears what wallets were shown
        if key in fields:
            setattr(schema, key, fields[key] or None)
    if fields.get("attributes") is not None:
        schema.attributes = _check_attributes(fields["attributes"])
    _check_format(schema)


def _check_format(schema: Schema) -> None:
    """Each format names its credential type its own way; what another format uses is
    cleared, so a schema never asks for two types at once."""
    schema.format = schema.format or SD_JWT_VC
    if schema.format == SD_JWT_VC:
        _require(schema.vct, "vct is required for a dc+sd-jwt schema")
        schema.doctype = schema.namespace = schema.types = None
    elif schema.format == MSO_MDOC:
        _require(schema.doctype, "doctype is required for an mso_mdoc schema")
        _require(schema.namespace, "namespace is required for an mso_mdoc schema")
        schema.vct, schema.types = "", None
    else:
        _require(schema.types, "types is required for a jwt_vc_json schema")
        schema.vct, schema.doctype, schema.namespace = "", None, None
    if schema.format != MSO_MDOC and any(a.get("namespace") for a in schema.attributes):
        raise InvalidRequest("Only mso_mdoc schema attributes have a namespace")


def _require(value: Any, message: str) -> None:
    if not value:
        raise InvalidRequest(message)


def require_schema_entitlement(organization: Organization, schema: Schema) -> None:
    """A Premium+ schema used by a non-Premium+ organization is 403."""
    if schema.premium_plus and organization.effective_plan() != Plan.PREMIUM_PLUS:
        raise Forbidden(
            f"Schema {schema.name} is reserved for Premium+ organizations",
            code="PREMIUM_PLUS_REQUIRED",
        )


def schema_of_type(vct: str) -> Schema | None:
    """The published SD-JWT VC schema whose ``vct`` is ``vct``: what the type metadata at that
    address describes. A draft has none yet: nothing was issued under it."""
    return db.session.scalar(
        select(Schema)
        .where(Schema.vct == vct, Schema.format == SD_JWT_VC, Schema.published.is_(True))
        .order_by(Schema.created_at, Schema.id)
        .limit(1)
    )
