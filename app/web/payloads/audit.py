"""The audit log's answers."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.web.payloads.base import (
    Out,
)


class AuditActorOut(Out):
    type: Literal["user", "integration"]
    id: str
    name: str = Field(description="The user's email, or the integration's name")


class AuditEventOut(Out):
    id: uuid.UUID
    created_at: datetime
    actor: AuditActorOut
    action: str = Field(description="record type and verb: credential.revoked, integration.deleted")
    record_type: str
    record_id: str
    client_ip: str | None
    fields: list[str] = Field(description="Names of every field the write set or changed")
    changes: dict[str, Any] = Field(
        description="New values of those fields, except secrets, keys, codes, claims and "
        "personal data, which are named in fields only"
    )


class AuditEventList(Out):
    results: list[AuditEventOut]
    total: int
