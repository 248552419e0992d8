"""``GET /audit-events``: the acting organization's audit trail, for the staff's scripts."""

from __future__ import annotations

from flask import Blueprint

from app.api import render
from app.api.common import documented, json_response, listing, page_args
from app.audit import operations as audit
from app.web import payloads as p
from app.web.access import acting_organization_id, require_session
from app.web.filters import audit_filter

bp = Blueprint("audit_api", __name__)


@bp.get("/audit-events")
@require_session
@documented(
    "Audit trail of the acting organization, newest first",
    responses={200: p.AuditEventList},
    query={
        "page": "Page, from 1",
        "limit": "1 to 100",
        "actor": "Part of the actor's name (an email or an integration's name), or its ID",
        "action": "An action (credential.revoked) or its verb (revoked)",
        "record_type": "credential, verification, integration, webhook_endpoint, ...",
        "record_id": "The record's ID",
        "from": "First day, YYYY-MM-DD (UTC)",
        "to": "Last day, YYYY-MM-DD (UTC), included",
    },
    tags=("audit",),
)
def list_audit_events():
    """Who changed what, when and from where; secrets and personal data never shown."""
    chosen = audit_filter()
    rows, total = audit.list_events(acting_organization_id(), chosen, *page_args())
    return json_response(listing(rows, total, render.audit_event))
