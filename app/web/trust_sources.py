"""The bodies and answers of the trust sources API, shared by the JSON API and the dashboard's
Trust page so both refuse the same things with the same words."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from app.trust_sources import operations as sources
from app.web.payloads.base import Body, Out

Kind = Literal[
    "PEM",
    "TRUSTED_LIST",
    "LIST_OF_TRUSTED_LISTS",
    "LIST_OF_TRUSTED_ENTITIES",
    "VICAL",
    "WALLET_PROVIDERS",
    "REGISTRARS",
]
PemText = Field(default=None, max_length=sources.MAX_PEM_LENGTH)


class TrustSourceIn(Body):
    name: str = Field(min_length=1, max_length=sources.MAX_NAME_LENGTH)
    kind: Kind
    url: str | None = Field(
        default=None, max_length=sources.MAX_URL_LENGTH, description="Lists: where it is published."
    )
    certificates: str | None = Field(
        default=None,
        max_length=sources.MAX_PEM_LENGTH,
        description="PEM: the anchor certificates (one or more PEM blocks).",
    )
    signer_certificates: str | None = Field(
        default=None,
        max_length=sources.MAX_PEM_LENGTH,
        description=(
            "Lists: PEM certificates allowed to sign the list (a VICAL: the anchors its "
            "signer's chain must lead to)."
        ),
    )
    territories: list[str] = Field(
        default_factory=list,
        max_length=60,
        description="LIST_OF_TRUSTED_LISTS: member states to follow (DE, FR ...); empty: all.",
    )
    service_types: list[str] = Field(
        default_factory=list,
        max_length=30,
        description=(
            "Trusted lists and Lists of Trusted Entities: service type URIs to take; empty: "
            "CA/QC for trusted lists, every type for a List of Trusted Entities."
        ),
    )


class TrustSourcePatch(Body):
    name: str | None = Field(default=None, min_length=1, max_length=sources.MAX_NAME_LENGTH)
    kind: Kind | None = Field(default=None, description="Cannot change; accepted if the same.")
    url: str | None = Field(default=None, max_length=sources.MAX_URL_LENGTH)
    certificates: str | None = PemText
    signer_certificates: str | None = PemText
    territories: list[str] | None = Field(default=None, max_length=60)
    service_types: list[str] | None = Field(default=None, max_length=30)


class ListOut(Out):
    territory: str | None
    url: str | None
    sequence_number: int | None
    issued_at: str | None
    next_update: str | None
    stale: bool
    error: str | None = Field(description="Why this list's last refresh failed (copy kept).")


class TrustSourceOut(Out):
    id: uuid.UUID
    name: str
    kind: Kind
    url: str | None
    certificates: str | None
    signer_certificates: str | None
    territories: list[str]
    service_types: list[str]
    sequence_number: int | None
    issued_at: datetime | None
    next_update: datetime | None
    stale: bool = Field(description="A list kept is past its next update (TRUST_LIST_STALE).")
    refreshed_at: datetime | None = Field(description="When the kept copy was fetched.")
    last_attempt_at: datetime | None
    last_error: str | None = Field(description="Why the last refresh kept the old copy.")
    last_error_at: datetime | None
    certificate_count: int = Field(description="Certificates kept, granted or not.")
    lists: list[ListOut]
    created_at: datetime
    updated_at: datetime


class TrustSourceList(Out):
    results: list[TrustSourceOut]
    total: int


class ServiceTypeOut(Out):
    uri: str
    label: str


class ServiceTypeList(Out):
    results: list[ServiceTypeOut]
    total: int
