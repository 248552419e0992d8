"""Integrations: the backend's keys, created and listed."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import Field

from app.web.payloads.base import (
    Body,
    Name,
    Out,
)


class IntegrationIn(Body):
    name: str = Name


class IntegrationOut(Out):
    id: uuid.UUID
    name: str
    key_prefix: str
    created_at: datetime
    last_used_at: datetime | None


class IntegrationCreated(IntegrationOut):
    key: str = Field(description="The Secret Key. Shown once; only its hash is stored.")


class IntegrationList(Out):
    results: list[IntegrationOut]
    total: int
