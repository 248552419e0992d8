"""Each delivery attempt's request and response, as the delivery page and
``GET /webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}`` show them: headers and the
first 4 KiB of each body, secrets redacted, the error named by host, the organization's own."""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from factories import Staff, make_staff, make_verification
from staff.staff_support import sign_in, submit
from webhook_support import add_endpoint, drain, sweep

from app.api.webhook_endpoints import WebhookAttemptOut, WebhookDeliveryDetail
from app.extensions import db
from app.identity.models import User
from app.identity.operations import issue_session_token
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.retention import jobs as retention_jobs
from app.verifications.operations import open_individual
from app.webhooks.exchange import REDACTED, keep_body, keep_headers, redact_url

KIB_4 = 4096
# Markup in the answer: the page must show it as text.
ANSWER = b"<script>alert('receiver')</script>" + b"x" * 5000 + b"END-OF-ANSWER"


def send_test_event(client, staff, endpoint) -> dict:
    response = client.post(f"/webhooks/endpoints/{endpoint['id']}/test", headers=staff.headers())
    assert response.status_code == 202
    return response.get_json()


def shown(client, staff, endpoint, delivery):
    response = client.get(
        f"/webhooks/endpoints/{endpoint['id']}/deliveries/{delivery['id']}",
        headers=staff.headers(),
    )
    if response.status_code == 200:  # the shape the OpenAPI document gives, field for field
        body = response.get_json()
        WebhookDeliveryDetail.model_validate(body)
        assert set(body) == set(WebhookDeliveryDetail.model_fields)
        for attempt in body["attempt_log"]:
            assert set(attempt) == set(WebhookAttemptOut.model_fields)
    return response


def dashboard(app, staff):
    browser = app.test_client()
    sign_in(browser, staff.token)
    return browser


def test_an_attempt_keeps_the_request_and_the_answer_cut_at_4_kib(hooks_app, receiver):
    receiver.default_status = 200
    receiver.answer_headers = {
        "Content-Type": "text/plain; charset=utf-8",
        "X-Receiver": "kept as sent",
        "Set-Cookie": "session=receiver-session-cookie",
    }
    receiver.answer_body = ANSWER
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url + "?token=query-secret&v=2")
    delivery = send_test_event(client, staff, endpoint)
    drain(hooks_app)
    [arrived] = receiver.wait_for(1)

    body = shown(client, staff, endpoint, delivery).get_json()
    assert (body["id"], body["state"], body["attempts"]) == (delivery["id"], "DELIVERED", 1)
    [attempt] = body["attempt_log"]
    assert (attempt["status_code"], attempt["error"]) == (200, None)
    sent = attempt["request"]
    assert sent["method"] == "POST"
    assert sent["url"] == f"{receiver.url}?token={REDACTED}&v={REDACTED}"
    assert sent["body"] == arrived.body.decode() and sent["body_cut"] is False
    # What the receiver got, header for header; the signature is not a secret.
    for name in ("webhook-id", "webhook-timestamp", "webhook-signature", "content-type"):
        assert sent["headers"][name] == arrived.headers[name]
    assert {k.lower(): v for k, v in sent["headers"].items()}["user-agent"] == "Verity"
    answered = attempt["response"]
    assert answered["status_code"] == 200
    assert answered["headers"]["X-Receiver"] == "kept as sent"
    assert answered["headers"]["Set-Cookie"] == REDACTED
    assert answered["body"] == ANSWER[:KIB_4].decode() and answered["body_cut"] is True
    assert "END-OF-ANSWER" not in answered["body"]

    page = dashboard(hooks_app, staff).get(
        f"/dashboard/webhooks/{endpoint['id']}/deliveries/{delivery['id']}"
    )
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "&lt;script&gt;alert(&#39;receiver&#39;)&lt;/script&gt;" in html
    assert "<script>alert(" not in html
    assert html.count('data-testid="exchange-body"') == 2  # the request's and the answer's
    assert html.count('data-testid="body-cut"') == 1  # only the answer was cut
    assert "Cut: only the first 4 KiB are kept." in html
    assert "x" * 4000 in html and "END-OF-ANSWER" not in html
    assert "X-Receiver" in html and arrived.headers["webhook-signature"] in html
    for secret in ("query-secret", "receiver-session-cookie"):
        assert secret not in html and secret not in str(body)
    browser = dashboard(hooks_app, staff)
    listing = browser.get(f"/dashboard/webhooks/{endpoint['id']}")
    page_path = f"/dashboard/webhooks/{endpoint['id']}/deliveries/{delivery['id']}"
    assert f'href="{page_path}"' in listing.get_data(as_text=True)
    # "Send again" on the delivery's page comes back to it, where the next attempt will show.
    again = submit(browser, f"{page_path}/replay", {"back": "delivery"})
    assert (again.status_code, again.headers["Location"]) == (303, page_path)


