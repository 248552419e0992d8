"""Reading a filtered list newest first, as the dashboard's searches do: a page of it with how
many match in all, or every row in batches for an export, and the LIKE pattern of a "part of
it" filter. Shared by the searches of credentials and of individuals, whose rows both order by
``created_at`` then ``id``."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, or_, select

from app.extensions import db

EXPORT_BATCH = 500


def contains_pattern(text: str) -> str:
    """A LIKE pattern (escape character ``\\``) matching values that contain ``text``."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def page(query: Select[Any], model: Any, offset: int, limit: int) -> tuple[list[Any], int]:
    """A page of ``query``'s rows, newest first, and how many match in all."""
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(model.created_at.desc(), model.id.desc()).offset(offset).limit(limit)
    )
    return list(rows), total


def batches(
    matching: Callable[[], Select[Any]], model: Any, batch: int = EXPORT_BATCH
) -> Iterator[list[Any]]:
    """Every row ``matching()`` selects, newest first, ``batch`` rows per query.

    Each batch starts after the last row of the one before (keyset, not offset), so a long
    export reads each row once even while new rows are added.
    """
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        query = matching()
        if after is not None:
            query = query.where(
                or_(
                    model.created_at < after[0],
                    (model.created_at == after[0]) & (model.id < after[1]),
                )
            )
        rows = list(
            db.session.scalars(
                query.order_by(model.created_at.desc(), model.id.desc()).limit(batch)
            ).unique()
        )
        if not rows:
            return
        yield rows
        after = (rows[-1].created_at, rows[-1].id)
        if len(rows) < batch:
            return
