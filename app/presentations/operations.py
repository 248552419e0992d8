"""Presentation requests and their subjects: links handed out, responses received, outcomes.

An individual and a policy request are both subjects (``PresentationSubject``): one
``connect`` hands out their current link, and ``set_status`` is the one place a subject's
status changes, so whatever must follow a change (a notification) hooks in there.

Replays and unknown state are refused with 400 and change nothing; a response that arrives
properly is decided first (fetching issuer keys and status lists, with no transaction open),
then consumed atomically (of concurrent posts exactly one goes on) and recorded in one short
write transaction. Every attempt is kept for the organization's audit view, with only the
requested claims.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, func, inspect, select, update
from sqlalchemy.orm import joinedload

from app import clock, json_input, metrics
from app.database import read_row, reading
from app.errors import Expired, InvalidRequest, NotFound
from app.extensions import db
from app.oid4vp.formats import JWT_VC_JSON
from app.presentations.decide import Context, Decision, Rules, decide
from app.presentations.issuers_seen import pinned_documents
from app.presentations.reasons import family_of
from app.tokens import hash_secret, same
from app.trust_sources.use import chosen_sources, source_trust
from app.vcjwt.learned import issuer_long_form
from app.verifications.models import (
    TRANSITIONS,
    Individual,
    PresentationAttempt,
    PresentationRequest,
    PresentationSubject,
    Status,
    Verification,
)
from app.verifications.operations import get_individual
from app.verifications.profile import require_verification_format
from app.verifier_identity.operations import active_key_id
from app.webhooks import outbox

CREDENTIAL_QUERY_ID = "credential"
MAX_PRESENTATIONS = 1


@dataclass(frozen=True)
class Received:
    """What the wallet is told, and what the page behind the redirect should show."""

    decision: Decision
    subject: PresentationSubject
    response_code: str


# -- subjects and their links ----------------------------------------------------------------


def set_status(
    subject: PresentationSubject, status: Status, decision: Decision | None = None
) -> bool:
    """Move ``subject`` to ``status`` if the status machine allows it, with the outcome that
    decided it; returns whether it moved.

    The one place a subject's status and outcome change (``TRANSITIONS`` says which moves
    exist), so whatever must follow a change (a notification) hooks in here.
    """
    if status not in TRANSITIONS[subject.status]:
        return False
    subject.status = status
    if decision is not None:
        subject.validation_error = decision.reason
        subject.failed_conditions = decision.failed_conditions or None
        subject.issuer = decision.issuer
        if decision.verified:
            subject.verified_at = clock.now()
            keep_claims(subject, decision)
    _notify(subject, status)
    return True


def keep_claims(subject: PresentationSubject, decision: Decision) -> None:
    """Keep the decision's claims, unless the verification keeps none (``retention_days`` 0);
    an individual also keeps where its credential's status can be checked again."""
    if subject.verification.retention_days <= 0:
        return
    subject.claims = decision.claims
    if isinstance(subject, Individual) and decision.status_reference is not None:
        subject.status_reference = decision.status_reference
        subject.status_checked_at = subject.verified_at


def _notify(subject: PresentationSubject, status: Status) -> None:
    """The webhook event of a status change, in the same transaction (the outbox)."""
    kind = "individual" if subject.request_key == "individual_id" else "policy_request"
    event_type = f"{kind}.{status.value.lower()}"
    if event_type in outbox.EVENT_TYPES:
        outbox.emit(event_type, subject, subject.verification.organization_id, subject.id)


# What must exist before a link is handed out (the organization's DIDComm DID, which an
# invitation comes from), registered by the parts that need it: this one imports none of them.
_before_link: list[Callable[[Verification], None]] = []


def before_link(prepare: Callable[[Verification], None]) -> None:
    """Run ``prepare(verification)`` in the transaction that mints each new request."""
    if prepare not in _before_link:
        _before_link.append(prepare)


