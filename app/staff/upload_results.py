"""What a bulk upload leaves in the staff's hands: a results page it redirects to, which
follows the upload's job while it issues, then shows the results once with the codes, and the
results as a CSV file.

Post/Redirect/Get, and a form that cannot issue twice. The upload form carries a one-time
nonce (random, signed with ``SECRET_KEY`` and dated, so it is refused after
``FORM_LIFETIME``). The upload claims it atomically in the transaction that records the upload
for its job, as an API ``Idempotency-Key`` is claimed (``app.idempotency``, in a scope of its
own per organization), and the claim keeps the upload's ID: the same form sent again, by a
browser's "resend" or a double click, finds the claim, records nothing and is sent to the same
upload's results. Two sent at once meet on the claim's unique key, so one of them is recorded.
A refused file claims nothing: nothing was issued, and the corrected form comes back with a
fresh nonce.

The results hold one-time codes in clear, which exist nowhere else (credentials keep their
hashes): the job keeps them sealed with the upload (``app.issuance.uploads``), and the browser
that sent the upload is given, in its session (``app.web.shown_once``), only which upload to
show. The results page shows them once and seals the results again without the codes; a
reload shows the same rows without them. The CSV file is made by that page and travels inside
it as a ``data:`` link with the ``download`` attribute (no further request, no script, the CSP
stays strict).

While the job runs, the page shows its progress (rows done, rows failed, time left) and the
dashboard's script polls ``/credentials/upload/progress`` to move the bar, reloading the page
when the upload is done; without script, a ``<meta http-equiv="refresh">`` inside
``<noscript>`` reloads it every few seconds.
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
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from app import clock
from app.database import read_only
from app.extensions import db
from app.idempotency import operations as claims
from app.idempotency.models import IdempotentRequest
from app.issuance import uploads
from app.issuance.models import Credential, CredentialUpload, UploadStatus
from app.staff.blueprint import bp, navigate
from app.staff.mail_words import in_words
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
# How long the browser that sent an upload can come back to its results: a long upload, a
# coffee, and the page still shows the codes once.
RESULTS_KEPT_SECONDS = 3600
# Seconds between reloads of the results page while the upload runs, without script.
REFRESH_SECONDS = 3
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


def secret() -> str:
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


def sent_before(organization_id: uuid.UUID, nonce: str) -> str | None:
    """The ID of the upload a form with this nonce recorded ("" when its claim cannot be read
    back), or None when it was never sent."""
    claimed = claims.stored(_scope(organization_id), nonce)
    if claimed is None:
        return None
    try:
        answer = claims.kept_answer(claimed, secret())
    except claims.KeyInUse:  # sealed under another SECRET_KEY
        return ""
    return str(json.loads(answer)["upload"]) if answer else ""


def claim(organization_id: uuid.UUID, nonce: str) -> IdempotentRequest | None:
    """Claim the nonce for this upload, in the transaction that records it; None when another
    request with it has claimed it (a concurrent one waits here until that one commits)."""
    try:
        started = claims.begin(_scope(organization_id), nonce, _FINGERPRINT, clock.now(), secret())
    except claims.KeyInUse:
        return None
    return None if isinstance(started, claims.Replay) else started


def keep_upload(claimed: IdempotentRequest, upload: CredentialUpload) -> None:
    """The claim names the upload its form recorded."""
    claims.finish(claimed, 303, json.dumps({"upload": str(upload.id)}).encode(), secret())


def to_results(upload_id: str | None, notice: str | None = None) -> ResponseReturnValue:
    """Post/Redirect/Get: the browser's next page shows this upload's progress and results."""
    shown_once.keep_for_next_page(
        _RESULTS_PAGE, lifetime_seconds=RESULTS_KEPT_SECONDS, upload=upload_id or ""
    )
    if notice:
        flash(notice, "warning")
    return navigate(url_for("staff.credentials_upload_results"))


def this_browsers_upload() -> CredentialUpload | None:
    """The upload this browser sent last (kept for it again), if it is still to be shown."""
    kept = shown_once.take(_RESULTS_PAGE).get("upload")
    try:
        upload_id = uuid.UUID(kept) if kept else None
    except ValueError:
        upload_id = None
    upload = uploads.get_upload(acting_organization_id(), upload_id) if upload_id else None
    if upload is not None:
        shown_once.keep_for_next_page(
            _RESULTS_PAGE, lifetime_seconds=RESULTS_KEPT_SECONDS, upload=kept
        )
    return upload


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
    """The last upload of this browser: its progress while its job issues the rows, then its
    rows, with their codes the first time only; a reload issues nothing and shows the rows
    again without the codes."""
    upload = this_browsers_upload()
    if upload is None:
        return render_template("staff/credentials/uploaded.html", gone=True)
    if upload.status is not UploadStatus.FINISHED:
        return render_template(
            "staff/credentials/uploaded.html",
            running=True,
            upload=upload,
            progress=uploads.progress(upload, clock.now()),
            refresh_seconds=REFRESH_SECONDS,
        )
    try:
        results = uploads.Results.of(upload, secret())
    except uploads.UnreadableUpload:
        return render_template("staff/credentials/uploaded.html", gone=True)
    rows = result_rows(upload.organization_id, results.rows)
    with_codes = any(row.code for row in rows)
    if with_codes:
        for row in results.rows:
            row[1] = None
        uploads.keep_results(upload, results, secret())
    return render_template(
        "staff/credentials/uploaded.html",
        upload=upload,
        rows=rows,
        with_codes=with_codes,
        failed=sum(row.email == in_words("failed") for row in rows),
        logged=any(row.email == in_words("logged") for row in rows),
        failures=results.failures,
        stopped=upload.stopped,
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
    """How far this browser's last upload has come: polled by its results page."""
    upload = this_browsers_upload()
    if upload is None:
        return jsonify({"status": "GONE"}), 404
    return jsonify(uploads.progress(upload, clock.now()).as_json())
