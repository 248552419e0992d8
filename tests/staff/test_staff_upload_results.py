"""The CSV upload is Post/Redirect/Get, and one form issues once.

The upload answers with a 303 to its results page; the codes are shown there once, a reload
shows the rows without them and issues nothing. The form's one-time nonce is claimed before
anything is issued: the same form sent again (a browser's "resend", a double click, two at
once) issues nothing and says so; a form without a valid nonce is refused and renewed. The
email column, on the page and in the file, says what became of each email in the same words.
"""

from __future__ import annotations

import base64
import csv
import io
import re
import threading

from factories import make_staff
from flask import Flask
from flask.testing import FlaskClient
from staff_support import issue_uploads, sign_in, submit, text_of, upload_nonce
from support.issuing import add_recipient, publish_schema

from app.staff.upload_results import SENT_TWICE, STALE_FORM

RESULTS = "/dashboard/credentials/upload/results"
TWO_ROWS = b"recipient_email,licence_number\nada@example.test,RN-1\nada@example.test,RN-2\n"
CODE = re.compile(r'<td data-label="Code"><code>(\d+)</code></td>')
DOWNLOAD = re.compile(r'href="data:text/csv;charset=utf-8;base64,([^"]+)" download=')


def send(
    browser: FlaskClient, schema: str, nonce: str, data: bytes = TWO_ROWS, issue=True, **fields
):
    """Send the form, then let the worker issue what it recorded."""
    sent = submit(
        browser,
        "/dashboard/credentials/upload",
        {"schema_id": schema, "name": "", "description": "", "tx_code": "on",
         "upload_nonce": nonce, **fields, "file": (io.BytesIO(data), "two.csv", "text/csv")},
        content_type="multipart/form-data",
    )  # fmt: skip
    if issue:
        issue_uploads(browser.application)
    return sent


def issued(client: FlaskClient, owner) -> int:
    return client.get("/credentials", headers=owner.headers()).get_json()["total"]


def downloaded(page: str) -> list[list[str]]:
    link = DOWNLOAD.search(page)
    assert link, "no download link"
    return list(csv.reader(io.StringIO(base64.b64decode(link.group(1)).decode())))


def ready(app: Flask, client: FlaskClient, owner) -> tuple[FlaskClient, str]:
    """A signed-in browser and a published schema; ada@example.test is a recipient."""
    schema = publish_schema(client, owner)
    add_recipient(app, client, owner, "ada@example.test")
    browser = app.test_client()
    assert sign_in(browser, owner.token).status_code == 302
    return browser, schema