def mint_presentation_request(
    subject: PresentationSubject, link_seconds: int, request_seconds: int
) -> PresentationRequest:
    """A new OpenID4VP request (fresh nonce and state) for ``subject``.

    It stays answerable a while after its link stops being handed out, so that a person who
    scans at the last second still has time to finish in the wallet.
    """
    # A verification saved before the profile was set makes no request HAIP does not allow.
    require_verification_format(subject.verification)
    now = clock.now()
    request = PresentationRequest.for_subject(
        subject,
        nonce=secrets.token_urlsafe(24),
        state=secrets.token_urlsafe(24),
        created_at=now,
        expires_at=now + timedelta(seconds=max(request_seconds, link_seconds)),
        # The organization's own identity (or that of the relying party an intermediary's
        # verification is for), if one is in use: the request keeps it even if the
        # organization rotates while the person is in their wallet.
        verifier_key_id=active_key_id(
            subject.verification.organization_id, subject.verification.relying_party
        ),
    )
    db.session.add(request)
    for prepare in _before_link:
        prepare(subject.verification)
    db.session.flush()
    return request


def connect_individual(
    individual_id: uuid.UUID, link_seconds: int, request_seconds: int, load: Sequence[Any] = ()
) -> Individual:
    """Hand out the individual's connection link: the same one within the reuse window.

    A read first: within the window (every poll of an open page but one in sixty) nothing is
    written, so no write lock is taken. Otherwise the row is locked so that concurrent calls
    agree on one link instead of minting two. A VERIFIED individual is final and gets no new
    link.
    """
    fresh = not db.session().in_transaction()
    if fresh:
        with reading():
            individual = get_individual(individual_id, load=load)
            if individual.is_final() or link_is_current(individual, link_seconds):
                return individual
        # End the reading transaction so the locked one begins IMMEDIATE on SQLite.
        db.session.rollback()
    individual = get_individual(individual_id, lock=True, load=load)
    connect(individual, link_seconds, request_seconds)
    return individual


def link_is_current(subject: PresentationSubject, link_seconds: int) -> bool:
    """Whether the subject's link is still within its reuse window: nothing to mint."""
    return (
        subject.connection_request_id is not None
        and subject.connection_at is not None
        and clock.now() - subject.connection_at < timedelta(seconds=link_seconds)
    )


def connect(
    subject: PresentationSubject, link_seconds: int, request_seconds: int
) -> PresentationRequest | None:
    """The subject's current presentation request: the same one within the link window.

    ``subject`` must have been read with a row lock, so that concurrent calls agree on one
    link instead of minting two. A final subject gets none; an expired one is 410 EXPIRED.
    """
    if subject.is_final():
        return None
    if subject.has_expired():
        raise Expired("This request has expired; ask the organization for a new one")
    now = clock.now()
    if link_is_current(subject, link_seconds):
        return db.session.get(PresentationRequest, subject.connection_request_id)
    request = mint_presentation_request(subject, link_seconds, request_seconds)
    subject.connection_request_id = request.id
    subject.connection_at = now
    set_status(subject, Status.REQUESTED)
    db.session.flush()
    return request


def answerable_and_attempts(
    subject: PresentationSubject, request_id: uuid.UUID | None
) -> tuple[uuid.UUID | None, int]:
    """The request behind the subject's link if a wallet can still answer it, and how many
    presentations the subject has had: what the person's page shows, in one read built once
    per kind of subject (two ORM loads before).

    A link is handed out again for its whole reuse window even once answered; showing an
    answered one would send the person's wallet into a refusal, so the page waits instead.
    """
    row = db.session.execute(
        _page_read(subject.request_key),
        {"subject": subject.id, "request": request_id, "now": clock.now()},
    ).one()
    return (row.answerable if request_id is not None else None), row.attempts or 0


@functools.cache
def _page_read(request_key: str) -> Select[tuple[uuid.UUID | None, int]]:
    attempts = (
        select(func.count())
        .select_from(PresentationAttempt)
        .join(PresentationAttempt.request)
        .where(getattr(PresentationRequest, request_key) == bindparam("subject"))
        .scalar_subquery()
    )
    answerable = (
        select(PresentationRequest.id)
        .where(
            PresentationRequest.id == bindparam("request"),
            PresentationRequest.consumed_at.is_(None),
            PresentationRequest.expires_at > bindparam("now"),
        )
        .scalar_subquery()
    )
    return select(answerable.label("answerable"), attempts.label("attempts"))


