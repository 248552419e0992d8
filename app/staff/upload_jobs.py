"""The background job that issues a dashboard CSV upload, and the sweep that finds an upload
no worker is moving (``app.issuance.uploads`` holds the rules).

The job issues in the sender's name (the audit trail names them, as if the request had
issued), mails each offer once its batch is committed, and keeps each row's code and email
outcome with the upload for its results page.
"""

from __future__ import annotations

import uuid

from flask import current_app
from pydantic import ValidationError

from app import clock, jobs, mail
from app.audit import operations as audit
from app.errors import ApiError, NotFound, describe_validation_error
from app.extensions import db
from app.issuance import operations as issuing
from app.issuance import uploads
from app.issuance.links import IssuerLinks
from app.issuance.operations import IssueCredential, IssuedOffer
from app.organizations.models import Organization
from app.staff.mail_words import email_offer, mail_outcome

ISSUE_JOB = "uploads.issue"
SWEEP_JOB = "uploads.sweep"
GONE = "the recipient or the schema was deleted after the file was checked."


@jobs.job(name=ISSUE_JOB, queue=jobs.UPLOADS)
def issue_upload(upload_id: str) -> None:
    issue(uuid.UUID(upload_id))


@jobs.periodic(jobs.crontab(minute="*"), name=SWEEP_JOB)
def sweep() -> None:
    """Hand the queue every upload no worker is moving (never taken, or its lease run out),
    and forget the results of uploads finished a day ago."""
    now = clock.now()
    for upload_id in uploads.stalled(now):
        jobs.try_enqueue(ISSUE_JOB, str(upload_id))
    uploads.forget_results(now)


def hand_over(upload_id: uuid.UUID) -> None:
    """After the upload's commit: to the queue, or to the next sweep if the queue is down."""
    jobs.try_enqueue(ISSUE_JOB, str(upload_id))


def issue(upload_id: uuid.UUID) -> None:
    """Issue the upload's rows from the first not yet dealt with, a batch per transaction;
    returns at once when it is finished or another worker holds it."""
    secret = str(current_app.config["SECRET_KEY"])
    upload = uploads.lease(upload_id, clock.now())
    db.session.commit()
    if upload is None:
        return
    try:
        rows = uploads.pending_rows(upload, secret)
    except uploads.UnreadableUpload:
        uploads.finish(upload, clock.now(), "The rows were sealed under another SECRET_KEY.")
        db.session.commit()
        return
    if uploads.give_up_if_worn(upload, rows, clock.now()):
        db.session.commit()
        return
    organization = db.session.get(Organization, upload.organization_id)
    if organization is None:
        return
    sender = audit.Actor(
        upload.uploaded_by_type, upload.uploaded_by_id, upload.uploaded_by, upload.client_ip
    )
    links = IssuerLinks(upload.base_url)
    with audit.acting_for(sender):
        while upload.position < len(rows):
            batch = rows[upload.position : upload.position + uploads.BATCH]
            offers, failures = issue_batch(organization, batch, links)
            for offer in offers:
                email_offer(offer.credential, links)
            results = uploads.Results.of(upload, secret)
            first = len(results.rows)
            results.rows.extend(
                [str(o.credential.id), o.tx_code, mail_outcome(o.credential, ())] for o in offers
            )
            results.failures.extend(failures)
            moved = uploads.advance(
                upload, len(batch), len(offers), len(failures), results, secret, clock.now()
            )
            if not moved:  # another worker took it over: this batch is theirs to issue
                db.session.rollback()
                return
            db.session.commit()
            undelivered = set(mail.undelivered())
            if undelivered:
                for row in results.rows[first:]:
                    if row[0] in undelivered:
                        row[2] = "failed"
                uploads.keep_results(upload, results, secret)
                db.session.commit()
    uploads.finish(upload, clock.now())
    db.session.commit()


def issue_batch(
    organization: Organization, batch: list[uploads.PendingRow], links: IssuerLinks
) -> tuple[list[IssuedOffer], list[str]]:
    """The batch in one go; if any row is refused now (a recipient deleted since the checks,
    the plan changed), row by row, each refused row a failure naming its line."""
    try:
        bodies = [IssueCredential.model_validate(row.body) for row in batch]
        with db.session.begin_nested():
            return issuing.issue_many(organization, bodies, links), []
    except (ApiError, ValidationError):
        pass
    offers: list[IssuedOffer] = []
    failures: list[str] = []
    for row in batch:
        try:
            body = IssueCredential.model_validate(row.body)
            with db.session.begin_nested():
                offers.append(issuing.issue_credential(organization, body, links))
        except ValidationError as exc:
            failures.append(f"Line {row.line}: {describe_validation_error(exc)}")
        except NotFound:
            failures.append(f"Line {row.line}: {GONE}")
        except ApiError as exc:
            failures.append(f"Line {row.line}: {exc.message}")
    return offers, failures
