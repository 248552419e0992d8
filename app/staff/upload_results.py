"""What a bulk upload leaves in the staff's hands: a results page it redirects to, shown once
with the codes, its results as a CSV file, and how far a long upload has come.

Post/Redirect/Get, and a form that cannot issue twice. The upload form carries a one-time
nonce (random, signed with ``SECRET_KEY`` and dated, so it is refused after
``FORM_LIFETIME``). The upload claims it atomically before issuing anything, as an API
``Idempotency-Key`` is claimed (``app.idempotency``, in a scope of its own per organization):
the same form sent again, by a browser's "resend" or a double click, whether the first is
still issuing or long done, finds the claim and issues nothing. Two sent at once meet on the
claim's unique key, so one of them issues. A refused file claims nothing: nothing was issued,
and the corrected form comes back with a fresh nonce.

The results hold one-time codes in clear, which exist nowhere else (credentials keep their
hashes) and are too many for a cookie (a thousand rows): they are kept with the claim, sealed
(AES-GCM under a key derived from ``SECRET_KEY``, as the API's kept answers are), and the
browser that sent the upload is given, in its session (``app.web.shown_once``), only which
upload to show. The results page shows them once and seals the results again without the
codes; a reload shows the same rows without them. The CSV file is made by that page and
travels inside it as a ``data:`` link with the ``download`` attribute (no further request, no
script, the CSP stays strict).

The progress is the number of the organization's credentials, which grows by a batch at each
commit of the upload; the page's script reads it before the form is sent and while the upload
runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flask import current_app, flash, jsonify, render_template, request, url_for
from flask.typing import ResponseReturnValue
from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from app import clock
from app.database import read_only
from app.extensions import db
from app.idempotency import operations as claims
from app.idempotency.models import IdempotentRequest
from app.issuance.models import Credential
from app.issuance.operations import IssuedOffer
from app.staff.blueprint import bp, navigate
from app.staff.mail_words import in_words, mail_outcome
from app.web import shown_once
from app.web.access import acting_organization_id, require_staff
from app.web.csv_export import csv_lines

RESULT_COLUMNS = ["credential_id", "name", "recipient", "recipient_email", "code", "email"]
NONCE_FIELD = "upload_nonce"
# A form's nonce is refused once it is older than this: half the time a claim is kept
# (``claims.KEPT_FOR``), so a form still accepted always finds its claim if it was sent.
FORM_LIFETIME = claims.KEPT_FOR / 2
STALE_FORM = (
    "This form is out of date (a form is valid for 12 hours, and is sent once): "
    "choose the file again and send it."
)
SENT_TWICE = (
    "This upload was already sent: nothing was issued again. Its results are below "
    "(the codes are shown only the first time)."
)
_RESULTS_PAGE = "upload-results"
_NONCE_SALT = "verity dashboard upload form v1"
# Every claim of an upload is for "the upload": a second form sent with the nonce is the same
# request whatever file it carries.
_FINGERPRINT = hashlib.sha256(b"dashboard CSV upload").hexdigest()


@dataclass(frozen=True)
class ResultRow:
    """One issued credential on the results page and in its file."""

    credential: Credential
    code: str | None
    email: str  # what became of the offer email, in words (``mail_words.in_words``)


# -- the form's nonce and its claim ---------------------------------------------------------


def _signer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=_NONCE_SALT)


def _secret() -> str:
    return str(current_app.config["SECRET_KEY"])


def _scope(organization_id: uuid.UUID) -> str:
    """Apart from the organization's API keys, which a client names itself."""
    return f"dashboard-upload:{organization_id}"


def new_form_nonce() -> str:
    """A nonce for one upload form, signed and dated."""
    return _signer().dumps(secrets.token_urlsafe(16))


def sent_nonce() -> str | None:
    """The nonce of the form sent; None when it is missing, not ours, or too old."""
    try:
        nonce = _signer().loads(
            request.form.get(NONCE_FIELD, ""), max_age=FORM_LIFETIME.total_seconds()
        )
    except BadData:
        return None
    return nonce if isinstance(nonce, str) else None


