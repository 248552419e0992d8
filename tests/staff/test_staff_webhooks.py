"""The dashboard's webhooks page: add an endpoint (secret shown once), choose events, see
deliveries with their response codes, send one again, rotate the secret, disable, delete.

Deliveries go to a real receiver on loopback, through the service's own outbox and job queue
run in this process; the receiver checks nothing here (tests/webhooks covers signatures), it
answers the status codes the test asks for.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from factories import make_staff, make_verification
from flask import Flask
from flask.testing import FlaskClient
from staff_support import csrf_of, sign_in, submit, text_of
from webhooks.receiver import Receiver

from app.extensions import db
from app.jobs.queue import queue_of
from app.organizations.models import Plan
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.verifications.operations import open_individual
from app.webhooks import delivery
from app.webhooks import operations as hooks
from app.webhooks.models import WebhookEndpoint

PAGE = "/dashboard/webhooks"
SECRET = re.compile(r'<code id="new-secret">(whsec_[A-Za-z0-9+/=_-]+)</code>')
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)


def add(browser: FlaskClient, url: str = "https://hooks.example.test/verity", **fields):
    return submit(browser, PAGE, {"url": url, **fields}, follow_redirects=True)


def secret_in(response) -> str:
    match = SECRET.search(text_of(response))
    assert match, "the response shows no secret"
    return match.group(1)


def endpoint_id_in(page: str) -> str:
    match = re.search(r"/dashboard/webhooks/([0-9a-f-]{36})", page)
    assert match, "no link to the endpoint"
    return match.group(1)


def test_adding_an_endpoint_shows_its_secret_once_with_the_chosen_events(browser, client, owner):
    page = browser.get(PAGE)
    assert page.status_code == 200
    assert f'<a href="{PAGE}" aria-current="page">Webhooks</a>' in text_of(page)
    assert 'value="individual.revoked"' in text_of(page)

    added = add(browser, events=["individual.verified", "individual.revoked"], include_claims="on")
    assert added.status_code == 200, text_of(added)
    assert added.history[0].status_code == 303
    secret = secret_in(added)
    listed = client.get("/webhooks/endpoints", headers=owner.headers()).get_json()["results"]
    assert [(e["url"], e["events"], e["include_claims"]) for e in listed] == [
        ("https://hooks.example.test/verity", ["individual.verified", "individual.revoked"], True)
    ]
    endpoint_id = endpoint_id_in(text_of(added))
    assert endpoint_id == listed[0]["id"]
    # Never again: not on the list, not on the endpoint's page.
    for path in (PAGE, f"{PAGE}/{endpoint_id}"):
        shown = browser.get(path)
        assert shown.status_code == 200
        assert secret not in text_of(shown) and "whsec_" not in text_of(shown)


def test_a_refused_url_keeps_what_was_typed(browser, client, owner):
    refused = add(
        browser, url="ftp://hooks.example.test/x", description="CRM", events=["individual.failed"]
    )
    assert refused.status_code == 400
    page = text_of(refused)
    assert "must be an https:// URL" in page
    assert 'value="ftp://hooks.example.test/x"' in page and 'value="CRM"' in page
    assert 'value="individual.failed" checked' in page
    assert client.get("/webhooks/endpoints", headers=owner.headers()).get_json()["total"] == 0


def test_forms_without_the_csrf_token_are_refused(browser, client, owner):
    refused = browser.post(PAGE, data={"url": "https://hooks.example.test/x"})
    assert refused.status_code == 403
    assert client.get("/webhooks/endpoints", headers=owner.headers()).get_json()["total"] == 0


def test_the_free_plan_gets_the_upgrade_prompt_instead_of_the_form(app):
    free = make_staff(app, "free@example.test", Plan.FREE, "Free Co")
    browser = app.test_client()
    sign_in(browser, free.token)
    page = text_of(browser.get(PAGE))
    assert 'data-testid="upgrade-prompt"' in page and 'name="url"' not in page
    assert add(browser).status_code == 402


def test_the_pages_keep_the_dashboards_strict_csp(browser):
    endpoint_id = endpoint_id_in(text_of(add(browser)))
    for path in (PAGE, f"{PAGE}/{endpoint_id}", f"{PAGE}/{endpoint_id}/delete"):
        response = browser.get(path)
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy
        assert response.headers["X-Frame-Options"] == "DENY"
        assert not INLINE_SCRIPT.search(text_of(response))
        assert not STYLE_ATTRIBUTE.search(text_of(response))


def test_rotating_shows_a_new_secret_once_and_the_old_one_still_signs(app, browser):
    first = add(browser)
    old = secret_in(first)
    endpoint_id = endpoint_id_in(text_of(first))
    rotated = submit(browser, f"{PAGE}/{endpoint_id}/rotate", follow_redirects=True)
    assert rotated.status_code == 200
    assert rotated.history[0].status_code == 303
    new = secret_in(rotated)
    assert new != old and "24 hours" in text_of(rotated)
    with app.app_context():
        endpoint = db.session.get(WebhookEndpoint, uuid.UUID(endpoint_id))
        assert hooks.signing_secrets(endpoint) == [new, old]
        db.session.remove()
    assert new not in text_of(browser.get(f"{PAGE}/{endpoint_id}"))


def test_disabling_enabling_and_deleting(browser, client, owner):
    endpoint_id = endpoint_id_in(text_of(add(browser)))
    path = f"{PAGE}/{endpoint_id}"

    def enabled() -> bool:
        listed = client.get("/webhooks/endpoints", headers=owner.headers()).get_json()
        return listed["results"][0]["enabled"]

    disabled = submit(browser, f"{path}/disable")
    assert disabled.status_code == 303 and disabled.headers["Location"] == path
    assert not enabled()
    page = text_of(browser.get(path))
    assert "Endpoint disabled" in page and "Disabled by a member of the organization" in page
    assert submit(browser, f"{path}/enable").status_code == 303 and enabled()

    confirm = text_of(browser.get(f"{path}/delete"))
    assert "cannot be undone" in confirm
    deleted = submit(browser, f"{path}/delete")
    assert deleted.status_code == 303 and deleted.headers["Location"] == PAGE
    assert client.get("/webhooks/endpoints", headers=owner.headers()).get_json()["total"] == 0
    assert browser.get(path).status_code == 404


def test_another_organizations_endpoint_is_not_found(app, browser):
    endpoint_id = endpoint_id_in(text_of(add(browser)))
    other = make_staff(app, "eve@example.test", org_name="Other")
    stranger = app.test_client()
    sign_in(stranger, other.token)
    assert stranger.get(f"{PAGE}/{endpoint_id}").status_code == 404
    token = csrf_of(stranger, "/dashboard/")
    for action in ("rotate", "disable", "delete"):
        response = stranger.post(f"{PAGE}/{endpoint_id}/{action}", data={"csrf_token": token})
        assert response.status_code == 404, action


# -- deliveries, with a receiver on loopback ---------------------------------------------------


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def hooks_app(make_app, tmp_path: Path) -> Flask:
    """Deliveries may reach loopback (the development setting); the queue is a SQLite file."""
    app = make_app(TRUST_ALLOW_PRIVATE=True, JOBS_QUEUE_URL=f"sqlite:///{tmp_path / 'q.db'}")
    yield app
    queue_of(app).flush()


def verified(app: Flask, verification_id: str, customer: str) -> None:
    """A person verified: the decision writes ``individual.verified`` to the outbox."""
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification_id), customer)
        request = connect(individual, 120, 600)
        record(consume(request.id), Decision(True, None, "https://issuer.example", {}))
        db.session.commit()
        db.session.remove()


def run_jobs(app: Flask) -> None:
    with app.app_context():
        delivery.enqueue_deliveries(delivery.relay())
        db.session.commit()
        db.session.remove()
    queue_of(app).run_pending()


def test_deliveries_show_response_codes_and_one_can_be_sent_again(hooks_app, receiver):
    staff = make_staff(hooks_app)
    browser = hooks_app.test_client()
    sign_in(browser, staff.token)
    added = add(browser, url=receiver.url, events=["individual.verified"])
    endpoint_id = endpoint_id_in(text_of(added))
    path = f"{PAGE}/{endpoint_id}"
    assert "Nothing sent yet" in text_of(browser.get(path))

    verification = make_verification(hooks_app.test_client(), staff)["id"]
    receiver.answers.append(500)
    verified(hooks_app, verification, "crm-1")
    run_jobs(hooks_app)
    assert [r.status for r in receiver.received] == [500]

    page = text_of(browser.get(path))
    assert page.count('data-testid="delivery"') == 1
    assert "individual.verified" in page
    assert '<td data-label="Response" data-testid="status-code">500</td>' in page
    assert "1 attempt<" in page and "Pending" in page

    replay = re.search(rf'action="({path}/deliveries/[0-9a-f-]{{36}}/replay)"', page)
    assert replay, "no button to send it again"
    sent_again = submit(browser, replay.group(1))
    assert sent_again.status_code == 303 and sent_again.headers["Location"] == path
    queue_of(hooks_app).run_pending()
    assert [r.status for r in receiver.received] == [500, 204]
    assert receiver.received[0].webhook_id == receiver.received[1].webhook_id

    page = text_of(browser.get(path))
    assert '<td data-label="Response" data-testid="status-code">204</td>' in page
    assert "Delivered" in page and "2 attempts<" in page