# -- responses -------------------------------------------------------------------------------


def presentation_from_vp_token(raw: str | None) -> str:
    """OpenID4VP 1.0 §8.1: ``vp_token`` is a JSON object keyed by DCQL credential query ID whose
    values are arrays of presentations. One credential is asked for, so one is expected."""
    if not raw:
        raise InvalidRequest("vp_token is missing", code="INVALID_RESPONSE")
    try:
        token = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        raise InvalidRequest(
            f"vp_token is not a JSON object: {exc}", code="INVALID_RESPONSE"
        ) from None
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


def _policy_request() -> type[PresentationSubject]:
    """The other kind of subject, found through the request's relationship: the policies
    package builds on this one, so this one does not import it."""
    return inspect(PresentationRequest).relationships["policy_request"].mapper.class_


@functools.cache
def _deciding() -> tuple[Any, ...]:
    """What deciding a response reads: the request, its subject, the subject's verification
    and schema, in one joined query instead of four (measured: a third of a direct_post's
    time went to these reads)."""
    return tuple(
        joinedload(relation).joinedload(subject.verification).joinedload(Verification.schema)
        for relation, subject in (
            (PresentationRequest.individual, Individual),
            (PresentationRequest.policy_request, _policy_request()),
        )
    )


def pending_request(
    request_id: uuid.UUID, state: str | None, received_at: datetime | None = None
) -> PresentationRequest:
    """The request a response answers; refuses unknown, mismatched, answered or expired ones
    (expired when the response was received: ``received_at``, now unless it was kept)."""
    request = db.session.get(PresentationRequest, request_id, options=_deciding())
    if request is None:
        raise NotFound()
    if state is not None and not same(state, request.state):
        raise InvalidRequest("state does not match this request", code="INVALID_STATE")
    refuse_closed(request, received_at)
    refuse_settled(request.subject)
    return request


def refuse_settled(subject: PresentationSubject) -> None:
    """A subject whose outcome is final, or that expired, takes no answer on any of its links:
    the refusal a wallet gets for an answered or expired request, and nothing changes. A
    FAILED individual may still answer (it retries); a FAILED policy request may not."""
    if subject.is_final():
        raise InvalidRequest(
            "This request was already answered on another link", code="ALREADY_ANSWERED"
        )
    if subject.has_expired():
        raise InvalidRequest("This request has expired", code="REQUEST_EXPIRED")


def refuse_closed(request: PresentationRequest, at: datetime | None = None) -> None:
    """An answered or expired request takes no answer and hands out nothing more (its
    org-iso-mdoc recipient key is then never derived again)."""
    if request.consumed_at is not None:
        raise InvalidRequest("This request was already answered", code="ALREADY_ANSWERED")
    if request.expires_at <= (at or clock.now()):
        raise InvalidRequest("This request has expired; open a fresh link", code="REQUEST_EXPIRED")


def consume(request_id: uuid.UUID, response_code_hash: str | None = None) -> PresentationRequest:
    """Mark the request answered, with the hash of the code its browser is given; a concurrent
    second answer finds it taken and is refused.

    One conditional UPDATE that returns the row it changed (SQLite 3.35 and PostgreSQL both
    have RETURNING): no read follows it.
    """
    request = db.session.scalars(
        update(PresentationRequest)
        .where(PresentationRequest.id == request_id, PresentationRequest.consumed_at.is_(None))
        .values(consumed_at=clock.now(), response_code_hash=response_code_hash)
        .returning(PresentationRequest),
        execution_options={"populate_existing": True, "synchronize_session": False},
    ).first()
    if request is None:
        raise InvalidRequest("This request was already answered", code="ALREADY_ANSWERED")
    return request


