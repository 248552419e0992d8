"""Signing in to the staff API: the identity provider's address and the session token."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from app.web.payloads.base import (
    Body,
    Out,
)


class AuthIn(Body):
    return_to: str | None = Field(
        default=None,
        max_length=2000,
        description="Where the callback sends the browser with code and state.",
    )


class AuthOut(Out):
    auth_url: str


class SessionIn(Body):
    code: str = Field(min_length=1, max_length=2000)
    state: str = Field(min_length=1, max_length=200)


class SessionOut(Out):
    token: str
    token_type: Literal["Bearer"] = "Bearer"
    expires_at: datetime
