"""Recipients: the people an organization issues credentials to."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import Field

from app.web.payloads.base import (
    Body,
    Name,
    Out,
)


class RecipientIn(Body):
    first_name: str = Name
    last_name: str = Name
    email: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    customer_id: str | None = Field(default=None, max_length=200)


class RecipientPatch(Body):
    id: uuid.UUID | None = None
    first_name: str | None = Field(default=None, min_length=1, max_length=200)
    last_name: str | None = Field(default=None, min_length=1, max_length=200)
    email: str | None = Field(
        default=None, min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$"
    )
    customer_id: str | None = Field(default=None, max_length=200)


class RecipientRef(Body):
    id: uuid.UUID


class RecipientOut(Out):
    id: uuid.UUID
    first_name: str
    last_name: str
    email: str
    customer_id: str | None
    created_at: datetime
    updated_at: datetime


class RecipientList(Out):
    results: list[RecipientOut]
    total: int
