"""What an individual's answer needs to carry Socious Verify's fields beside Verity's, for an
organization whose ``api_compatibility`` is ``socious-verify`` (``socious-io/shin-api``
``docs/VERIFICATION.md``, ``src/app/models/verifications.go``).

Everything the extra fields read besides the individual's own columns comes from one Core
read (``socious_verify_context``): the verification, its schema, the organization's setting,
the recipient of the customer ID and the presentation request last answered. So an answer
with the extra fields costs one query more than without, whatever the verification holds, and
an organization that keeps Verity's shape pays nothing (the lookup reads the setting in its
own query, ``operations._INDIVIDUAL_OF_ORGANIZATION``).
"""

from __future__ import annotations

import uuid

from sqlalchemy import Row, bindparam, select

from app.database import read_row
from app.extensions import db
from app.organizations.models import ApiCompatibility, Organization
from app.recipients.models import Recipient
from app.schemas.models import Schema
from app.verifications.models import (
    PresentationAttempt,
    PresentationRequest,
    Verification,
    requested_claim_names,
)

SOCIOUS_VERIFY = ApiCompatibility.SOCIOUS_VERIFY

_VERIFICATION = Verification.__table__
_SCHEMA = Schema.__table__
_ORGANIZATION = Organization.__table__
_RECIPIENT = Recipient.__table__
_REQUEST = PresentationRequest.__table__
_ATTEMPT = PresentationAttempt.__table__

# Socious Verify made a recipient for every customer ID it was given; Verity keeps recipients
# only for the people an organization issues to. The oldest of the organization's recipients
# with that customer ID, if any.
_RECIPIENT_ID = (
    select(_RECIPIENT.c.id)
    .where(
        _RECIPIENT.c.organization_id == _VERIFICATION.c.organization_id,
        _RECIPIENT.c.customer_id == bindparam("customer_id"),
    )
    .order_by(_RECIPIENT.c.created_at, _RECIPIENT.c.id)
    .limit(1)
    .scalar_subquery()
)
# The presentation request the individual's last presentation answered.
_PRESENT_ID = (
    select(_ATTEMPT.c.request_id)
    .join(_REQUEST, _ATTEMPT.c.request_id == _REQUEST.c.id)
    .where(_REQUEST.c.individual_id == bindparam("individual_id"))
    .order_by(_ATTEMPT.c.created_at.desc(), _ATTEMPT.c.id.desc())
    .limit(1)
    .scalar_subquery()
)
_CONTEXT = (
    select(
        _ORGANIZATION.c.api_compatibility,
        _VERIFICATION.c.organization_id,
        _VERIFICATION.c.id.label("verification_id"),
        _VERIFICATION.c.name.label("verification_name"),
        _VERIFICATION.c.description.label("verification_description"),
        _VERIFICATION.c.type.label("verification_type"),
        _VERIFICATION.c.claims.label("verification_claims"),
        _VERIFICATION.c.attributes.label("verification_conditions"),
        _VERIFICATION.c.created_at.label("verification_created_at"),
        _VERIFICATION.c.updated_at.label("verification_updated_at"),
        _SCHEMA.c.id.label("schema_id"),
        _SCHEMA.c.name.label("schema_name"),
        _SCHEMA.c.description.label("schema_description"),
        _SCHEMA.c.attributes.label("schema_attributes"),
        _SCHEMA.c.created_at.label("schema_created_at"),
        _RECIPIENT_ID.label("recipient_id"),
        _PRESENT_ID.label("present_id"),
    )
    .select_from(_VERIFICATION)
    .join(_SCHEMA, _SCHEMA.c.id == _VERIFICATION.c.schema_id)
    .join(_ORGANIZATION, _ORGANIZATION.c.id == _VERIFICATION.c.organization_id)
    .where(_VERIFICATION.c.id == bindparam("verification_id"))
)


def socious_verify_context(
    verification_id: uuid.UUID, customer_id: str, individual_id: uuid.UUID
) -> Row | None:
    """The verification, schema, setting, recipient and last answered request behind an
    individual's Socious Verify fields, in one read; None for a missing verification."""
    return read_row(
        db.engine,
        _CONTEXT,
        {
            "verification_id": verification_id,
            "customer_id": customer_id,
            "individual_id": individual_id,
        },
    )


def requested_claims(context: Row) -> list[str]:
    """The claims the verification asks for (``Verification.requested_claims`` on the row)."""
    return requested_claim_names(context.verification_claims, context.verification_conditions)
