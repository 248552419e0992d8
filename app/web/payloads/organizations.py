"""Organizations and the people in them: create and settings, members, join codes, the
signed-in user (``/me``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from app.organizations.models import Plan, Role
from app.web.payloads.base import (
    Body,
    Name,
    Out,
)


class OrganizationIn(Body):
    name: str = Name


SUPPORT_CONTACT = (
    "How the people it verifies or issues to reach the organization: an email address or an "
    "https:// address, named on their pages when a check fails; null removes it."
)


API_COMPATIBILITY = (
    "The answer shape the organization's backend reads: verity (Verity's fields only, the "
    "default) or socious-verify (Socious Verify's lookup fields too, body, user_id, "
    "recipient_id, connection_id, present_id and verification, in the apikey lookup and in "
    "opens made with the organization's integration key; never in the unauthenticated answers)."
)


TRANSACTION_DATA_TYPES = (
    "The OpenID4VP transaction data types its backend may attach to individuals and policy "
    "requests (transaction_data): urn:eudi:sca:payment:1 (EUDI TS12 payment confirmation), "
    "qes_authorization and qcert_creation_acceptance (remote qualified signing). None until "
    "enabled; a type not listed is refused (400 TRANSACTION_DATA_TYPE_NOT_ENABLED)."
)


class OrganizationPatch(Body):
    support_contact: str | None = Field(default=None, max_length=320, description=SUPPORT_CONTACT)
    # Left out keeps the setting; null is refused like any unknown shape (the default is
    # never validated, so it only marks "not sent").
    api_compatibility: Literal["verity", "socious-verify"] = Field(
        default=None,  # type: ignore[assignment]
        description=API_COMPATIBILITY + " Owners and admins only; left out keeps it.",
    )
    transaction_data_types: list[
        Literal["urn:eudi:sca:payment:1", "qes_authorization", "qcert_creation_acceptance"]
    ] = Field(
        default=None,  # type: ignore[assignment]
        max_length=3,
        description=TRANSACTION_DATA_TYPES + " Owners and admins only; left out keeps it, [] "
        "disables all.",
    )


class OrganizationOut(Out):
    id: uuid.UUID
    name: str
    plan: Plan
    plan_expires_at: datetime | None
    wallet_attestation: Literal["required", "optional", "off"]
    created_at: datetime
    support_contact: str | None = Field(default=None, description=SUPPORT_CONTACT)
    api_compatibility: Literal["verity", "socious-verify"] = Field(
        default="verity", description=API_COMPATIBILITY
    )
    transaction_data_types: list[str] = Field(
        default_factory=list, description=TRANSACTION_DATA_TYPES
    )


class IssuerSettingsIn(Body):
    wallet_attestation: Literal["required", "optional", "off"] = Field(
        description="Wallet attestation (attest_jwt_client_auth) at the issuer's PAR and token "
        "endpoints: required (DIDComm offers are then refused), optional (checked when sent) "
        "or off"
    )


class MembershipOut(Out):
    organization: OrganizationOut
    role: Role
    joined_at: datetime


class MemberOut(Out):
    user_id: uuid.UUID
    email: str
    name: str
    role: Role
    joined_at: datetime


class OrganizationDetail(OrganizationOut):
    role: Role
    members: list[MemberOut]


class OrganizationList(Out):
    results: list[MembershipOut]
    total: int


class CodeIn(Body):
    days: int = Field(default=7, ge=1, le=90)
    role: Literal["ADMIN", "MEMBER"] = "MEMBER"


class CodeOut(Out):
    code: str
    organization_id: uuid.UUID
    role: Role
    expires_at: datetime


class JoinIn(Body):
    code: str = Field(min_length=1, max_length=200)


class UserOut(Out):
    id: uuid.UUID
    email: str
    name: str


class MeOut(Out):
    user: UserOut
    memberships: list[MembershipOut]
    default_organization_id: uuid.UUID | None
    acting_organization_id: uuid.UUID | None
