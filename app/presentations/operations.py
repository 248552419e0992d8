"""Receiving a wallet's response: single use, decided, recorded, and applied to its subject.

Replays and unknown state are refused with 400 and change nothing; a response that arrives
properly is consumed at once (atomically, so of concurrent posts exactly one goes on) and then
decided. Every attempt is kept for the organization's audit view, with only the requested
claims.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select, update

from app import clock
from app.errors import InvalidRequest, NotFound
from app.extensions import db
from app.policies.models import PolicyRequest
from app.presentations.decide import Context, Decision, Rules, decide
from app.tokens import hash_secret, same
from app.verifications.models import (
    Individual,
    PresentationAttempt,
    PresentationRequest,
    Status,
    Verification,
)

CREDENTIAL_QUERY_ID = "credential"
MAX_PRESENTATIONS = 1


@dataclass(frozen=True)
class Received:
    """What the wallet is told, and what the page behind the redirect should show."""

    decision: Decision
    subject: Individual | PolicyRequest
    response_code: str


def presentation_from_vp_token(raw: str | None) -> str:
    """OpenID4VP 1.0 §8.1: ``vp_token`` is a JSON object keyed by DCQL credential query ID whose
    values are arrays of presentations. One credential is asked for, so one is expected."""
    if not raw:
        raise InvalidRequest("vp_token is missing", code="INVALID_RESPONSE")
    try:
        token = json.loads(raw)
    except ValueError:
        raise InvalidRequest("vp_token is not a JSON object", code="INVALID_RESPONSE") from None
    if not isinstance(token, dict) or CREDENTIAL_QUERY_ID not in token:
        raise InvalidRequest(
            f"vp_token has no '{CREDENTIAL_QUERY_ID}' entry", code="INVALID_RESPONSE"
        )
    value = token[CREDENTIAL_QUERY_ID]
    if isinstance(value, list):
        if not value or len(value) > MAX_PRESENTATIONS or not isinstance(value[0], str):
            raise InvalidRequest("vp_token must carry one presentation", code="INVALID_RESPONSE")
        value = value[0]
    if not isinstance(value, str):
        raise InvalidRequest("vp_token's presentation is not a string", code="INVALID_RESPONSE")
    return value


def pending_request(request_id: uuid.UUID, state: str | None) -> PresentationRequest:
    """The request a response answers; refuses unknown, mismatched, answered or expired ones."""
    request = db.session.get(PresentationRequest, request_id)
    if request is None:
        raise NotFound()
    if state is not None and not same(state, request.state):
        raise InvalidRequest("state does not match this request", code="INVALID_STATE")
    if request.consumed_at is not None:
        raise InvalidRequest("This request was already answered", code="ALREADY_ANSWERED")
    if request.expires_at <= clock.now():
        raise InvalidRequest("This request has expired; open a fresh link", code="REQUEST_EXPIRED")
    return request


def consume(request: PresentationRequest) -> None:
    """Mark the request answered; a concurrent second answer finds it taken and is refused."""
    taken = db.session.execute(
        update(PresentationRequest)
        .where(PresentationRequest.id == request.id, PresentationRequest.consumed_at.is_(None))
        .values(consumed_at=clock.now())
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:
        raise InvalidRequest("This request was already answered", code="ALREADY_ANSWERED")
    db.session.refresh(request)


def subject_of(request: PresentationRequest) -> tuple[Individual | PolicyRequest, Verification]:
    if request.individual_id is not None:
        individual = db.session.get(Individual, request.individual_id)
        return individual, individual.verification
    policy = db.session.get(PolicyRequest, request.policy_request_id)
    return policy, policy.verification


def rules_for(verification: Verification) -> Rules:
    return Rules(
        vct=verification.schema.vct,
        requested_claims=verification.requested_claims(),
        conditions=verification.attributes,
        trusted_issuers=verification.trusted_issuers,
    )


def receive(
    request_id: uuid.UUID,
    state: str | None,
    vp_token: str | None,
    audience: Callable[[PresentationRequest], str],
    context: Callable[[str, str], Context],
) -> Received:
    """Decide one response to ``request_id`` and apply it.

    ``audience`` gives the client ID the key binding must name (it depends on the channel);
    ``context(audience, nonce)`` gives the deployment's trust settings.
    """
    request = pending_request(request_id, state)
    presentation = presentation_from_vp_token(vp_token)
    consume(request)
    subject, verification = subject_of(request)
    decision = decide(
        presentation, rules_for(verification), context(audience(request), request.nonce)
    )
    record(request, subject, decision)
    code = secrets.token_urlsafe(24)
    request.response_code_hash = hash_secret(code)
    db.session.flush()
    return Received(decision, subject, code)


def record(
    request: PresentationRequest, subject: Individual | PolicyRequest, decision: Decision
) -> None:
    """Keep the attempt; move the subject unless it is already VERIFIED (final)."""
    outcome = Status.VERIFIED if decision.verified else Status.FAILED
    db.session.add(
        PresentationAttempt(
            request_id=request.id,
            individual_id=request.individual_id,
            policy_request_id=request.policy_request_id,
            outcome=outcome,
            validation_error=decision.reason,
            issuer=decision.issuer,
        )
    )
    if subject.status == Status.VERIFIED:
        return
    subject.status = outcome
    subject.validation_error = decision.reason
    subject.issuer = decision.issuer
    if decision.verified:
        subject.claims = decision.claims
        subject.verified_at = clock.now()
    db.session.flush()


def holds_response_code(request_id: uuid.UUID, code: str | None) -> bool:
    """Whether a browser's ``response_code`` is the one handed out for this request."""
    if not code:
        return False
    stored = db.session.scalar(
        select(PresentationRequest.response_code_hash).where(PresentationRequest.id == request_id)
    )
    return stored is not None and same(stored, hash_secret(code))


def attempts_of(individual: Individual) -> list[PresentationAttempt]:
    return list(
        db.session.scalars(
            select(PresentationAttempt)
            .where(PresentationAttempt.individual_id == individual.id)
            .order_by(PresentationAttempt.created_at)
        )
    )