def rules_for(verification: Verification) -> Rules:
    credential = verification.credential_type()
    sources = None
    if verification.trust_sources:
        chosen = chosen_sources(verification.organization_id, verification.trust_sources)
        sources = source_trust(chosen, credential, clock.now())
    return Rules(
        credential=credential,
        requested_claims=verification.requested_claims(),
        conditions=list(verification.attributes),
        trusted_issuers=list(verification.trusted_issuers),
        sources=sources,
        prism_pins=pinned_documents(verification.organization_id)
        if credential.format == JWT_VC_JSON
        else {},
    )


@dataclass(frozen=True)
class Pending:
    """What deciding a response needs, read before anything is written."""

    request_id: uuid.UUID
    nonce: str
    audience: str
    rules: Rules


def receive(
    request_id: uuid.UUID,
    state: str | None,
    vp_token: str | None,
    audience: Callable[[PresentationRequest], str],
    context: Callable[[str, str], Context],
) -> Received:
    """Decide one response to ``request_id`` and apply it.

    ``audience`` gives the client ID the key binding must name (it depends on the channel);
    ``context(audience, nonce)`` gives the deployment's trust settings. Deciding may fetch
    issuer metadata and status lists, so it happens before the write transaction begins: no
    lock is held while another server answers.
    """
    pending = read_pending(request_id, state, audience)
    presentation = presentation_from_vp_token(vp_token)
    return decide_and_record(pending, presentation, context(pending.audience, pending.nonce))


def decide_and_record(pending: Pending, presentation: str | bytes, context: Context) -> Received:
    """Decide ``presentation`` against a pending request, then consume it and record the
    outcome: a channel that opens its responses itself (``org-iso-mdoc``) reads ``pending``
    first and comes here with what it opened."""
    code = secrets.token_urlsafe(24)
    decision, subject = settle(pending, presentation, context, hash_secret(code))
    return Received(decision, subject, code)


def settle(
    pending: Pending, presentation: str | bytes, context: Context, response_code_hash: str
) -> tuple[Decision, PresentationSubject]:
    """Decide, consume and record, with the hash of the code the answering browser holds
    (given out with the answer, or earlier: a zero-knowledge answer's, ``zk_checks``)."""
    decision = decide(presentation, pending.rules, context)
    learned = (
        issuer_long_form(presentation)
        if pending.rules.credential.format == JWT_VC_JSON
        and (decision.issuer or "").startswith("did:prism:")
        else None
    )
    request = consume(pending.request_id, response_code_hash)
    return decision, record(request, decision, learned)


def read_pending(
    request_id: uuid.UUID,
    state: str | None,
    audience: Callable[[PresentationRequest], str],
    received_at: datetime | None = None,
) -> Pending:
    """Check the response against its request and read what the decision needs.

    When no transaction is open yet (a request's first queries), the reads run in a read-only
    one that is ended here, so that on SQLite no write lock is taken before the decision.
    """
    fresh = not db.session().in_transaction()
    with reading() if fresh else contextlib.nullcontext():
        request = pending_request(request_id, state, received_at)
        subject = request.subject
        rules = rules_for(subject.verification)
        if subject.transaction_data:
            rules = replace(rules, transaction_data=tuple(subject.transaction_data))
        pending = Pending(request.id, request.nonce, audience(request), rules)
    if fresh:
        db.session.rollback()
    return pending


def record(
    request: PresentationRequest, decision: Decision, issuer_long_form: str | None = None
) -> PresentationSubject:
    """Keep the attempt (with the long form of a did:prism issuer the presentation revealed,
    ``app.vcjwt.learned``) and apply its outcome to the request's subject; the subject.

    The subject is locked first and its own state and expiry checked under the lock, so that
    two answers to two of its links settle in turn: one that finds the subject final or
    expired is refused (``refuse_settled``), and the caller's transaction, the consumed
    request included, rolls back.
    """
    subject = locked_subject(request)
    refuse_settled(subject)
    outcome = Status.VERIFIED if decision.verified else Status.FAILED
    db.session.add(
        PresentationAttempt(
            request_id=request.id,
            outcome=outcome,
            validation_error=decision.reason,
            issuer=decision.issuer,
            issuer_long_form=issuer_long_form,
        )
    )
    set_status(subject, outcome, decision)
    db.session.flush()
    metrics.count_presentation(decision.verified, family_of(decision.reason))
    return subject


