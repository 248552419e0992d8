"""A CSV upload is issued by a background job, and the same file is not issued twice unasked.

The upload request only reads and checks the file, records it and answers: no credential
exists when it returns. The job issues the rows; the results page shows its progress (rows
done, rows failed, time left) until it is done, then the results. A row refused when its turn
comes is counted as failed and named, the others are issued. The same file sent again in the
organization (by the browser's Back button and a fresh form) is named with when, by whom and
how many were issued, and issues nothing unless the form confirms that repeat.
"""

from __future__ import annotations

import io
import re
import threading
import uuid

from factories import make_apikey, make_staff
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update
from staff_support import issue_uploads, sign_in, submit, text_of, upload_nonce
from support.issuing import add_recipient, publish_schema

from app import clock
from app.extensions import db
from app.issuance import uploads
from app.issuance.models import CredentialUpload
from app.jobs.queue import queue_of
from app.staff import upload_jobs

RESULTS = "/dashboard/credentials/upload/results"
PROGRESS = "/dashboard/credentials/upload/progress"
THREE_ROWS = (
    b"recipient_email,licence_number\n"
    b"ada@example.test,RN-1\nada@example.test,RN-2\nada@example.test,RN-3\n"
)
CODE = re.compile(r'<td data-label="Code"><code>(\d+)</code></td>')
REPEAT = re.compile(r'name="repeat_of" type="checkbox" value="([^"]+)"')


def send(browser: FlaskClient, schema: str, data: bytes = THREE_ROWS, **fields):
    """The upload form, freshly opened (as after the Back button), sent with ``data``."""
    return submit(
        browser,
        "/dashboard/credentials/upload",
        {"schema_id": schema, "name": "", "description": "", "tx_code": "on",
         "upload_nonce": upload_nonce(browser), **fields,
         "file": (io.BytesIO(data), "licences.csv", "text/csv")},
        content_type="multipart/form-data",
    )  # fmt: skip


def issued(client: FlaskClient, owner) -> int:
    return client.get("/credentials", headers=owner.headers()).get_json()["total"]


def ready(app: Flask, client: FlaskClient, owner) -> tuple[FlaskClient, str]:
    schema = publish_schema(client, owner)
    add_recipient(app, client, owner, "ada@example.test")
    browser = app.test_client()
    assert sign_in(browser, owner.token).status_code == 302
    return browser, schema


# -- issued by a job, with its progress -------------------------------------------------------


