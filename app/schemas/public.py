"""Public schemas for common credentials, shipped with the service and seeded idempotently."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from app.extensions import db
from app.oid4vp.formats import MSO_MDOC, SD_JWT_VC
from app.schemas.models import Schema

# Fixed IDs so that every deployment (and every client's configuration) names them alike.
PUBLIC_SCHEMAS = [
    {
        "id": uuid.UUID("5c4a3f3e-0b1d-4c7e-9a51-000000000001"),
        "name": "EU Person Identification Data",
        "description": "The EU Digital Identity Wallet's PID, in SD-JWT VC form.",
        "vct": "urn:eudi:pid:1",
        "attributes": [
            {"name": "given_name", "description": "Current first names", "type": "TEXT"},
            {"name": "family_name", "description": "Current last names", "type": "TEXT"},
            {"name": "birthdate", "description": "Date of birth", "type": "DATETIME"},
            {"name": "nationalities", "description": "Nationalities (ISO 3166-1)", "type": "TEXT"},
            {"name": "address.country", "description": "Country of residence", "type": "TEXT"},
            {"name": "address.locality", "description": "Town of residence", "type": "TEXT"},
            {"name": "age_equal_or_over.18", "description": "18 or older", "type": "BOOLEAN"},
            {"name": "issuing_country", "description": "Issuing country", "type": "TEXT"},
        ],
    },
    {
        "id": uuid.UUID("5c4a3f3e-0b1d-4c7e-9a51-000000000002"),
        "name": "Mobile driving licence",
        "description": "ISO/IEC 18013-5 driving privileges, in SD-JWT VC form (see the mdoc "
        "schema for the form most wallets hold).",
        "vct": "urn:eudi:mdl:1",
        "attributes": [
            {"name": "given_name", "description": "First names", "type": "TEXT"},
            {"name": "family_name", "description": "Last names", "type": "TEXT"},
            {"name": "birth_date", "description": "Date of birth", "type": "DATETIME"},
            {"name": "document_number", "description": "Licence number", "type": "TEXT"},
            {"name": "expiry_date", "description": "Licence expiry", "type": "DATETIME"},
            {"name": "issuing_country", "description": "Issuing country", "type": "TEXT"},
            {"name": "driving_privileges", "description": "Vehicle categories", "type": "TEXT"},
        ],
    },
    {
        "id": uuid.UUID("5c4a3f3e-0b1d-4c7e-9a51-000000000003"),
        "name": "Age over 18",
        "description": "Proof of being 18 or older, disclosing nothing else.",
        "vct": "urn:eudi:age_verification:1",
        "attributes": [
            {"name": "age_over_18", "description": "18 or older", "type": "BOOLEAN"},
        ],
    },
    {
        "id": uuid.UUID("5c4a3f3e-0b1d-4c7e-9a51-000000000004"),
        "name": "Mobile driving licence (mdoc)",
        "description": "The ISO/IEC 18013-5 mobile driving licence, as phone wallets hold it.",
        "format": MSO_MDOC,
        "doctype": "org.iso.18013.5.1.mDL",
        "namespace": "org.iso.18013.5.1",
        "attributes": [
            {"name": "family_name", "description": "Last names", "type": "TEXT"},
            {"name": "given_name", "description": "First names", "type": "TEXT"},
            {"name": "birth_date", "description": "Date of birth", "type": "DATETIME"},
            {"name": "issue_date", "description": "Licence issue date", "type": "DATETIME"},
            {"name": "expiry_date", "description": "Licence expiry date", "type": "DATETIME"},
            {"name": "issuing_country", "description": "Issuing country", "type": "TEXT"},
            {"name": "issuing_authority", "description": "Issuing authority", "type": "TEXT"},
            {"name": "document_number", "description": "Licence number", "type": "TEXT"},
            {"name": "driving_privileges", "description": "Vehicle categories", "type": "TEXT"},
            {"name": "age_over_18", "description": "18 or older", "type": "BOOLEAN"},
            {"name": "age_over_21", "description": "21 or older", "type": "BOOLEAN"},
            {"name": "resident_country", "description": "Country of residence", "type": "TEXT"},
        ],
    },
    {
        "id": uuid.UUID("5c4a3f3e-0b1d-4c7e-9a51-000000000005"),
        "name": "EU Person Identification Data (mdoc)",
        "description": "The EU Digital Identity Wallet's PID, in ISO mdoc form.",
        "format": MSO_MDOC,
        "doctype": "eu.europa.ec.eudi.pid.1",
        "namespace": "eu.europa.ec.eudi.pid.1",
        "attributes": [
            {"name": "family_name", "description": "Current last names", "type": "TEXT"},
            {"name": "given_name", "description": "Current first names", "type": "TEXT"},
            {"name": "birth_date", "description": "Date of birth", "type": "DATETIME"},
            {"name": "age_over_18", "description": "18 or older", "type": "BOOLEAN"},
            {"name": "nationality", "description": "Nationalities (ISO 3166-1)", "type": "TEXT"},
            {"name": "resident_country", "description": "Country of residence", "type": "TEXT"},
            {"name": "issuing_country", "description": "Issuing country", "type": "TEXT"},
            {"name": "issuing_authority", "description": "Issuing authority", "type": "TEXT"},
            {"name": "expiry_date", "description": "Document expiry date", "type": "DATETIME"},
        ],
    },
]

# What a shipped definition sets; a deployment seeded by an earlier version gets it brought
# up to date (organizations cannot change public schemas, so nothing of theirs is lost).
SHIPPED_FIELDS = ("name", "description", "format", "vct", "doctype", "namespace", "attributes")


def seed_public_schemas() -> int:
    """Insert the shipped schemas that are missing and bring the others up to date; return
    how many were added."""
    existing = {
        schema.id: schema
        for schema in db.session.scalars(select(Schema).where(Schema.organization_id.is_(None)))
    }
    added = 0
    for spec in PUBLIC_SCHEMAS:
        shipped = {"format": SD_JWT_VC, "vct": "", "doctype": None, "namespace": None, **spec}
        schema = existing.get(spec["id"])
        if schema is None:
            db.session.add(Schema(organization_id=None, public=True, published=True, **shipped))
            added += 1
            continue
        for name in SHIPPED_FIELDS:
            if getattr(schema, name) != shipped[name]:
                setattr(schema, name, shipped[name])
    db.session.flush()
    return added
