"""Zero-knowledge answers decided off the request: received at the door, checked by a job.

Checking a Longfellow proof takes 0.5-0.8 s of CPU. A web worker that waited for it would
serve no page meanwhile, and a flood of answers would take every sync worker from the people
whose pages poll. So the answer endpoints only read an answer and check what is cheap (its
request is pending, its body opens, its ``vp_token`` holds one presentation: a 400 consumes
nothing), keep it as a ``ZkCheck`` and answer at once; the job worker's ``zk`` queue checks the
proof in its bounded pool (``app.zk.VerificationPool``) and records the decision like any
other, in one transaction that also removes the check. The page's poll then shows the outcome,
and the browser that answered holds the response code that opens the result.

How many checks may wait is bounded deployment-wide (``capacity``: the pool's workers and its
queue): beyond it an answer is refused before its body is read (``ZkBusy``, the API's 429 with
``Retry-After``). The queue holds hints, the database the truth: a check whose job was lost
(the queue's storage down) or whose worker died is handed over again by a sweep once its
lease has passed, and a check that could not run (``ZkBusy`` from the pool) is tried again a
few times, then dropped, which leaves its request answerable.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError

from app import clock, jobs
from app.database import read_row, reading
from app.errors import InvalidRequest, NotFound
from app.extensions import db
from app.presentations import operations as presentations
from app.presentations.decide import Context
from app.presentations.models import ZkCheck
from app.tokens import hash_secret
from app.verifications.models import PresentationRequest, PresentationSubject
from app.zk import ZkBusy

log = logging.getLogger(__name__)

CHECK_JOB = "zk.check"
SWEEP_JOB = "zk.sweep"
# Tries of a check the pool could not run (timed out, a worker died) before it is dropped.
MAX_ATTEMPTS = 3
# A claimed check not done after the pool's timeout and this margin is handed over again.
LEASE_MARGIN_SECONDS = 30
# A received check whose job has not taken it after this long is handed over again.
UNCLAIMED_SECONDS = 30


@dataclass(frozen=True)
class ZkCheckSettings:
    """``capacity``: checks that may wait at once, deployment-wide; ``timeout``: the pool's;
    ``context(audience, nonce, **binding)``: the trust context of one decision, whose
    ``zk_verify`` is the job worker's pool (raising ``ZkBusy`` when it cannot check now)."""

    capacity: int
    timeout: float
    context: Callable[..., Context]

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.timeout + LEASE_MARGIN_SECONDS)

    @property
    def retry_after(self) -> int:
        """Seconds a refused answer is told to wait: about one proof's check per waiting one."""
        return max(1, self.capacity)


_provider: Callable[[], ZkCheckSettings] | None = None


def provide(provider: Callable[[], ZkCheckSettings]) -> None:
    """Called by the application factory (the pool and trust context are the web layer's)."""
    global _provider
    _provider = provider


def current() -> ZkCheckSettings:
    if _provider is None:
        raise RuntimeError("zero-knowledge checks are wired by the application factory")
    return _provider()


@dataclass(frozen=True)
class Received:
    """An answer kept for its check: the subject (for the redirect) and the browser's code."""

    subject: PresentationSubject
    response_code: str


def refuse_when_full() -> None:
    """``ZkBusy`` when ``capacity`` checks already wait: asked before an answer's body is read."""
    settings = current()
    if waiting() >= settings.capacity:
        raise ZkBusy(settings.retry_after)


def waiting() -> int:
    """One statement on a connection of its own: the door takes no lock (on SQLite a write
    lock held here would stall the client's throttle, which writes through its own)."""
    row = read_row(db.engine, select(func.count()).select_from(ZkCheck), {})
    return row[0] if row is not None else 0


def receive(
    request_id: uuid.UUID,
    state: str | None,
    vp_token: str | None,
    audience: Callable[[PresentationRequest], str],
    binding: Callable[[str], dict[str, Any]],
) -> Received:
    """Keep one answer for its check, and hand the check to the ``zk`` queue.

    ``binding(audience)`` is what the channel's trust context is built with besides the
    audience and nonce (``Context``). Refused with 400 (nothing kept) as ``presentations.receive`` refuses; a second answer to a
    request already being checked is ``ALREADY_ANSWERED``. Commits, so that the job finds the
    check; one admitted past ``capacity`` by a concurrent door is taken back (``ZkBusy``).
    """
    pending = presentations.read_pending(request_id, state, audience)
    presentation = presentations.presentation_from_vp_token(vp_token)
    code = secrets.token_urlsafe(24)
    check = ZkCheck(
        request_id=pending.request_id,
        presentation=presentation,
        binding={"audience": pending.audience, **binding(pending.audience)},
        response_code_hash=hash_secret(code),
        attempts=0,
    )
    try:
        with db.session.begin_nested():
            db.session.add(check)
    except IntegrityError:
        raise InvalidRequest(
            "This request's answer is already being checked", code="ALREADY_ANSWERED"
        ) from None
    check_id, received_at = check.id, check.created_at
    db.session.commit()
    _take_back_past_capacity(check_id, received_at)
    jobs.try_enqueue(CHECK_JOB, str(check_id))
    with reading():  # what the answer shows is read without a write lock
        subject = db.session.get(PresentationRequest, pending.request_id).subject
        subject.status  # noqa: B018 (loaded here, inside the read)
    return Received(subject, code)