@pytest.mark.parametrize(
    ("scheme", "error"),
    [
        ("http", "Connection refused by localhost"),
        ("https", "TLS with localhost failed: the handshake did not complete"),
    ],
)
def test_an_attempt_that_got_no_answer_keeps_the_error_named_by_host(
    hooks_app, receiver, scheme, error
):
    """Refused: nothing listens. TLS: the receiver speaks plain HTTP. Neither names the
    address ``localhost`` resolved to."""
    if scheme == "http":
        receiver.down()
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, f"{scheme}://localhost:{receiver.port}/hooks")
    delivery = send_test_event(client, staff, endpoint)
    drain(hooks_app)

    body = shown(client, staff, endpoint, delivery).get_json()
    [attempt] = body["attempt_log"]
    assert (attempt["status_code"], attempt["error"], attempt["response"]) == (None, error, None)
    assert attempt["request"]["url"] == endpoint["url"]
    assert "webhook-signature" in attempt["request"]["headers"]
    html = (
        dashboard(hooks_app, staff)
        .get(f"/dashboard/webhooks/{endpoint['id']}/deliveries/{delivery['id']}")
        .get_data(as_text=True)
    )
    assert f"No response: {error}" in html
    assert "127.0.0.1" not in html and "::1" not in html


def test_another_organization_cannot_see_the_attempts(hooks_app, receiver):
    client = hooks_app.test_client()
    owner = make_staff(hooks_app)
    endpoint = add_endpoint(client, owner, receiver.url)
    delivery = send_test_event(client, owner, endpoint)
    drain(hooks_app)
    assert shown(client, owner, endpoint, delivery).status_code == 200

    stranger = make_staff(hooks_app, "eve@example.test", org_name="Eve")
    refused = shown(client, stranger, endpoint, delivery)
    assert refused.status_code == 400 and refused.get_json()["code"] == "NOT_FOUND"
    own = add_endpoint(client, stranger, receiver.url)
    # Her own endpoint's ID with the other organization's delivery: missing as well.
    assert shown(client, stranger, own, delivery).get_json()["code"] == "NOT_FOUND"
    page = dashboard(hooks_app, stranger).get(
        f"/dashboard/webhooks/{endpoint['id']}/deliveries/{delivery['id']}"
    )
    assert page.status_code == 404
    crossed = dashboard(hooks_app, stranger).get(
        f"/dashboard/webhooks/{own['id']}/deliveries/{delivery['id']}"
    )
    assert crossed.status_code == 404
    assert "webhook-signature" not in crossed.get_data(as_text=True)


def verified_with_claims(app, staff, client) -> None:
    """A person of a verification keeping claims for a day, verified with a name."""
    verification = make_verification(client, staff, retention_days=1)["id"]
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification), "customer-1")
        request = connect(individual, 120, 600)
        claims = {"given_name": "Ada", "family_name": "Lovelace"}
        record(consume(request.id), Decision(True, None, "https://issuer.example", claims))
        db.session.commit()
        db.session.remove()


def expire_claims(app, staff, moved_clock) -> tuple[int, Staff]:
    """A day on: the retention job runs, and the member, whose session has lapsed, signs in
    again."""
    moved_clock.advance(timedelta(days=1, seconds=1))
    with app.app_context():
        erased = retention_jobs.delete_expired_claims()
        token, _ = issue_session_token(db.session.get(User, uuid.UUID(staff.user_id)), 12)
        db.session.commit()
        db.session.remove()
    return erased, replace(staff, token=token)


def the_attempts(client, staff, endpoint) -> list[dict]:
    [delivery] = client.get(
        f"/webhooks/endpoints/{endpoint['id']}/deliveries", headers=staff.headers()
    ).get_json()["results"]
    return shown(client, staff, endpoint, delivery).get_json()["attempt_log"]