def already_sent(organization_id: uuid.UUID, nonce: str) -> bool:
    """Whether an upload with this nonce has been claimed (issued or issuing)."""
    return claims.stored(_scope(organization_id), nonce) is not None


def claim(organization_id: uuid.UUID, nonce: str) -> IdempotentRequest | None:
    """Claim the nonce for this upload, to be committed before issuing; None when another
    request with it has claimed it (a concurrent one waits here until that one commits)."""
    try:
        started = claims.begin(_scope(organization_id), nonce, _FINGERPRINT, clock.now(), _secret())
    except claims.KeyInUse:
        return None
    return None if isinstance(started, claims.Replay) else started


def keep_results(
    claimed: IdempotentRequest,
    offers: list[IssuedOffer],
    undelivered: Iterable[str],
    stopped: str | None,
) -> None:
    """Seal the upload's results, codes included, with its claim."""
    failed = set(undelivered)
    results = {
        "rows": [
            [str(o.credential.id), o.tx_code, mail_outcome(o.credential, failed)] for o in offers
        ],
        "stopped": stopped,
    }
    claims.finish(claimed, 303, json.dumps(results).encode(), _secret())


def to_results(nonce: str, notice: str | None = None) -> ResponseReturnValue:
    """Post/Redirect/Get: the browser's next page shows this upload's results."""
    shown_once.keep_for_next_page(_RESULTS_PAGE, upload=nonce)
    if notice:
        flash(notice, "warning")
    return navigate(url_for("staff.credentials_upload_results"))


# -- the results page -----------------------------------------------------------------------


def result_rows(organization_id: uuid.UUID, kept: list[list[Any]]) -> list[ResultRow]:
    """The kept rows with their credentials (and recipients) loaded in one query each."""
    ids = [uuid.UUID(row[0]) for row in kept]
    found = {
        c.id: c
        for c in db.session.scalars(
            select(Credential)
            .where(Credential.organization_id == organization_id, Credential.id.in_(ids))
            .options(selectinload(Credential.recipient))
        )
    }
    return [
        ResultRow(found[i], code, in_words(outcome))
        for i, (_, code, outcome) in zip(ids, kept, strict=True)
        if i in found
    ]


@bp.get("/credentials/upload/results")
@require_staff
def credentials_upload_results() -> ResponseReturnValue:
    """The last upload of this browser: its rows, with their codes the first time only; a
    reload issues nothing and shows the rows again without the codes."""
    organization_id = acting_organization_id()
    nonce = shown_once.take(_RESULTS_PAGE).get("upload")
    claimed = claims.stored(_scope(organization_id), nonce) if nonce else None
    if claimed is None:
        return render_template("staff/credentials/uploaded.html", gone=True)
    shown_once.keep_for_next_page(_RESULTS_PAGE, upload=nonce)
    try:
        answer = claims.kept_answer(claimed, _secret())
    except claims.KeyInUse:  # sealed under another SECRET_KEY
        return render_template("staff/credentials/uploaded.html", gone=True)
    if answer is None:
        return render_template("staff/credentials/uploaded.html", running=True)
    results = json.loads(answer)
    rows = result_rows(organization_id, results["rows"])
    with_codes = any(row.code for row in rows)
    if with_codes:
        for row in results["rows"]:
            row[1] = None
        claims.finish(claimed, 303, json.dumps(results).encode(), _secret())
    return render_template(
        "staff/credentials/uploaded.html",
        rows=rows,
        with_codes=with_codes,
        failed=sum(row.email == in_words("failed") for row in rows),
        logged=any(row.email == in_words("logged") for row in rows),
        stopped=results["stopped"],
        results_csv=results_data_url(rows),
    )


def results_data_url(rows: Iterable[ResultRow]) -> str:
    """The results table as a formula-safe CSV in a ``data:`` URL; the email column in the
    words of the page's table."""
    lines = (
        [
            r.credential.id,
            r.credential.name,
            f"{r.credential.recipient.first_name} {r.credential.recipient.last_name}",
            r.credential.recipient.email,
            r.code or "",
            r.email,
        ]
        for r in rows
    )
    text = "".join(csv_lines(RESULT_COLUMNS, lines))
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
