"""Public schemas for common credentials, shipped with the service and seeded idempotently."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from app.extensions import db
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
        "description": "ISO/IEC 18013-5 driving privileges, in SD-JWT VC form.",
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
]


def seed_public_schemas() -> int:
    """Insert the shipped schemas that are missing; return how many were added."""
    existing = set(db.session.scalars(select(Schema.id).where(Schema.organization_id.is_(None))))
    added = 0
    for spec in PUBLIC_SCHEMAS:
        if spec["id"] in existing:
            continue
        db.session.add(Schema(organization_id=None, public=True, published=True, **spec))
        added += 1
    db.session.flush()
    return added
