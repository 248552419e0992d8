"""Integration keys: created once, shown once, stored as a hash."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from sqlalchemy import select, update

from app import clock
from app.database import in_read_only_view, write_aside
from app.errors import InvalidRequest, NotFound, Unauthorized
from app.extensions import db
from app.integrations.models import Integration
from app.organizations.models import Organization
from app.tokens import hash_secret, new_secret

log = logging.getLogger(__name__)

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
        select(Integration).where(Integration.key_hash == hash_secret(key))
    )
    if integration is None:
        raise Unauthorized("Invalid integration key")
    now = clock.now()
    if integration.last_used_at is None or now - integration.last_used_at > LAST_USED_RESOLUTION:
        if in_read_only_view():
            record_use_aside(integration.id, now)
        else:
            integration.last_used_at = now
    # Measured: a plain get by primary key is cheaper than a joined load or the lazy load.
    organization = db.session.get(Organization, integration.organization_id)
    assert organization is not None  # the foreign key cascades deletes
    return organization


def record_use_aside(integration_id: uuid.UUID, when: datetime) -> None:
    """Note a key's use in a short transaction of its own, for views that only read: their
    own transaction must not write. Bookkeeping for people, so a busy database skips it."""
    recorded = write_aside(
        db.engine,
        update(Integration).where(Integration.id == integration_id).values(last_used_at=when),
    )
    if not recorded:
        log.warning("an integration key's use was not recorded: the database was busy")
