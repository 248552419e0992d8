"""CSV uploads of credentials: recorded once checked, then issued by a background job.

The request that receives a file only reads and checks it, then stores the checked rows here
and hands the upload's ID to the queue; the job issues the rows ``BATCH`` at a time, each batch
in its own transaction, so no upload holds a web worker while it issues and another writer of
the same SQLite file waits for one batch at most.

A job takes an upload with a lease (a conditional UPDATE: one worker at a time), and each
batch moves the upload's ``position`` on with a conditional UPDATE in the batch's own
transaction, so the rows of a batch are issued exactly when the position says they are: a job
run twice, or again after its worker died, carries on from the first row not yet dealt with and
never issues a row twice. A row refused when its batch is issued (a recipient deleted since the
checks) is counted as failed with its reason and the others go on.

The rows (claim values) and the results (each credential's one-time code) are sealed with
AES-GCM under a key derived from the deployment's secret, as the kept API answers are; the rows
are dropped once issued, the codes once shown, the results a day after the upload finished.

A repeat of a file (the same bytes, by SHA-256) already uploaded in the organization is found
by ``earlier_upload``, so the form can name it and ask before issuing it again.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import or_, select, update

from app import sealing
from app.audit.operations import Actor
from app.extensions import db
from app.issuance.models import CredentialUpload, UploadStatus

# Rows issued per transaction: long enough to amortize a commit, short enough that another
# writer of the same SQLite file is not held up noticeably.
BATCH = 20
# How long a worker holds an upload without moving it on before another may take it over.
LEASE = timedelta(minutes=2)
# How long a finished upload keeps its results (the codes not yet shown among them); the
# browser that sent it can show them for an hour. The record itself stays, with its counts
# and its file's hash, so a repeat of the file is still named.
RESULTS_KEPT = timedelta(days=1)
# Workers that took an upload and did not finish it (killed, storage gone) before it is given up.
MAX_ATTEMPTS = 5
GIVEN_UP = (
    "Issuing was interrupted {attempts} times and was given up at line {line}: "
    "the rows from there on were not issued."
)
_KEK_INFO = b"verity credential uploads v1"
_AAD = b"verity credential upload"


class UnreadableUpload(Exception):
    """Sealed under another ``SECRET_KEY``: the rows or results cannot be read back."""


def _key(secret: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
    return hkdf.derive(secret.encode("utf-8"))


def seal(value: Any, secret: str) -> bytes:
    body = json.dumps(value, separators=(",", ":")).encode()
    return sealing.seal(body, _key(secret), _AAD)


def unseal(sealed: bytes, secret: str) -> Any:
    try:
        body = sealing.open_sealed(sealed, _key(secret), _AAD)
    except sealing.SealBroken:
        raise UnreadableUpload("sealed under another secret") from None
    return json.loads(body)


@dataclass(frozen=True)
class PendingRow:
    """One checked row: its line in the file and the ``POST /credentials`` body it becomes."""

    line: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Results:
    """What the job has done so far: ``[credential_id, code, mail outcome]`` per issued row,
    and ``"Line n: why"`` per failed row."""

    rows: list[list[Any]]
    failures: list[str]

    def sealed(self, secret: str) -> bytes:
        return seal({"rows": self.rows, "failures": self.failures}, secret)

    @classmethod
    def of(cls, upload: CredentialUpload, secret: str) -> Results:
        if upload.sealed_results is None:
            return cls([], [])
        kept = unseal(upload.sealed_results, secret)
        return cls(kept["rows"], kept["failures"])


def earlier_upload(organization_id: uuid.UUID, file_sha256: str) -> CredentialUpload | None:
    """The latest upload of the same file in the organization, if there was one."""
    return db.session.scalar(
        select(CredentialUpload)
        .where(
            CredentialUpload.organization_id == organization_id,
            CredentialUpload.file_sha256 == file_sha256,
        )
        .order_by(CredentialUpload.created_at.desc())
        .limit(1)
    )


def create_upload(
    organization_id: uuid.UUID,
    sender: Actor,
    file_name: str,
    file_sha256: str,
    base_url: str,
    rows: list[PendingRow],
    secret: str,
    now: datetime,
) -> CredentialUpload:
    """Record a checked file for the job to issue; flushed, not committed."""
    upload = CredentialUpload(
        organization_id=organization_id,
        created_at=now,
        uploaded_by_type=sender.type,
        uploaded_by_id=sender.id,
        uploaded_by=sender.name,
        client_ip=sender.client_ip,
        file_name=file_name[:255],
        file_sha256=file_sha256,
        base_url=base_url,
        status=UploadStatus.QUEUED,
        rows_total=len(rows),
        sealed_rows=seal([[row.line, row.body] for row in rows], secret),
        sealed_results=Results([], []).sealed(secret),
    )
    db.session.add(upload)
    db.session.flush()
    return upload


def get_upload(organization_id: uuid.UUID, upload_id: uuid.UUID) -> CredentialUpload | None:
    """The organization's upload; another organization's reads as none."""
    upload = db.session.get(CredentialUpload, upload_id, populate_existing=True)
    return upload if upload is not None and upload.organization_id == organization_id else None


def pending_rows(upload: CredentialUpload, secret: str) -> list[PendingRow]:
    if upload.sealed_rows is None:
        return []
    return [PendingRow(line, body) for line, body in unseal(upload.sealed_rows, secret)]


def lease(upload_id: uuid.UUID, now: datetime) -> CredentialUpload | None:
    """Take the upload for this worker until ``now + LEASE``; None when it is finished or
    another worker holds it. The row count of the conditional UPDATE decides."""
    taken = db.session.execute(
        update(CredentialUpload)
        .where(
            CredentialUpload.id == upload_id,
            CredentialUpload.status != UploadStatus.FINISHED,
            or_(CredentialUpload.leased_until.is_(None), CredentialUpload.leased_until <= now),
        )
        .values(
            status=UploadStatus.RUNNING,
            leased_until=now + LEASE,
            attempts=CredentialUpload.attempts + 1,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:
        return None
    upload = db.session.get(CredentialUpload, upload_id, populate_existing=True)
    assert upload is not None
    if upload.started_at is None:
        upload.started_at = now
    return upload


def advance(
    upload: CredentialUpload,
    dealt: int,
    issued: int,
    failed: int,
    results: Results,
    secret: str,
    now: datetime,
) -> bool:
    """Move the upload past the ``dealt`` rows of the batch in this transaction, with what
    they gave; False when another worker moved it first (roll the batch back)."""
    moved = db.session.execute(
        update(CredentialUpload)
        .where(CredentialUpload.id == upload.id, CredentialUpload.position == upload.position)
        .values(
            position=CredentialUpload.position + dealt,
            rows_issued=CredentialUpload.rows_issued + issued,
            rows_failed=CredentialUpload.rows_failed + failed,
            sealed_results=results.sealed(secret),
            leased_until=now + LEASE,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:
        return False
    db.session.refresh(upload)
    return True


def finish(upload: CredentialUpload, now: datetime, stopped: str | None = None) -> None:
    """Done (or given up): the rows waiting are dropped, the results stay."""
    upload.status = UploadStatus.FINISHED
    upload.finished_at = now
    upload.updated_at = now
    upload.leased_until = None
    upload.sealed_rows = None
    upload.stopped = stopped
    db.session.flush()


def give_up_if_worn(upload: CredentialUpload, rows: list[PendingRow], now: datetime) -> bool:
    """An upload taken ``MAX_ATTEMPTS`` times without finishing is finished as it stands."""
    if upload.attempts <= MAX_ATTEMPTS:
        return False
    line = rows[upload.position].line if upload.position < len(rows) else 0
    finish(upload, now, GIVEN_UP.format(attempts=MAX_ATTEMPTS, line=line))
    return True


def keep_results(upload: CredentialUpload, results: Results, secret: str) -> None:
    """Seal the results again (without the codes once shown, with a late mail outcome)."""
    upload.sealed_results = results.sealed(secret)
    db.session.flush()


def stalled(now: datetime) -> list[uuid.UUID]:
    """Uploads no worker is moving: never taken (the queue was unreachable when they were
    sent) or whose worker's lease ran out; for the sweep to hand them to the queue again."""
    return list(
        db.session.scalars(
            select(CredentialUpload.id).where(
                CredentialUpload.status != UploadStatus.FINISHED,
                or_(
                    CredentialUpload.leased_until <= now,
                    (CredentialUpload.leased_until.is_(None))
                    & (CredentialUpload.created_at <= now - LEASE),
                ),
            )
        )
    )


