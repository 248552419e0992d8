"""Recording, listing and expiring audit events.

Writes are recorded centrally rather than by every operation: the session's ``before_flush``
notes each audited record that is added, changed or deleted, and ``before_commit`` turns the
notes into events in the same transaction (a rolled-back change leaves no event, a committed
one always has its event). A Core ``DELETE`` bypasses the ORM, so an operation that erases
that way calls ``note_deleted`` itself.

Who acted is asked of an actor provider the application factory installs (the domain knows
nothing of requests); no actor means a write nobody on staff made (the person's page, the
wallet, the background jobs), which is not audited here.
"""

from __future__ import annotations

import enum
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import delete, event, func, inspect, select
from sqlalchemy.orm import Session, SessionTransaction

from app.audit.models import AppendOnly, AuditEvent
from app.extensions import db


@dataclass(frozen=True)
class Actor:
    """Who made a change, and from where."""

    type: str  # "user" or "integration"
    id: str
    name: str
    client_ip: str | None


ActorProvider = Callable[[], Actor | None]
_actor_provider: list[ActorProvider] = []
# Who a background job acts for, when it finishes what a person started (a CSV upload).
_acting_for: ContextVar[Actor | None] = ContextVar("audit_acting_for", default=None)

# Audited records, by class name: the name the trail and its filters use.
RECORD_TYPES = {
    "Verification": "verification",
    "Individual": "individual",
    "PolicyRequest": "policy_request",
    "Credential": "credential",
    "Recipient": "recipient",
    "Schema": "schema",
    "Integration": "integration",
    "WebhookEndpoint": "webhook_endpoint",
    "WebhookDelivery": "webhook_delivery",
    "TrustSource": "trust_source",
    "IssuerKey": "issuer_key",
    "IssuerRoot": "issuer_root",
    "VerifierProfile": "verifier_identity",
    "VerifierKey": "verifier_key",
    "RegistrationCertificate": "registration_certificate",
    "MdocSigner": "mdoc_signer",
    "PrismIssuer": "prism_issuer",
    "PinnedPrismDid": "pinned_prism_did",
    "Organization": "organization",
    "Membership": "membership",
    "OrganizationCode": "organization_code",
    "VoucherRedemption": "voucher_redemption",
}
# Bookkeeping that changes on its own (timestamps, counters): no change anyone made.
IGNORED_FIELDS = {"updated_at", "last_used_at", "version", "tx_code_failures"}
# Field names whose values never enter the trail: keys, secrets, codes, and the personal data
# in claims (their names are recorded, their values are not).
SECRET_MARKS = ("hash", "secret", "token", "key", "sealed", "code", "claims", "password", "pem")
# Records whose every value is personal data: only the names of the changed fields are kept.
PERSONAL_RECORDS = {"recipient", "individual"}
# A field that becomes set on an update names the action better than "updated".
ACTION_FIELDS = (
    ("deleted_at", "deleted"),
    ("revoked_at", "revoked"),
    ("disabled_at", "disabled"),
    ("sealed_secret", "secret_rotated"),
    ("published", "published"),
)
# Verbs a record type's writes read better as. Staff make a webhook delivery only by sending
# a test event and change one only by replaying it: the relay and the sends are background
# jobs, which have no actor and are not audited.
RECORD_VERBS = {
    ("webhook_delivery", "created"): "test_sent",
    ("webhook_delivery", "updated"): "replayed",
}
LONGEST_VALUE = 500
_NOTES_KEY = "audit_notes"


def provide_actor(provider: ActorProvider) -> None:
    _actor_provider[:] = [provider]


def current_actor() -> Actor | None:
    acting = _acting_for.get()
    if acting is not None:
        return acting
    return _actor_provider[0]() if _actor_provider else None


@contextmanager
def acting_for(actor: Actor) -> Iterator[None]:
    """Record the writes made inside as ``actor``'s: a job issuing the rows of a CSV upload
    writes what its sender asked for, so the trail names the sender, not nobody."""
    token = _acting_for.set(actor)
    try:
        yield
    finally:
        _acting_for.reset(token)


