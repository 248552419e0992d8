"""What an open person's page needs to know on each poll, in one read.

An open page polls every two seconds and almost every answer is "nothing changed" (204).
Deciding that takes the individual's status, its current link and whether a wallet can still
answer it, and how many presentations it has had: three ORM loads and the session around
them cost several times what the service's ``/healthz`` costs (measured). Here it is one Core
statement, built once, outside the session. When the link's window is over the page must
mint a new one, which only the locked path does: ``glance`` then answers None.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import bindparam, func, outerjoin, select

from app import clock
from app.database import read_row
from app.errors import NotFound
from app.extensions import db
from app.presentations.operations import link_is_current
from app.verifications.models import (
    Individual,
    PresentationAttempt,
    PresentationRequest,
    Status,
)

_INDIVIDUAL = Individual.__table__
_REQUEST = PresentationRequest.__table__
_ATTEMPT = PresentationAttempt.__table__
_OF_REQUEST = _REQUEST.alias("of_request")
_ATTEMPTS = (
    select(func.count())
    .select_from(_ATTEMPT.join(_OF_REQUEST, _ATTEMPT.c.request_id == _OF_REQUEST.c.id))
    .where(_OF_REQUEST.c.individual_id == _INDIVIDUAL.c.id)
    .scalar_subquery()
)
_GLANCE = (
    select(
        _INDIVIDUAL.c.status,
        _INDIVIDUAL.c.connection_request_id,
        _INDIVIDUAL.c.connection_at,
        _REQUEST.c.consumed_at,
        _REQUEST.c.expires_at,
        _ATTEMPTS.label("attempts"),
    )
    .select_from(
        outerjoin(_INDIVIDUAL, _REQUEST, _REQUEST.c.id == _INDIVIDUAL.c.connection_request_id)
    )
    .where(_INDIVIDUAL.c.id == bindparam("id"))
)


@dataclass(frozen=True)
class Glance:
    final: bool
    # The link the page shows while a wallet can still answer it, else "" (as PageState).
    link_id: str
    attempts: int


def glance_individual(individual_id: uuid.UUID, link_seconds: int) -> Glance | None:
    """The individual's page state, read only; None when its link must be handed out anew."""
    row = read_row(db.engine, _GLANCE, {"id": individual_id})
    if row is None:
        raise NotFound()
    final = Individual.final_status(Status(row.status))
    if not final and not link_is_current(row, link_seconds):
        return None
    answerable = (
        not final
        and row.expires_at is not None
        and row.consumed_at is None
        and row.expires_at > clock.now()
    )
    return Glance(
        final=final,
        link_id=str(row.connection_request_id) if answerable else "",
        attempts=row.attempts or 0,
    )
