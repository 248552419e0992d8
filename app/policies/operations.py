"""Policy requests: one-off presentation requests a backend hands to a person."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select

from app import clock
from app.errors import Expired, NotFound
from app.extensions import db
from app.organizations.models import Organization
from app.policies.models import PolicyRequest
from app.policies.tokens import policy_token
from app.presentations import operations as presentations
from app.recipients.operations import get_recipient
from app.tokens import hash_secret
from app.verifications.models import PresentationRequest
from app.verifications.operations import get_verification

DEFAULT_EXPIRES_IN = 900


def create_policy_request(
    organization: Organization,
    verification_id: uuid.UUID,
    recipient_id: uuid.UUID | None,
    expires_in: int,
    secret: str,
) -> tuple[str, PolicyRequest]:
    """A new policy request and its token (the person's page address)."""
    verification = get_verification(organization, verification_id)
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
    )
    db.session.add(policy)
    db.session.flush()
    return token, policy


def policy_status(organization: Organization, policy_id: uuid.UUID) -> PolicyRequest:
    """The request's outcome; 410 once its token expired without one (DESIGN.md 3)."""
    policy = db.session.get(PolicyRequest, policy_id)
    if policy is None or policy.organization_id != organization.id:
        raise NotFound()
    if not policy.is_final() and policy.has_expired():
        raise Expired("The policy request token has expired; create a new policy request")
    return policy


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