# How long the running application keeps audit events (AUDIT_RETENTION_DAYS), provided by the
# application factory so the retention job reads it without Flask.
_retention_provider: list[Callable[[], int]] = []


def provide_retention_days(provider: Callable[[], int]) -> None:
    _retention_provider[:] = [provider]


def retention_days() -> int:
    """Days audit events are kept; 0 keeps them for good (and when nothing was provided)."""
    return _retention_provider[0]() if _retention_provider else 0


def listen() -> None:
    if not event.contains(Session, "before_flush", _note_changes):
        event.listen(Session, "before_flush", _note_changes)
        event.listen(Session, "before_commit", _record_notes)
        event.listen(Session, "after_soft_rollback", _forget_notes)


def _notes(session: Session) -> dict[Any, dict[str, Any]]:
    return session.info.setdefault(_NOTES_KEY, {})


def _note_changes(session: Session, *_: Any) -> None:
    for obj in list(session.dirty) + list(session.deleted):
        if isinstance(obj, AuditEvent):
            raise AppendOnly("audit events are append-only")
    if current_actor() is None:
        return
    for verb, objects in (
        ("created", session.new),
        ("updated", session.dirty),
        ("deleted", session.deleted),
    ):
        for obj in objects:
            if type(obj).__name__ in RECORD_TYPES:
                _note(session, obj, verb)


def _note(session: Session, obj: Any, verb: str) -> None:
    state = inspect(obj)
    changed: dict[str, Any] = {}
    for attr in state.mapper.column_attrs:
        history = state.attrs[attr.key].history
        if verb == "created":
            value = getattr(obj, attr.key, None)
            if value is not None and attr.key not in IGNORED_FIELDS | {"id", "created_at"}:
                changed[attr.key] = value
        elif verb == "updated" and history.has_changes() and attr.key not in IGNORED_FIELDS:
            changed[attr.key] = history.added[0] if history.added else None
    if verb == "updated" and not changed:
        return
    # One note per record and (sub)transaction, so a savepoint rolled back takes exactly what
    # was noted inside it; the notes of one record are merged at the commit.
    transaction = _innermost(session)
    note = _notes(session).setdefault(
        (id(obj), transaction), {"obj": obj, "verb": verb, "fields": {}, "transaction": transaction}
    )
    _merge(note, verb, changed)


def _merge(note: dict[str, Any], verb: str, fields: dict[str, Any]) -> None:
    """A record created then changed before the commit is one "created" with the last
    values; a deletion is the last word."""
    if verb == "deleted" or note["verb"] != "created":
        note["verb"] = verb
    note["fields"].update(fields)


def note_deleted(record_type: str, record_id: uuid.UUID, organization_id: uuid.UUID) -> None:
    """Record a deletion made with a Core statement (which the ORM does not see)."""
    actor = current_actor()
    if actor is not None:
        db.session.add(
            _event(actor, f"{record_type}.deleted", record_type, record_id, organization_id, {})
        )


def _record_notes(session: Session) -> None:
    notes = session.info.pop(_NOTES_KEY, None)
    actor = current_actor()
    if not notes or actor is None:
        return
    for note in _by_record(notes).values():
        obj = note["obj"]
        record_type = RECORD_TYPES[type(obj).__name__]
        organization_id = _organization_of(obj)
        if organization_id is None:
            continue
        record_id = getattr(obj, "id", None) or getattr(obj, "organization_id", None)
        verb = _verb(note["verb"], note["fields"])
        action = f"{record_type}.{RECORD_VERBS.get((record_type, verb), verb)}"
        session.add(_event(actor, action, record_type, record_id, organization_id, note["fields"]))
    session.flush()


