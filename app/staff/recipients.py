"""The dashboard's recipients: the people an organization issues credentials to.

The forms build the body ``POST /recipients`` and ``PUT /recipients/<id>`` accept and validate
it with the same models, so a rule changed there changes here.
"""

from __future__ import annotations

from typing import Any

from flask import render_template
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.errors import ApiError
from app.organizations.models import Organization
from app.recipients import operations as people
from app.recipients.models import Recipient
from app.recipients.operations import FIELDS
from app.staff.blueprint import bp
from app.staff.credentials import of_recipient
from app.staff.page_kit import finished, form_values, refusal
from app.web.access import acting_organization, require_staff
from app.web.paging import page_args, pager
from app.web.payloads.recipients import RecipientIn, RecipientPatch
from app.web.requests import parse_id

EMPTY_FORM = dict.fromkeys(FIELDS, "")


def list_page(organization: Organization, status: int = 200, **extra: Any):
    offset, limit = page_args()
    rows, total = people.list_recipients(organization, offset, limit)
    page = render_template(
        "staff/recipients/index.html",
        rows=rows,
        pages=pager("staff.recipients", offset, limit, total),
        values=extra.pop("values", EMPTY_FORM),
        **extra,
    )
    return page, status


def edit_page(recipient: Recipient, values: dict[str, str], status: int = 200, **extra: Any):
    """The edit form, and the credentials issued to the recipient."""
    page = render_template(
        "staff/recipients/edit.html",
        recipient=recipient,
        values=values,
        **of_recipient(acting_organization(), recipient),
        **extra,
    )
    return page, status


@bp.get("/recipients")
@require_staff
def recipients() -> ResponseReturnValue:
    """A page of recipients, oldest first like the JSON API, and the form to add one."""
    return list_page(acting_organization())


@bp.post("/recipients")
@require_staff
def recipients_create() -> ResponseReturnValue:
    """An empty customer ID is left out, as a backend leaves the optional field out."""
    organization = acting_organization()
    values = form_values(FIELDS)
    body = {k: v for k, v in values.items() if k != "customer_id" or v.strip()}
    try:
        fields = RecipientIn.model_validate(body).model_dump()
        recipient = people.create_recipient(organization, fields)
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return list_page(organization, status, values=values, error=message)
    return finished(f"{recipient.first_name} {recipient.last_name} added.", "staff.recipients")


@bp.get("/recipients/<recipient_id>")
@require_staff
def recipients_edit(recipient_id: str) -> ResponseReturnValue:
    """The edit form, filled with what is stored."""
    recipient = people.get_recipient(acting_organization(), parse_id(recipient_id))
    values = {name: getattr(recipient, name) or "" for name in FIELDS}
    return edit_page(recipient, values)


@bp.post("/recipients/<recipient_id>")
@require_staff
def recipients_update(recipient_id: str) -> ResponseReturnValue:
    """Every field is sent; an emptied customer ID clears it."""
    organization = acting_organization()
    recipient = people.get_recipient(organization, parse_id(recipient_id))
    values = form_values(FIELDS)
    try:
        fields = RecipientPatch.model_validate(values).model_dump(
            exclude={"id"}, exclude_unset=True
        )
        people.update_recipient(organization, recipient.id, fields)
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return edit_page(recipient, values, status, error=message)
    return finished(f"{recipient.first_name} {recipient.last_name} saved.", "staff.recipients")


@bp.get("/recipients/<recipient_id>/delete")
@require_staff
def recipients_confirm_delete(recipient_id: str) -> ResponseReturnValue:
    """Without JavaScript, the confirmation ``hx-confirm`` would have asked for."""
    recipient = people.get_recipient(acting_organization(), parse_id(recipient_id))
    return render_template("staff/recipients/delete.html", recipient=recipient)


@bp.post("/recipients/<recipient_id>/delete")
@require_staff
def recipients_delete(recipient_id: str) -> ResponseReturnValue:
    """Gone for good; credentials already issued to them stay valid until revoked."""
    organization = acting_organization()
    recipient = people.get_recipient(organization, parse_id(recipient_id))
    name = f"{recipient.first_name} {recipient.last_name}"
    people.delete_recipient(organization, recipient.id)
    return finished(f"{name} deleted.", "staff.recipients")
