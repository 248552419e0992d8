"""Policy requests: the backend's one-off verification requests and their status."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from app.verifications.models import (
    Status,
)
from app.web.payloads.base import (
    Body,
    Out,
)
from app.web.payloads.individuals import TRANSACTION_DATA_IN, TRANSACTION_DATA_OUT


class PolicyRequestIn(Body):
    verification_id: uuid.UUID
    recipient_id: uuid.UUID | None = None
    expires_in: int = Field(default=900, ge=1, le=86400)
    registration_certificate_id: uuid.UUID | None = Field(
        default=None,
        description="The registration certificate (ETSI TS 119 475) the request is made under; "
        "left out: its verification's. The verification's query must stay within it (400 "
        "`OUTSIDE_REGISTRATION`)",
    )
    transaction_data: list[dict[str, Any]] | None = Field(
        default=None, min_length=1, max_length=10, description=TRANSACTION_DATA_IN
    )


class PolicyRequestOut(Out):
    id: uuid.UUID
    token: str
    url: str
    expires_at: datetime
    status: Status


class PolicyStatusOut(Out):
    id: uuid.UUID
    verification_id: uuid.UUID
    recipient_id: uuid.UUID | None
    status: Status
    validation_error: str | None
    claims: dict[str, Any] | None
    issuer: str | None
    expires_at: datetime
    verified_at: datetime | None
    created_at: datetime
    transaction_data: list[dict[str, Any]] | None = Field(
        default=None, description=TRANSACTION_DATA_OUT
    )
