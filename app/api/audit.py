"""``GET /audit-events``: the acting organization's audit trail, for the staff's scripts."""

from __future__ import annotations

from flask import Blueprint

from app.api import render
from app.api.common import PAGING_QUERY, documented, json_response, list_args, listing
from app.audit import operations as audit
from app.web.access import acting_organization_id, require_session
from app.web.filters import audit_filter
from app.web.payloads.audit import AuditEventList

bp = Blueprint("audit_api", __name__)

# The filters ``audit_filter`` reads; any other parameter is refused, not ignored.
AUDIT_FILTERS = ("actor", "action", "record_type", "record_id", "from", "to")


@bp.get("/audit-events")
@require_session
@documented(
    "Audit trail of the acting organization, newest first",
    responses={200: AuditEventList},
    query={
        **PAGING_QUERY,
        "actor": "Part of the actor's name (an email or an integration's name), or its ID",
        "action": "An action (credential.revoked) or its verb (revoked)",
        "record_type": "credential, verification, integration, webhook_endpoint, "
        "webhook_delivery, ...",
        "record_id": "The record's ID",
        "from": "First day, YYYY-MM-DD (UTC)",
        "to": "Last day, YYYY-MM-DD (UTC), included",
    },
    tags=("audit",),
)
def list_audit_events():
    """Who changed what, when and from where; secrets and personal data never shown."""
    offset, limit = list_args(*AUDIT_FILTERS)
    rows, total = audit.list_events(acting_organization_id(), audit_filter(), offset, limit)
    return json_response(listing(rows, total, render.audit_event))
