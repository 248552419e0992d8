"""A large CSV upload does not hold other organizations' writes until it ends.

On SQLite every organization writes to one file, and a write transaction holds the file's
one write lock. An upload of 1,000 rows used to be one transaction of several seconds, so a
person of another organization opening their page (which writes: a presentation request is
minted) waited until the upload ended. Here that person's page is opened while the upload's
job is issuing, and must be served while the job is still under way: fewer than all its rows
stored, the job not yet done.
"""

from __future__ import annotations

import io
import threading
import uuid

from factories import make_staff, make_verification
from sqlalchemy import func, select
from staff_support import issue_uploads, sign_in, submit, text_of, upload_nonce
from support.issuing import add_recipient, publish_schema

from app.database import reading
from app.extensions import db
from app.issuance.models import Credential

ROWS = 1000


def stored_credentials(app, organization_id: str) -> int:
    with app.app_context(), reading():
        count = db.session.scalar(
            select(func.count())
            .select_from(Credential)
            .where(Credential.organization_id == uuid.UUID(organization_id))
        )
        db.session.remove()
    return count or 0


def test_another_organizations_person_is_served_while_a_big_upload_is_issuing(app, client):
    uploader = make_staff(app)
    schema = publish_schema(client, uploader)
    add_recipient(app, client, uploader, "ada@example.test")
    other = make_staff(app, "bea@example.test", org_name="Other")
    verification = make_verification(client, other)
    browser = app.test_client()
    assert sign_in(browser, uploader.token).status_code == 302
    rows = b"".join(b"ada@example.test,RN-%d\n" % n for n in range(ROWS))
    data = b"recipient_email,licence_number\n" + rows
    nonce = upload_nonce(browser)

    response = submit(
        browser,
        "/dashboard/credentials/upload",
        {"schema_id": schema, "name": "", "description": "", "upload_nonce": nonce,
         "file": (io.BytesIO(data), "many.csv", "text/csv")},
        content_type="multipart/form-data",
    )  # fmt: skip
    assert response.status_code == 303, text_of(response)[:500]
    assert stored_credentials(app, uploader.organization_id) == 0, "the job issues"

    worker = threading.Thread(target=issue_uploads, args=(app,))
    worker.start()
    try:
        # The person waits until the job has started storing, then opens their page.
        while worker.is_alive() and stored_credentials(app, uploader.organization_id) == 0:
            threading.Event().wait(0.005)
        person = app.test_client()
        opened = person.post(
            "/verifications/individuals",
            json={"customer_id": "walk-in", "verification_id": verification["id"]},
        )
        connected = person.get(f"/verifications/{opened.get_json()['id']}/connect")
        stored_when_served = stored_credentials(app, uploader.organization_id)
        job_done_first = not worker.is_alive()
    finally:
        worker.join(timeout=300)
    assert opened.status_code == 201, opened.get_json()
    assert connected.status_code == 200, connected.get_json()
    assert f"{ROWS} credentials offered" in text_of(browser.get(response.location))
    assert stored_credentials(app, uploader.organization_id) == ROWS
    # Served during the job, not after it: part of the file was stored, not all of it.
    assert not job_done_first
    assert 0 < stored_when_served < ROWS, stored_when_served