def locked_subject(request: PresentationRequest) -> PresentationSubject:
    """The request's subject read afresh under a row lock, with the verification that
    ``set_status`` reads (retention, organization): one query."""
    kind = Individual if request.individual_id else _policy_request()
    subject = db.session.scalar(
        select(kind)
        .where(kind.id == (request.individual_id or request.policy_request_id))
        .options(joinedload(kind.verification))
        .with_for_update(of=kind)
        .execution_options(populate_existing=True)
    )
    assert subject is not None  # a foreign key
    return subject


def attempts_of(subject: PresentationSubject) -> list[PresentationAttempt]:
    return list(
        db.session.scalars(
            select(PresentationAttempt)
            .join(PresentationAttempt.request)
            .where(subject.requests_clause())
            .order_by(PresentationAttempt.created_at)
        )
    )


def holds_subject_response_code(subject: PresentationSubject, code: str) -> bool:
    """Whether ``code`` was handed out with an answer to one of the subject's requests.

    OpenID4VP 1.0 §13.3: only the browser the wallet returned to holds it, so only that
    browser is shown the result (session fixation). Any of the subject's requests counts,
    since a person may have answered a link that was replaced while they were in the wallet.
    """
    answered = db.session.scalars(
        select(PresentationRequest.response_code_hash).where(
            subject.requests_clause(), PresentationRequest.response_code_hash.is_not(None)
        )
    )
    digest = hash_secret(code) if code else ""
    return bool(code) and any(same(stored, digest) for stored in answered)


def verification_of(request_id: uuid.UUID) -> tuple[PresentationRequest, Verification]:
    """A presentation request and the verification its subject is checked against.

    Both come in one query, the verification with the schema and organization a request
    names (its ``vct`` and ``client_name``): a link is built from them when it is handed out,
    and a Request Object on every fetch (measured: three reads before, a fifth of a connect).
    """
    found = db.session.execute(_verification_of(), {"id": request_id}).first()
    if found is None:
        raise NotFound()
    return found.PresentationRequest, found.Verification


def asks_zk(request_id: uuid.UUID) -> bool:
    """Whether the request's verification asks for a zero-knowledge proof: its answer endpoint
    then reads a larger body, and keeps the answer for the job worker. An unknown request is
    not one (its answer is refused as any other's). Asked of every answer, so one Core
    statement on a connection of its own (``read_row``), no ORM load and no lock."""
    row = read_row(db.engine, _asks_zk(), {"id": request_id})
    return bool(row is not None and row.zk)


@functools.cache
def _asks_zk() -> Select[tuple[bool]]:
    return _request_to_verification(select(Verification.zk).select_from(PresentationRequest))


def open_verification_of(request_id: uuid.UUID) -> tuple[PresentationRequest, Verification]:
    """As :func:`verification_of`, for a request that can still be answered: the browser API's
    request holds the org-iso-mdoc recipient key, which must be gone once the request is
    answered or expired, or its subject settled (``400 ALREADY_ANSWERED`` /
    ``REQUEST_EXPIRED``), as an answer to it would be."""
    request, verification = verification_of(request_id)
    refuse_closed(request)
    refuse_settled(request.subject)
    return request, verification


@functools.cache
def _verification_of() -> Select[tuple[PresentationRequest, Verification]]:
    return _request_to_verification(select(PresentationRequest, Verification)).options(
        joinedload(Verification.schema), joinedload(Verification.organization)
    )


def _request_to_verification(statement: Select[Any]) -> Select[Any]:
    """``statement`` joined from the request named ``:id`` to its subject's verification."""
    policy_request: Any = _policy_request()
    return (
        statement.outerjoin(Individual, Individual.id == PresentationRequest.individual_id)
        .outerjoin(policy_request, policy_request.id == PresentationRequest.policy_request_id)
        .join(
            Verification,
            Verification.id
            == func.coalesce(Individual.verification_id, policy_request.verification_id),
        )
        .where(PresentationRequest.id == bindparam("id"))
    )
