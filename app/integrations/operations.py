"""Integration keys: created once, shown once, stored as a hash."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from app import clock
from app.errors import InvalidRequest, NotFound, Unauthorized
from app.extensions import db
from app.integrations.models import Integration
from app.organizations.models import Organization
from app.tokens import hash_secret, new_secret

KEY_PREFIX = "vk_"
# last_used_at is for people ("used today?"); writing it on every call would turn each
# read into a write, so it is refreshed at most this often.
LAST_USED_RESOLUTION = timedelta(minutes=5)


def create_integration(organization: Organization, name: str) -> tuple[str, Integration]:
    name = name.strip()
    if not name:
        raise InvalidRequest("Integration name must not be empty")
    key, digest = new_secret(KEY_PREFIX)
    integration = Integration(
        organization_id=organization.id, name=name, key_prefix=key[:10], key_hash=digest
    )
    db.session.add(integration)
    db.session.flush()
    return key, integration


def list_integrations(organization: Organization) -> list[Integration]:
    return list(
        db.session.scalars(
            select(Integration)
            .where(Integration.organization_id == organization.id)
            .order_by(Integration.created_at)
        )
    )


def get_integration(organization: Organization, integration_id: uuid.UUID) -> Integration:
    """Another organization's integration reads as missing, like an unknown one."""
    integration = db.session.get(Integration, integration_id)
    if integration is None or integration.organization_id != organization.id:
        raise NotFound()
    return integration


def delete_integration(organization: Organization, integration_id: uuid.UUID) -> None:
    db.session.delete(get_integration(organization, integration_id))
    db.session.flush()


def authenticate_key(key: str) -> Organization:
    integration = db.session.scalar(
        select(Integration)
        .options(joinedload(Integration.organization))
        .where(Integration.key_hash == hash_secret(key))
    )
    if integration is None:
        raise Unauthorized("Invalid integration key")
    now = clock.now()
    if integration.last_used_at is None or now - integration.last_used_at > LAST_USED_RESOLUTION:
        integration.last_used_at = now
    return integration.organization
