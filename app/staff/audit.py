"""The dashboard's audit trail: who changed what, filtered like ``GET /audit-events``."""

from __future__ import annotations

from flask import render_template
from flask.typing import ResponseReturnValue

from app.audit import operations as audit
from app.audit.operations import RECORD_TYPES
from app.staff.blueprint import bp
from app.web.access import acting_organization, require_staff
from app.web.filters import audit_filter, chosen_filters
from app.web.paging import page_args, pager


@bp.get("/audit")
@require_staff
def audit_events() -> ResponseReturnValue:
    """Newest first; the filters stay in the pager's links."""
    organization = acting_organization()
    offset, limit = page_args()
    rows, total = audit.list_events(organization.id, audit_filter(), offset, limit)
    chosen = chosen_filters()
    return render_template(
        "staff/audit.html",
        rows=rows,
        chosen=chosen,
        actions=audit.actions_in_use(organization.id),
        record_types=sorted(set(RECORD_TYPES.values())),
        pages=pager("staff.audit_events", offset, limit, total, **chosen),
    )