def test_a_logged_body_carrying_claims_is_deleted_with_them(hooks_app, receiver, moved_clock):
    """An endpoint that opted in to claims got them in the body the attempt logged; that body
    goes when the claims' retention ends, and the rest of the attempt stays."""
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(
        client, staff, receiver.url, include_claims=True, events=["individual.verified"]
    )
    verified_with_claims(hooks_app, staff, client)
    sweep(hooks_app)
    drain(hooks_app)
    receiver.wait_for(1)
    [before] = the_attempts(client, staff, endpoint)
    assert "Lovelace" in before["request"]["body"]

    erased, staff = expire_claims(hooks_app, staff, moved_clock)
    assert erased == 1
    [after] = the_attempts(client, staff, endpoint)
    assert after["request"]["body"] is None
    assert after["request"]["headers"] == before["request"]["headers"]
    assert after["response"] == before["response"] and after["status_code"] == 204
    [delivery] = client.get(
        f"/webhooks/endpoints/{endpoint['id']}/deliveries", headers=staff.headers()
    ).get_json()["results"]
    html = (
        dashboard(hooks_app, staff)
        .get(f"/dashboard/webhooks/{endpoint['id']}/deliveries/{delivery['id']}")
        .get_data(as_text=True)
    )
    assert "Body deleted with the claims it carried" in html and "Lovelace" not in html


def test_a_body_logged_while_the_claims_expired_goes_on_the_next_run(
    hooks_app, receiver, moved_clock
):
    """The attempt was on its way (claims in its body) when the retention job ran; it logged
    the body after the job had deleted the claims. The next run finds it."""
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(
        client, staff, receiver.url, include_claims=True, events=["individual.verified"]
    )
    verified_with_claims(hooks_app, staff, client)
    sweep(hooks_app)
    receiver.hold_next = True
    worker = threading.Thread(target=drain, args=(hooks_app,))
    worker.start()
    assert receiver.holding.wait(60), "the delivery never arrived"
    erased, staff = expire_claims(hooks_app, staff, moved_clock)
    receiver.release.set()
    worker.join(60)
    assert erased == 1
    [attempt] = the_attempts(client, staff, endpoint)
    assert "Lovelace" in attempt["request"]["body"]  # logged after the run

    with hooks_app.app_context():
        assert retention_jobs.delete_expired_claims() == 0  # no record had claims left
        db.session.commit()
        db.session.remove()
    [attempt] = the_attempts(client, staff, endpoint)
    assert attempt["request"]["body"] is None and attempt["status_code"] == 204


def test_what_is_redacted_and_where_bodies_are_cut():
    assert redact_url("https://h.example/x") == "https://h.example/x"
    assert redact_url("https://h.example/x?key=abc&x=") == (
        f"https://h.example/x?key={REDACTED}&x={REDACTED}"
    )
    kept = keep_headers(
        {
            "Authorization": "Bearer abc",
            "Proxy-Authorization": "Basic abc",
            "Cookie": "a=b",
            "X-Api-Key": "abc",
            "X-Webhook-Secret": "abc",
            "webhook-signature": "v1,c2lnbmF0dXJl",
            "Content-Type": "application/json",
        }
    )
    assert kept.headers == {
        "Authorization": REDACTED,
        "Proxy-Authorization": REDACTED,
        "Cookie": REDACTED,
        "X-Api-Key": REDACTED,
        "X-Webhook-Secret": REDACTED,
        "webhook-signature": "v1,c2lnbmF0dXJl",
        "Content-Type": "application/json",
    }
    assert not kept.cut
    crowded = keep_headers({f"X-Filler-{n}": "v" * 100 for n in range(100)})
    assert crowded.cut and 30 < len(crowded.headers) < 100
    exact = keep_body(b"a" * KIB_4)
    assert (len(exact.text), exact.cut) == (KIB_4, False)
    # A two-byte character split by the cut is left out rather than garbled.
    split = keep_body(b"a" * (KIB_4 - 1) + "é".encode())
    assert (split.text, split.cut) == ("a" * (KIB_4 - 1), True)
    assert keep_body(b"\x00\xff").text == "\ufffd\ufffd"
