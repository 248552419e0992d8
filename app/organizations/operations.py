"""Organizations, memberships, the acting organization, plans and invitation codes."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.errors import CodeNotFound, Forbidden, InvalidRequest, NotFound, UpgradeRequired
from app.extensions import db
from app.identity.models import User
from app.oid4vp.transaction_data import TYPES as TRANSACTION_DATA_TYPES
from app.organizations.models import (
    ApiCompatibility,
    Membership,
    Organization,
    OrganizationCode,
    Plan,
    Role,
    WalletAttestation,
    check_support_contact,
)
from app.tokens import hash_secret, new_secret

CODE_PREFIX = "vo_"
MANAGING_ROLES = (Role.OWNER, Role.ADMIN)


def memberships_of(user: User) -> list[Membership]:
    """The user's memberships, oldest first: the first one is the default organization."""
    return list(
        db.session.scalars(
            select(Membership)
            .where(Membership.user_id == user.id)
            .order_by(Membership.created_at, Membership.id)
        )
    )


def membership(user: User, organization_id: uuid.UUID) -> Membership | None:
    return db.session.scalar(
        select(Membership).where(
            Membership.user_id == user.id, Membership.organization_id == organization_id
        )
    )


def resolve_acting_membership(user: User, current_identity: str | None) -> Membership | None:
    """The ``current-identity`` header, else the oldest membership."""
    if current_identity is not None and current_identity.strip() != "":
        try:
            organization_id = uuid.UUID(current_identity.strip())
        except ValueError:
            raise Forbidden(
                f"current-identity {current_identity.strip()!r} is not a valid organization ID",
                code="INVALID_IDENTITY",
            ) from None
        found = membership(user, organization_id)
        if found is None:
            raise Forbidden(
                f"current-identity {organization_id} names an organization you are not a member of",
                code="NOT_A_MEMBER",
            )
        return found
    memberships = memberships_of(user)
    return memberships[0] if memberships else None


def create_organization(user: User, name: str, plan: Plan = Plan.FREE) -> Organization:
    """A new organization with ``user`` as its OWNER; new organizations are FREE."""
    name = name.strip()
    if not name:
        raise InvalidRequest("Organization name must not be empty")
    organization = Organization(name=name, plan=plan)
    db.session.add(organization)
    db.session.flush()
    db.session.add(Membership(user_id=user.id, organization_id=organization.id, role=Role.OWNER))
    db.session.flush()
    return organization


def set_support_contact(member: Membership, value: str | None) -> Organization:
    """Owners and admins set how people reach the organization (None or empty removes it)."""
    require_manager(member)
    try:
        checked = check_support_contact(value or "")
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    member.organization.support_contact = checked or None
    db.session.flush()
    return member.organization


def set_api_compatibility(member: Membership, value: str) -> Organization:
    """Owners and admins choose the answer shape their backend reads (a change of what the
    integration keys are answered, so it is theirs, like the keys); audited like every
    change of the organization."""
    require_manager(member)
    try:
        chosen = ApiCompatibility(value)
    except ValueError:
        raise InvalidRequest(
            "api_compatibility must be one of: "
            + ", ".join(kind.value for kind in ApiCompatibility)
        ) from None
    member.organization.api_compatibility = chosen
    db.session.flush()
    return member.organization


def set_transaction_data_types(member: Membership, types: list[str]) -> Organization:
    """Owners and admins choose which transaction data types their backend may attach: what
    the organization's people are asked to authorize is the organization's decision."""
    require_manager(member)
    unknown = [kind for kind in types if kind not in TRANSACTION_DATA_TYPES]
    if unknown:
        raise InvalidRequest(
            f"transaction_data_types: {unknown[0]} is not a type this service sends ("
            + ", ".join(TRANSACTION_DATA_TYPES)
            + ")",
            code="TRANSACTION_DATA_TYPE_UNKNOWN",
        )
    member.organization.transaction_data_types = list(dict.fromkeys(types))
    db.session.flush()
    return member.organization


def organization_for_member(user: User, organization_id: uuid.UUID) -> Organization:
    found = membership(user, organization_id)
    if found is None:
        raise NotFound()
    return found.organization


def require_acting(acting: Membership, organization_id: uuid.UUID) -> None:
    """An action on an organization is taken for the acting one, whose plan and role were
    checked: another organization of the user's is refused (403 NOT_ACTING_ORGANIZATION, with
    how to switch); one the user does not belong to does not exist."""
    if organization_id == acting.organization_id:
        return
    organization_for_member(acting.user, organization_id)
    raise Forbidden(
        f"Organization {organization_id} is not the acting organization; "
        "send current-identity with its ID",
        code="NOT_ACTING_ORGANIZATION",
    )


def members_of(organization: Organization) -> list[Membership]:
    return list(
        db.session.scalars(
            select(Membership)
            .where(Membership.organization_id == organization.id)
            .order_by(Membership.created_at)
        )
    )


def require_paid_plan(organization: Organization, action: str) -> None:
    """The tier gate: FREE organizations get 402 UPGRADE_REQUIRED."""
    if organization.effective_plan() == Plan.FREE:
        raise UpgradeRequired(
            f"{action} needs a paid plan; {organization.name} is on the Free plan",
            organization.id,
        )


def require_manager(member: Membership) -> None:
    if member.role not in MANAGING_ROLES:
        raise Forbidden("Only an owner or admin of the organization may do this")


def set_issuer_settings(member: Membership, wallet_attestation: str) -> Organization:
    """The issuer's settings are the owners' and admins' to change, like its trust."""
    require_manager(member)
    organization = member.organization
    organization.wallet_attestation = WalletAttestation(wallet_attestation)
    db.session.flush()
    return organization


def set_plan(organization: Organization, plan: Plan, expires_at=None) -> Organization:
    organization.plan = plan
    organization.plan_expires_at = expires_at
    db.session.flush()
    return organization


def mint_code(
    member: Membership, days: int, role: Role = Role.MEMBER
) -> tuple[str, OrganizationCode]:
    """An invitation code for ``member``'s organization; returned once, stored hashed."""
    require_manager(member)
    if role == Role.OWNER:
        raise InvalidRequest("An invitation code cannot make its holder an owner")
    value, digest = new_secret(CODE_PREFIX, 12)
    code = OrganizationCode(
        organization_id=member.organization_id,
        code_hash=digest,
        role=role,
        created_by_id=member.user_id,
        expires_at=clock.now() + timedelta(days=days),
    )
    db.session.add(code)
    db.session.flush()
    return value, code


def join_with_code(user: User, value: str) -> Membership:
    """Join the organization behind an invitation code; joining twice is harmless."""
    code = db.session.scalar(
        select(OrganizationCode).where(OrganizationCode.code_hash == hash_secret(value.strip()))
    )
    if code is None or code.expires_at <= clock.now():
        raise CodeNotFound("No such organization code, or it has expired")
    existing = membership(user, code.organization_id)
    if existing is not None:
        return existing
    try:
        with db.session.begin_nested():
            joined = Membership(
                user_id=user.id, organization_id=code.organization_id, role=code.role
            )
            db.session.add(joined)
    except IntegrityError:
        # A concurrent join of the same user won the race (the unique membership): it waited
        # for that commit, so the membership is there to read, and this join is that one.
        existing = membership(user, code.organization_id)
        if existing is None:
            raise
        return existing
    return joined