def _take_back_past_capacity(check_id: uuid.UUID, received_at: datetime) -> None:
    """Doors that counted at once may both have admitted: the later ones give way."""
    settings = current()
    ahead = read_row(
        db.engine,
        select(func.count())
        .select_from(ZkCheck)
        .where(tuple_(ZkCheck.created_at, ZkCheck.id) < (received_at, check_id)),
        {},
    )
    if ahead is None or ahead[0] < settings.capacity:
        return
    _drop(check_id)
    raise ZkBusy(settings.retry_after)


@jobs.job(name=CHECK_JOB, queue=jobs.ZK)
def check(check_id: str) -> None:
    """Check one kept answer's proof and record the decision, once."""
    taken = _claim(uuid.UUID(check_id))
    if taken is None:
        return  # done already, or being checked by another job
    if taken.attempts > MAX_ATTEMPTS:
        log.warning("zero-knowledge check dropped: its worker stopped %d times", MAX_ATTEMPTS)
        _drop(taken.id)
        return
    binding = dict(taken.binding)
    audience = binding.pop("audience")
    try:
        # An answer received in time is decided, however long its check waited.
        pending = presentations.read_pending(
            taken.request_id, None, lambda _request: audience, received_at=taken.received_at
        )
    except (InvalidRequest, NotFound):
        _drop(taken.id)  # answered on another link, or settled, while it waited
        return
    settings = current()
    context = settings.context(pending.audience, pending.nonce, **binding)
    try:
        presentations.settle(pending, taken.presentation, context, taken.response_code_hash)
        db.session.execute(ZkCheck.__table__.delete().where(ZkCheck.id == taken.id))
    except InvalidRequest:
        db.session.rollback()
        _drop(taken.id)  # another answer settled the subject first
    except ZkBusy as busy:
        db.session.rollback()
        _try_again(taken, busy.retry_after)


@dataclass(frozen=True)
class Taken:
    """A check as its job took it: plain values, so that nothing is read again (on SQLite a
    read outside ``reading`` would take the write lock for the whole proof)."""

    id: uuid.UUID
    request_id: uuid.UUID
    presentation: str
    binding: dict[str, Any]
    response_code_hash: str
    attempts: int
    received_at: datetime


def _claim(check_id: uuid.UUID) -> Taken | None:
    """Take the check for this job: one conditional UPDATE, so of two jobs one goes on."""
    now = clock.now()
    row = db.session.scalars(
        update(ZkCheck)
        .where(
            ZkCheck.id == check_id,
            or_(ZkCheck.claimed_at.is_(None), ZkCheck.claimed_at < now - current().lease),
        )
        .values(claimed_at=now, attempts=ZkCheck.attempts + 1)
        .returning(ZkCheck),
        execution_options={"populate_existing": True, "synchronize_session": False},
    ).first()
    taken = (
        Taken(
            row.id,
            row.request_id,
            row.presentation,
            dict(row.binding),
            row.response_code_hash,
            row.attempts,
            row.created_at,
        )
        if row is not None
        else None
    )
    db.session.commit()
    return taken


def _try_again(taken: Taken, delay: int) -> None:
    if taken.attempts >= MAX_ATTEMPTS:
        log.warning("zero-knowledge check dropped after %d tries: pool overloaded", taken.attempts)
        _drop(taken.id)
        return
    db.session.execute(update(ZkCheck).where(ZkCheck.id == taken.id).values(claimed_at=None))
    db.session.commit()
    jobs.try_enqueue(CHECK_JOB, str(taken.id), delay=delay)


def _drop(check_id: uuid.UUID) -> None:
    db.session.execute(ZkCheck.__table__.delete().where(ZkCheck.id == check_id))
    db.session.commit()


@jobs.periodic(jobs.crontab(minute="*"), name=SWEEP_JOB)
def sweep() -> None:
    """Hand over again the checks whose job was lost or whose worker stopped midway."""
    now = clock.now()
    lost = db.session.scalars(
        select(ZkCheck.id).where(
            or_(
                (ZkCheck.claimed_at.is_(None))
                & (ZkCheck.created_at < now - timedelta(seconds=UNCLAIMED_SECONDS)),
                ZkCheck.claimed_at < now - current().lease,
            )
        )
    ).all()
    for check_id in lost:
        jobs.try_enqueue(CHECK_JOB, str(check_id))