def test_the_upload_answers_before_issuing_and_the_job_issues_the_rows(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    posted = send(browser, schema)
    assert posted.status_code == 303 and posted.location == RESULTS
    assert issued(client, owner) == 0, "the request only read and checked the file"
    assert queue_of(app).pending_count() >= 1

    waiting = text_of(browser.get(RESULTS))
    assert 'data-testid="upload-running"' in waiting
    assert '<progress data-testid="upload-bar" value="0" max="3"' in waiting
    assert '<span data-testid="rows-done">0</span> of 3 rows done' in waiting
    assert '<meta http-equiv="refresh"' in waiting, "followed without script too"
    assert browser.get(PROGRESS).get_json() == {
        "status": "QUEUED",
        "rows": 3,
        "rows_done": 0,
        "rows_issued": 0,
        "rows_failed": 0,
        "seconds_left": None,
    }

    issue_uploads(app)
    assert issued(client, owner) == 3
    progress = browser.get(PROGRESS).get_json()
    assert progress["status"] == "FINISHED" and progress["rows_done"] == 3
    assert progress["rows_issued"] == 3 and progress["rows_failed"] == 0
    page = text_of(browser.get(RESULTS))
    assert "3 credentials offered" in page and len(CODE.findall(page)) == 3
    assert '<meta http-equiv="refresh"' not in page
    assert CODE.findall(text_of(browser.get(RESULTS))) == [], "codes shown once"


def test_the_job_issues_in_the_senders_name(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    issue_uploads(app)
    events = client.get(
        "/audit-events", query_string={"action": "credential.created"}, headers=owner.headers()
    ).get_json()["results"]
    assert len(events) == 3
    assert {(e["actor"]["type"], e["actor"]["name"]) for e in events} == {("user", owner.email)}


def test_progress_is_reported_while_the_job_issues(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    rows = 200
    data = b"recipient_email,licence_number\n" + b"".join(
        b"ada@example.test,RN-%d\n" % n for n in range(rows)
    )
    assert send(browser, schema, data).status_code == 303
    seen: list[dict] = []
    worker = threading.Thread(target=issue_uploads, args=(app,))
    worker.start()
    try:
        while worker.is_alive():
            seen.append(browser.get(PROGRESS).get_json())
    finally:
        worker.join(timeout=300)
    midway = [p for p in seen if 0 < p["rows_done"] < rows]
    assert midway, seen[-3:]
    assert all(p["rows_done"] % uploads.BATCH == 0 for p in midway), "a batch at a time"
    assert all(isinstance(p["seconds_left"], int) for p in midway), "time left once paced"
    assert all(p["status"] == "RUNNING" for p in midway)
    assert browser.get(PROGRESS).get_json()["rows_issued"] == rows
    assert issued(client, owner) == rows


def test_a_row_refused_when_its_turn_comes_is_counted_failed_and_the_rest_issued(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    grace = add_recipient(app, client, owner, "grace@example.test")
    data = THREE_ROWS + b"grace@example.test,RN-4\n"
    assert send(browser, schema, data).status_code == 303
    apikey = {"apikey": make_apikey(app, owner.organization_id, name="hr")}
    assert client.delete(f"/recipients/{grace}", headers=apikey).status_code == 204

    issue_uploads(app)
    progress = browser.get(PROGRESS).get_json()
    assert progress["rows_done"] == 4
    assert (progress["rows_issued"], progress["rows_failed"]) == (3, 1)
    page = text_of(browser.get(RESULTS))
    assert "3 credentials offered" in page
    assert 'data-testid="upload-failures"' in page
    assert f"Line 5: {upload_jobs.GONE}" in page
    assert issued(client, owner) == 3


def test_a_job_run_again_issues_nothing_more(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    issue_uploads(app)
    with app.app_context():
        upload_id = db.session.scalar(db.select(CredentialUpload.id))
        db.session.remove()
    queue_of(app).enqueue(upload_jobs.ISSUE_JOB, str(upload_id))
    issue_uploads(app)
    assert issued(client, owner) == 3


def test_an_upload_no_worker_took_is_handed_to_the_queue_again_and_resumes(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    queue_of(app).flush()  # the enqueue was lost (the queue's storage was down)
    with app.app_context():
        upload_id = db.session.scalar(db.select(CredentialUpload.id))
        # A worker took it, issued nothing, and died: its lease ran out long ago.
        db.session.execute(
            update(CredentialUpload)
            .where(CredentialUpload.id == upload_id)
            .values(leased_until=clock.now() - uploads.LEASE, attempts=1)
        )
        db.session.commit()
        upload_jobs.sweep()
        db.session.remove()
    assert issue_uploads(app) >= 1
    assert issued(client, owner) == 3
    assert "3 credentials offered" in text_of(browser.get(RESULTS))


# -- the same file again ----------------------------------------------------------------------


def test_the_same_file_again_is_named_and_issues_only_when_confirmed(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    issue_uploads(app)
    assert issued(client, owner) == 3

    # Back, a fresh form, the same file: named, refused, nothing issued or queued.
    again = send(browser, schema)
    assert again.status_code == 409
    page = text_of(again)
    assert 'data-testid="upload-repeat"' in page
    assert "This file was already uploaded" in page
    assert f"by {owner.email}: 3 credentials issued" in page
    assert re.search(r"\d\d:\d\d UTC", page)
    issue_uploads(app)
    assert issued(client, owner) == 3

    # A confirmation for another upload is not this one's.
    wrong = send(browser, schema, repeat_of=str(uuid.uuid4()))
    assert wrong.status_code == 409
    issue_uploads(app)
    assert issued(client, owner) == 3

    # Confirmed: issued again, once.
    earlier = REPEAT.search(page)
    assert earlier, "the form asks to confirm"
    confirmed = send(browser, schema, repeat_of=earlier.group(1))
    assert confirmed.status_code == 303
    issue_uploads(app)
    assert issued(client, owner) == 6
    assert "3 credentials offered" in text_of(browser.get(RESULTS))


def test_another_file_or_another_organization_is_no_repeat(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    assert send(browser, schema, THREE_ROWS + b"ada@example.test,RN-4\n").status_code == 303
    issue_uploads(app)
    assert issued(client, owner) == 7

    other = make_staff(app, "bea@example.test", org_name="Other")
    other_browser, other_schema = ready(app, client, other)
    assert send(other_browser, other_schema).status_code == 303
    issue_uploads(app)
    assert issued(client, other) == 3


def test_a_repeat_of_a_file_still_issuing_is_named_too(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    again = send(browser, schema)
    assert again.status_code == 409
    assert "0 credentials issued so far (it is still issuing)" in text_of(again)
    issue_uploads(app)
    assert issued(client, owner) == 3


def test_the_results_and_codes_never_shown_are_forgotten_a_day_after_the_upload(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema).status_code == 303
    issue_uploads(app)
    with app.app_context():
        upload = db.session.scalar(db.select(CredentialUpload))
        assert len(uploads.Results.of(upload, "test-secret").rows) == 3
        finished = upload.finished_at
        assert uploads.forget_results(finished + uploads.RESULTS_KEPT / 2) == 0
        assert uploads.forget_results(finished + uploads.RESULTS_KEPT) == 1
        db.session.commit()
        upload = db.session.scalar(db.select(CredentialUpload))
        assert upload.sealed_results is None and upload.sealed_rows is None
        assert (upload.rows_issued, upload.file_sha256) != (0, "")
        db.session.remove()
    assert send(browser, schema).status_code == 409, "still named as a repeat"
