"""What the person's page reads beyond the domain operations: links, attempts, response codes."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from app import clock
from app.extensions import db
from app.policies.models import PolicyRequest
from app.presentations.operations import holds_response_code
from app.verifications.models import Individual, PresentationAttempt, PresentationRequest

Subject = Individual | PolicyRequest


def answerable(request_id: uuid.UUID | None) -> PresentationRequest | None:
    """The request behind a link, if a wallet can still answer it.

    A link is handed out again for its whole reuse window even once answered; showing an
    answered one would send the person's wallet into a refusal, so the page waits instead.
    """
    if request_id is None:
        return None
    request = db.session.get(PresentationRequest, request_id)
    if request is None or request.consumed_at is not None or request.expires_at <= clock.now():
        return None
    return request


def attempt_count(subject: Subject) -> int:
    """How many presentations the subject has had: a new one ends the wait of an open page."""
    column = (
        PresentationAttempt.individual_id
        if isinstance(subject, Individual)
        else PresentationAttempt.policy_request_id
    )
    return db.session.scalar(select(func.count()).where(column == subject.id)) or 0


def holds_code(subject: Subject, code: str) -> bool:
    """Whether ``code`` was handed out with an answer to one of the subject's requests.

    OpenID4VP 1.0 §13.3: only the browser the wallet returned to holds it, so only that
    browser is shown the result (session fixation). Any of the subject's requests counts,
    since a person may have answered a link that was replaced while they were in the wallet.
    """
    column = (
        PresentationRequest.individual_id
        if isinstance(subject, Individual)
        else PresentationRequest.policy_request_id
    )
    answered = db.session.scalars(
        select(PresentationRequest.id).where(
            column == subject.id, PresentationRequest.response_code_hash.is_not(None)
        )
    )
    return any(holds_response_code(request_id, code) for request_id in answered)
