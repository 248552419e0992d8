"""What a bulk upload leaves in the staff's hands: its results as a CSV file, and how far a
long upload has come.

The results hold one-time codes, which are stored only as hashes, so the file is never kept
on the server: it travels inside the upload's own answer as a ``data:`` link with the
``download`` attribute (no request reaches the server, no script runs, the CSP stays strict),
and is gone with the page. The progress is the number of the organization's credentials,
which grows by a batch at each commit of the upload; the page's script reads it before the
form is sent and while the upload runs.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

from flask import jsonify
from flask.typing import ResponseReturnValue
from sqlalchemy import func, select

from app.database import read_only
from app.extensions import db
from app.issuance.models import Credential
from app.issuance.operations import IssuedOffer
from app.staff.blueprint import bp
from app.web.access import acting_organization_id, require_staff
from app.web.csv_export import csv_lines

RESULT_COLUMNS = ["credential_id", "name", "recipient", "recipient_email", "code", "email"]


def results_data_url(offers: Iterable[IssuedOffer], undelivered: set[str]) -> str:
    """The results table as a formula-safe CSV in a ``data:`` URL."""
    rows = (
        [
            o.credential.id,
            o.credential.name,
            f"{o.credential.recipient.first_name} {o.credential.recipient.last_name}",
            o.credential.recipient.email,
            o.tx_code or "",
            "not sent" if str(o.credential.id) in undelivered else "sent",
        ]
        for o in offers
    )
    text = "".join(csv_lines(RESULT_COLUMNS, rows))
    return "data:text/csv;charset=utf-8;base64," + base64.b64encode(text.encode()).decode()


@bp.get("/credentials/upload/progress")
@require_staff
@read_only
def credentials_upload_progress() -> ResponseReturnValue:
    """How many credentials the organization has: polled while an upload issues its rows."""
    count = db.session.scalar(
        select(func.count())
        .select_from(Credential)
        .where(Credential.organization_id == acting_organization_id())
    )
    return jsonify({"credentials": count or 0})
