"""Small pieces the integrations, recipients and schemas pages share: finishing a form and
re-rendering one that was refused (paging is the web kit's, ``app.web.paging``).

They hold no domain rules; those stay in the operations and the pydantic models.
"""

from __future__ import annotations

from collections.abc import Iterable
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

    Whatever the failed operation already changed is rolled back here, so the page is drawn
    from the stored records rather than half-applied ones (the refused answer's status would
    roll it back at the request boundary anyway, but only after the page was drawn, and a
    query while drawing would flush the half-applied change). A missing record is not a form problem: it stays the
    blueprint's not-found page, unless what was not found is what the form asked for (an
    invitation code, a voucher).
    """
    db.session.rollback()
    if missing_record_is_a_page and isinstance(exc, NotFound | CodeNotFound):
        raise exc
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc), 400
    return exc.message, exc.status
