"""Small pieces the integrations, recipients and schemas pages share: finishing a form,
re-rendering one that was refused, and paging through a list.

They hold no domain rules; those stay in the operations and the pydantic models.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flask import flash, request, url_for
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.errors import ApiError, CodeNotFound, NotFound, describe_validation_error
from app.extensions import db
from app.staff.blueprint import navigate


def form_values(names: Iterable[str]) -> dict[str, str]:
    """The named form fields only, so the CSRF token and the buttons never reach a model
    that refuses unknown fields."""
    return {name: request.form.get(name, "") for name in names}


def finished(message: str, endpoint: str, **values: Any) -> ResponseReturnValue:
    """Post/redirect/get with a short notice; htmx is told to navigate, so a button that
    posted in place lands on the same page a plain form would."""
    flash(message, "success")
    return navigate(url_for(endpoint, **values))


def refusal(
    exc: ValidationError | ApiError, *, missing_record_is_a_page: bool = True
) -> tuple[str, int]:
    """The message and status to re-render a refused form with.

    The request commits whenever a view returns, so whatever the failed operation already
    changed is rolled back first. A missing record is not a form problem: it stays the
    blueprint's not-found page, unless what was not found is what the form asked for (an
    invitation code, a voucher).
    """
    db.session.rollback()
    if missing_record_is_a_page and isinstance(exc, NotFound | CodeNotFound):
        raise exc
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc), 400
    return exc.message, exc.status


@dataclass(frozen=True)
class Pager:
    """Where a page of a list sits, and the links to its neighbours (None at the ends)."""

    page: int
    pages: int
    total: int
    previous_url: str | None
    next_url: str | None


def pager(endpoint: str, offset: int, limit: int, total: int) -> Pager:
    page = offset // limit + 1
    pages = max(1, math.ceil(total / limit))
    extra = {"limit": limit} if "limit" in request.args else {}
    previous_url = url_for(endpoint, page=page - 1, **extra) if page > 1 else None
    next_url = url_for(endpoint, page=page + 1, **extra) if offset + limit < total else None
    return Pager(page, pages, total, previous_url, next_url)
