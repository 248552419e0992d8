"""Integration keys: created once, shown once, stored as a hash."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from sqlalchemy import bindparam, select, update

from app import clock
from app.database import in_read_only_view, read_row, write_aside
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


# The key check every apikey request makes, built once (Core, a bound parameter).
_KEY = Integration.__table__
_KEY_BY_HASH = select(_KEY.c.id, _KEY.c.organization_id, _KEY.c.last_used_at).where(
    _KEY.c.key_hash == bindparam("key_hash")
)


def authenticate_key(key: str) -> tuple[uuid.UUID, uuid.UUID]:
    """The integration an integration key belongs to and its organization, as IDs; 401 for
    an unknown key.

    One Core read, no ORM object: most apikey requests need only the ID, and the
    organization itself is loaded when a view asks for it.
    """
    found = read_row(db.engine, _KEY_BY_HASH, {"key_hash": hash_secret(key)})
    if found is None:
        raise Unauthorized("Invalid integration key")
    now = clock.now()
    last_used = found.last_used_at
    if last_used is None or now - last_used > LAST_USED_RESOLUTION:
        if in_read_only_view():
            record_use_aside(found.id, now)
        else:
            db.session.execute(
                update(Integration).where(Integration.id == found.id).values(last_used_at=now)
            )
    return found.id, found.organization_id


def organization_of_key(organization_id: uuid.UUID) -> Organization:
    organization = db.session.get(Organization, organization_id)
    if organization is None:  # the key's organization was deleted meanwhile
        raise Unauthorized("Invalid integration key")
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