def _by_record(notes: dict[Any, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    merged: dict[int, dict[str, Any]] = {}
    for note in notes.values():
        record = merged.setdefault(
            id(note["obj"]), {"obj": note["obj"], "verb": note["verb"], "fields": {}}
        )
        _merge(record, note["verb"], note["fields"])
    return merged


def _innermost(session: Session) -> SessionTransaction | None:
    return session.get_nested_transaction() or session.get_transaction()


def _forget_notes(session: Session, rolled_back: SessionTransaction) -> None:
    """A savepoint rolled back (a lost first-use race, say) takes only the notes made inside
    it: the request's other writes still commit, and still need their events."""
    if not rolled_back.nested:
        session.info.pop(_NOTES_KEY, None)
        return
    notes = _notes(session)
    for key, note in list(notes.items()):
        if _within(note["transaction"], rolled_back):
            del notes[key]


def _within(transaction: SessionTransaction | None, ancestor: SessionTransaction) -> bool:
    while transaction is not None:
        if transaction is ancestor:
            return True
        transaction = transaction.parent
    return False


def _verb(verb: str, fields: dict[str, Any]) -> str:
    if verb != "updated":
        return verb
    for field, word in ACTION_FIELDS:
        if field in fields and fields[field] not in (None, False):
            return word
    return verb


def _organization_of(obj: Any) -> uuid.UUID | None:
    if type(obj).__name__ == "Organization":
        return obj.id
    if getattr(obj, "organization_id", None) is not None:
        return obj.organization_id
    # Individuals and policy requests belong to a verification, deliveries to an endpoint.
    owner = getattr(obj, "verification", None) or getattr(obj, "endpoint", None)
    return owner.organization_id if owner is not None else None


def _event(
    actor: Actor,
    action: str,
    record_type: str,
    record_id: Any,
    organization_id: uuid.UUID,
    fields: dict[str, Any],
) -> AuditEvent:
    return AuditEvent(
        organization_id=organization_id,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_name=actor.name,
        action=action,
        record_type=record_type,
        record_id=str(record_id),
        client_ip=actor.client_ip,
        fields=sorted(fields),
        changes={
            name: _shown(value)
            for name, value in fields.items()
            if record_type not in PERSONAL_RECORDS and not is_secret(name)
        },
    )


def is_secret(field: str) -> bool:
    return any(mark in field for mark in SECRET_MARKS)


def _shown(value: Any) -> Any:
    """A value as JSON can hold it; a long one (a certificate, a list's entries) by its size."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return f"({len(value)} bytes)"
    text = json.dumps(value, default=str)
    if len(text) > LONGEST_VALUE:
        return f"({len(text)} characters)"
    return json.loads(text)


# -- reading and expiring ----------------------------------------------------------------------


@dataclass(frozen=True)
class AuditFilter:
    actor: str | None = None
    action: str | None = None
    record_type: str | None = None
    record_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def list_events(
    organization_id: uuid.UUID, chosen: AuditFilter, offset: int, limit: int
) -> tuple[list[AuditEvent], int]:
    """The organization's events matching the filter, newest first."""
    query = select(AuditEvent).where(AuditEvent.organization_id == organization_id)
    if chosen.actor:
        text = chosen.actor.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(
            func.lower(AuditEvent.actor_name).like(f"%{text}%", escape="\\")
            | (AuditEvent.actor_id == chosen.actor)
        )
    if chosen.action:
        query = query.where(
            (AuditEvent.action == chosen.action) | AuditEvent.action.like(f"%.{chosen.action}")
        )
    if chosen.record_type:
        query = query.where(AuditEvent.record_type == chosen.record_type)
    if chosen.record_id:
        query = query.where(AuditEvent.record_id == chosen.record_id)
    if chosen.since:
        query = query.where(AuditEvent.created_at >= chosen.since)
    if chosen.until:
        query = query.where(AuditEvent.created_at < chosen.until)
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(AuditEvent.created_at.desc(), AuditEvent.id).offset(offset).limit(limit)
    ).all()
    return list(rows), total


def actions_in_use(organization_id: uuid.UUID) -> list[str]:
    return list(
        db.session.scalars(
            select(AuditEvent.action)
            .where(AuditEvent.organization_id == organization_id)
            .distinct()
            .order_by(AuditEvent.action)
        )
    )


def expire_events(now: datetime, retention_days: int) -> int:
    """Remove events older than the retention period (the only way one ever leaves)."""
    if retention_days <= 0:
        return 0
    result = db.session.execute(
        delete(AuditEvent)
        .where(AuditEvent.created_at < now - timedelta(days=retention_days))
        .execution_options(synchronize_session=False)
    )
    return result.rowcount
