"""Policy requests: one-off presentation requests a backend hands to a person."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, exists, select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.audit import operations as audit
from app.errors import Expired, NotFound
from app.extensions import db
from app.organizations.models import Organization
from app.policies.models import PolicyRequest
from app.policies.tokens import policy_token
from app.presentations import operations as presentations
from app.recipients.operations import get_recipient
from app.tokens import hash_secret
from app.verifications.models import PresentationRequest, Status
from app.verifications.operations import get_verification
from app.verifications.profile import require_verification_format
from app.verifications.transaction_data import prepared_for
from app.verifier_identity import registration
from app.webhooks import outbox
from app.webhooks.models import WebhookEvent

DEFAULT_EXPIRES_IN = 900
# Expiry is a moment, not a write: a scheduled job reports requests that lapsed this recently
# (it runs every minute, so a day is ample and keeps its scan short).
EXPIRY_REPORT_WINDOW = timedelta(days=1)
EXPIRY_REPORT_BATCH = 500


def create_policy_request(
    organization: Organization,
    verification_id: uuid.UUID,
    recipient_id: uuid.UUID | None,
    expires_in: int,
    secret: str,
    registration_certificate_id: uuid.UUID | None = None,
    transaction_data: list[Any] | None = None,
) -> tuple[str, PolicyRequest]:
    """A new policy request and its token (the person's page address), with the transaction
    data the person is asked to authorize, if any (``app.verifications.transaction_data``). It
    is made under the registration certificate named, which the verification's query must stay
    within, else under its verification's (or the organization's only one, if the verification
    has none)."""
    verification = get_verification(organization, verification_id)
    require_verification_format(verification)
    own = registration_certificate_id
    if own is not None or verification.registration_certificate_id is None:
        # Named, or the verification has none (saved before one was uploaded): the one named,
        # else the organization's only one, else none (refused where one is required).
        record = registration.choose(organization.id, own, None, verification.relying_party)
        if record is not None:
            registration.require_within(
                record, verification.schema.credential_type(), verification.requested_claims()
            )
        own = record.id if record is not None else None
    sent = None if transaction_data is None else prepared_for(verification, transaction_data)
    if recipient_id is not None:
        get_recipient(organization, recipient_id)
    policy_id = uuid.uuid4()
    token = policy_token(secret, policy_id)
    digest = hash_secret(token)
    policy = PolicyRequest(
        id=policy_id,
        organization_id=organization.id,
        verification_id=verification.id,
        recipient_id=recipient_id,
        token_hash=digest,
        expires_at=clock.now() + timedelta(seconds=expires_in),
        registration_certificate_id=own,
        transaction_data=sent,
    )
    db.session.add(policy)
    db.session.flush()
    return token, policy


def policy_status(organization: Organization, policy_id: uuid.UUID) -> PolicyRequest:
    """The request's outcome; 410 once its token expired without one."""
    policy = db.session.get(PolicyRequest, policy_id)
    if policy is None or policy.organization_id != organization.id:
        raise NotFound()
    if not policy.is_final() and policy.has_expired():
        raise Expired("The policy request token has expired; create a new policy request")
    return policy


def erase_policy_request(organization: Organization, policy_id: uuid.UUID) -> None:
    """Erase a policy request on request: the request, its claims, its presentation requests
    and attempts, and the webhook events about it, as a person's record is erased
    (``erase_individual``); nothing of it is kept, not even the outcome."""
    policy = db.session.get(PolicyRequest, policy_id)
    if policy is None or policy.organization_id != organization.id:
        raise NotFound()
    # Undelivered events about it are not sent (deliveries and attempts go with them,
    # ON DELETE CASCADE).
    db.session.execute(
        delete(WebhookEvent)
        .where(WebhookEvent.subject_id == policy.id)
        .execution_options(synchronize_session=False)
    )
    # Its presentation requests and their attempts go with it (ON DELETE CASCADE).
    db.session.execute(
        delete(PolicyRequest)
        .where(PolicyRequest.id == policy.id)
        .execution_options(synchronize_session=False)
    )
    audit.note_deleted("policy_request", policy.id, organization.id)
    db.session.expunge(policy)


def policy_for_token(token: str) -> PolicyRequest:
    policy = db.session.scalar(
        select(PolicyRequest).where(PolicyRequest.token_hash == hash_secret(token))
    )
    if policy is None:
        raise NotFound()
    return policy


def connect_policy(
    token: str, link_seconds: int, request_seconds: int
) -> tuple[PolicyRequest, PresentationRequest | None]:
    """The policy page's current presentation request: the same one within the link window.

    A final policy request gets none; an expired one without a result is 410 EXPIRED.
    """
    policy = policy_for_token(token)
    db.session.refresh(policy, with_for_update=True)
    return policy, presentations.connect(policy, link_seconds, request_seconds)


def report_expired() -> int:
    """Write ``policy_request.expired`` for each request that lapsed without a result, once:
    a partial unique index on the events keeps a second sweep (or a second worker) from
    writing it again. Every organization's are: its log feeds event streams as well as
    webhook endpoints."""
    now = clock.now()
    lapsed = db.session.scalars(
        select(PolicyRequest)
        .where(
            PolicyRequest.expires_at <= now,
            PolicyRequest.expires_at > now - EXPIRY_REPORT_WINDOW,
            PolicyRequest.status.in_((Status.CREATED, Status.REQUESTED)),
            ~exists().where(
                WebhookEvent.subject_id == PolicyRequest.id,
                WebhookEvent.type == "policy_request.expired",
            ),
        )
        .order_by(PolicyRequest.expires_at)
        .limit(EXPIRY_REPORT_BATCH)
    ).all()
    written = 0
    for policy in lapsed:
        try:
            with db.session.begin_nested():
                outbox.emit("policy_request.expired", policy, policy.organization_id, policy.id)
                db.session.flush()
            written += 1
        except IntegrityError:
            continue  # another sweep wrote it first
    return written