def forget_results(now: datetime) -> int:
    """Drop the results (and any code never shown) of uploads finished over ``RESULTS_KEPT``
    ago."""
    forgotten = db.session.execute(
        update(CredentialUpload)
        .where(
            CredentialUpload.status == UploadStatus.FINISHED,
            CredentialUpload.finished_at <= now - RESULTS_KEPT,
            CredentialUpload.sealed_results.is_not(None),
        )
        .values(sealed_results=None)
        .execution_options(synchronize_session=False)
    )
    return forgotten.rowcount or 0


@dataclass(frozen=True)
class Progress:
    """How far an upload has come, as its results page and its progress answer say it."""

    status: str
    rows: int
    done: int
    issued: int
    failed: int
    seconds_left: int | None

    @property
    def percent(self) -> int:
        return 100 if not self.rows else self.done * 100 // self.rows

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "rows": self.rows,
            "rows_done": self.done,
            "rows_issued": self.issued,
            "rows_failed": self.failed,
            "seconds_left": self.seconds_left,
        }


def progress(upload: CredentialUpload, now: datetime) -> Progress:
    """Rows dealt with, issued and failed, and the time left at the pace so far (unknown
    until the first batch is done)."""
    done = upload.position
    left: int | None = None
    if upload.status is UploadStatus.FINISHED:
        left = 0
    elif done and upload.started_at is not None:
        elapsed = (now - upload.started_at).total_seconds()
        left = max(0, round(elapsed / done * (upload.rows_total - done)))
    return Progress(
        upload.status.value,
        upload.rows_total,
        done,
        upload.rows_issued,
        upload.rows_failed,
        left,
    )
