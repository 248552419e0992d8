"""Socious Verify's answer shape beside Verity's, for a backend written against it.

An organization whose ``api_compatibility`` is ``socious-verify`` gets, in the apikey lookup
and in the answer of an open made with its own integration key, the fields Socious Verify's
lookup had (``socious-io/shin-api`` ``docs/VERIFICATION.md``; the Go models of
``src/app/models/verifications.go``) added to Verity's own, which stay as they are. What each
field holds here is in docs/reference/api-behaviour.md ("Socious Verify's fields"). Never
on the unauthenticated answers (status poll, connect): Socious Verify's carried the claims
there too, but the contract takes the decision from the authenticated lookup only.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Row

from app.verifications.compatibility import (
    SOCIOUS_VERIFY,
    requested_claims,
    socious_verify_context,
)
from app.verifications.conditions import MISSING, claim_value
from app.verifications.models import Status


def _time(value) -> str | None:
    return value.isoformat() if value is not None else None


def with_socious_verify_fields(
    answer: dict[str, Any], individual: Any, organization_id: uuid.UUID | None
) -> dict[str, Any]:
    """``answer`` (Verity's shape of ``individual``) with Socious Verify's fields added when
    ``organization_id`` (whoever the integration key authenticated; None: no key) owns the
    verification and chose ``socious-verify``; else ``answer`` unchanged. One read, only when
    a key was sent."""
    if organization_id is None:
        return answer
    context = socious_verify_context(
        individual.verification_id, individual.customer_id, individual.id
    )
    if (
        context is None
        or context.organization_id != organization_id
        or context.api_compatibility != SOCIOUS_VERIFY
    ):
        return answer
    return {**answer, **socious_verify_fields(individual, context)}


def socious_verify_fields(individual: Any, context: Row) -> dict[str, Any]:
    """The fields themselves (``individual`` an Individual or its row)."""
    body = None
    if individual.status == Status.VERIFIED and individual.claims is not None:
        body = {}
        for name in requested_claims(context):
            value = claim_value(individual.claims, name)
            if value is not MISSING:
                body[name] = value
    organization_id = str(context.organization_id)
    connection = individual.connection_request_id
    return {
        "body": body,
        "user_id": organization_id,
        "recipient_id": str(context.recipient_id) if context.recipient_id else None,
        "connection_id": str(connection) if connection else None,
        "present_id": str(context.present_id) if context.present_id else None,
        "verification": _verification(context, organization_id),
    }


def _verification(context: Row, organization_id: str) -> dict[str, Any]:
    schema_created = _time(context.schema_created_at)
    return {
        "id": str(context.verification_id),
        "name": context.verification_name,
        "description": context.verification_description,
        "type": context.verification_type,
        "schema_id": str(context.schema_id),
        "schema": {
            "id": str(context.schema_id),
            "name": context.schema_name,
            "description": context.schema_description,
            "attributes": [
                {
                    # Verity names an attribute by its name, which is what a condition's
                    # attribute_id takes; attributes have no time of their own.
                    "id": attribute["name"],
                    "name": attribute["name"],
                    "description": attribute.get("description"),
                    "type": attribute.get("type", "TEXT"),
                    "created_at": schema_created,
                }
                for attribute in context.schema_attributes or []
            ],
            "created_at": schema_created,
        },
        "user_id": organization_id,
        # Socious Verify put the staff account's record here (email, names, phone); the
        # account that owns a verification is the organization here, and no staff member's
        # personal data goes into a customer's record.
        "user": {"id": organization_id},
        "created_at": _time(context.verification_created_at),
        "updated_at": _time(context.verification_updated_at),
    }
