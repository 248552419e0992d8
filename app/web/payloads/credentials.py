"""Credentials: the answers of the staff API's /credentials."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from app.web.payloads.base import (
    Out,
)


class CredentialClaimOut(Out):
    name: str
    value: str | bool | int | float


class CredentialOut(Out):
    """A credential; the offer's link only while it can be taken."""

    id: uuid.UUID
    name: str
    description: str
    schema_id: uuid.UUID
    recipient_id: uuid.UUID
    claims: list[CredentialClaimOut]
    status: Literal["OFFERED", "ISSUED", "REVOKED", "EXPIRED"]
    issuer: str
    protocol: Literal["openid4vci", "didcomm"] = Field(
        default="openid4vci",
        description="How the wallet takes it; a DIDComm offer's offer_url is its out-of-band "
        "invitation (<PUBLIC_URL>/didcomm/invitation?_oob=...).",
    )
    offer_url: str | None
    offer_page: str | None
    offer_expires_at: datetime | None
    tx_code_required: bool
    issued_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None
    created_at: datetime
    updated_at: datetime


class CredentialCreated(CredentialOut):
    """With the transaction code in clear, in this response only, when one was asked for."""

    tx_code: str | None = None


class CredentialList(Out):
    results: list[CredentialOut]
    total: int