def test_the_upload_redirects_to_its_results_and_a_reload_issues_nothing(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    posted = send(browser, schema, upload_nonce(browser))
    assert posted.status_code == 303
    assert posted.location == RESULTS
    first = text_of(browser.get(RESULTS))
    assert "2 credentials offered" in first
    codes = CODE.findall(first)
    assert len(codes) == 2 and 'data-testid="codes-shown-once"' in first
    assert sorted(row[4] for row in downloaded(first)[1:]) == sorted(codes)
    assert issued(client, owner) == 2

    reloaded = browser.get(RESULTS)
    assert reloaded.status_code == 200
    page = text_of(reloaded)
    assert "2 credentials offered" in page, "the rows stay"
    assert CODE.findall(page) == [] and all(code not in page for code in codes), "shown once"
    assert [row[4] for row in downloaded(page)[1:]] == ["", ""]
    assert "were shown once" in page
    assert issued(client, owner) == 2


def test_the_same_form_sent_again_issues_nothing_and_says_so(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    nonce = upload_nonce(browser)
    assert send(browser, schema, nonce).status_code == 303
    codes = CODE.findall(text_of(browser.get(RESULTS)))
    assert len(codes) == 2

    again = send(browser, schema, nonce)  # the browser's "resend", after the redirect
    assert again.status_code == 303 and again.location == RESULTS
    page = text_of(browser.get(RESULTS))
    assert SENT_TWICE in page
    assert "2 credentials offered" in page and CODE.findall(page) == []
    # Even with another file: the form was sent once.
    other = send(browser, schema, nonce, data=TWO_ROWS + b"ada@example.test,RN-3\n")
    assert SENT_TWICE in text_of(browser.get(other.location))
    assert issued(client, owner) == 2


def test_a_form_sent_twice_before_its_results_were_seen_shows_the_codes_once(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    nonce = upload_nonce(browser)
    assert send(browser, schema, nonce).status_code == 303
    assert send(browser, schema, nonce).status_code == 303  # a double click
    page = text_of(browser.get(RESULTS))
    assert SENT_TWICE in page and len(CODE.findall(page)) == 2
    assert CODE.findall(text_of(browser.get(RESULTS))) == []
    assert issued(client, owner) == 2


def test_two_uploads_of_one_form_at_once_issue_once(app, client):
    owner = make_staff(app)
    _, schema = ready(app, client, owner)
    browsers = [app.test_client() for _ in range(2)]
    for browser in browsers:
        assert sign_in(browser, owner.token).status_code == 302
    nonce = upload_nonce(browsers[0])
    start = threading.Barrier(2)
    answers: list[int] = []

    def post(browser: FlaskClient) -> None:
        start.wait()
        answers.append(send(browser, schema, nonce, issue=False).status_code)

    threads = [threading.Thread(target=post, args=(b,)) for b in browsers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert answers == [303, 303]
    issue_uploads(app)
    assert issued(client, owner) == 2
    notices = [SENT_TWICE in text_of(b.get(RESULTS)) for b in browsers]
    assert sorted(notices) == [False, True], "one issued, the other was told"


def test_a_form_without_a_valid_nonce_is_refused_renewed_and_issues_nothing(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    nonce = upload_nonce(browser)
    for sent in ("", "forged", nonce[:-2] + "xx"):
        refused = send(browser, schema, sent)
        assert refused.status_code == 400
        page = text_of(refused)
        assert STALE_FORM in page
        assert re.search(r'name="upload_nonce" value="[^"]+"', page), "a fresh form"
    assert issued(client, owner) == 0


def test_a_refused_file_leaves_its_form_usable(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    nonce = upload_nonce(browser)
    bad = send(browser, schema, nonce, data=b"recipient_email,licence_number\nnobody@x.test,RN\n")
    assert bad.status_code == 400 and "Nothing was issued." in text_of(bad)
    assert send(browser, schema, nonce).status_code == 303
    assert SENT_TWICE not in text_of(browser.get(RESULTS))
    assert issued(client, owner) == 2


def test_the_results_page_without_an_upload_says_there_is_nothing_to_show(browser):
    response = browser.get(RESULTS)
    assert response.status_code == 200
    assert 'data-testid="upload-results-gone"' in text_of(response)


def test_another_browser_of_the_organization_does_not_see_the_results(app, client):
    owner = make_staff(app)
    browser, schema = ready(app, client, owner)
    assert send(browser, schema, upload_nonce(browser)).status_code == 303
    colleague = app.test_client()
    assert sign_in(colleague, owner.token).status_code == 302
    assert 'data-testid="upload-results-gone"' in text_of(colleague.get(RESULTS))
    assert len(CODE.findall(text_of(browser.get(RESULTS)))) == 2


def test_without_a_mail_server_the_results_and_their_file_say_the_email_was_logged(make_app):
    app = make_app(MAIL_URL="", ENV="development")
    owner = make_staff(app)
    browser, schema = ready(app, client := app.test_client(), owner)
    assert send(browser, schema, upload_nonce(browser)).status_code == 303
    page = text_of(browser.get(RESULTS))
    logged = "logged (no mail server configured)"
    assert page.count(f'<td data-label="Email">{logged}</td>') == 2
    rows = downloaded(page)
    assert rows[0][5] == "email"
    assert [row[5] for row in rows[1:]] == [logged, logged]
    assert '<td data-label="Email">sent</td>' not in page
    assert 'data-testid="mail-logged"' in page and "gets an email" not in page
    assert issued(client, owner) == 2
