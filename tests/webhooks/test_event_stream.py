"""GET /events: the organization's log pushed as Server-Sent Events, read through the routes
by the test client (which is not a synchronous gunicorn worker); the deployment's own test
(tests/deploy/test_event_streams_behind_nginx.py) reads it through nginx from two instances.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from datetime import timedelta

import pytest
from factories import make_apikey, make_staff
from sqlalchemy import select
from stream_support import events, messages
from webhook_support import Person, verification

from app.events import operations
from app.events.models import EventStream
from app.extensions import db
from app.organizations.models import Organization
from app.verifications.models import Individual
from app.webhooks import outbox
from app.webhooks.models import WebhookEvent

FAST = {"EVENTS_POLL_SECONDS": 0.01, "EVENTS_HEARTBEAT_SECONDS": 0.05, "EVENTS_STREAM_SECONDS": 60}


@pytest.fixture
def streams_app(make_app):
    return make_app(TRUST_ALLOW_PRIVATE=True, CONNECT_LINK_SECONDS=0, **FAST)


def backend(app):
    staff = make_staff(app)
    return staff, {"apikey": make_apikey(app, staff.organization_id)}


def open_stream(client, headers, path="/events"):
    response = client.get(path, headers=headers, buffered=False)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/event-stream"
    return response


def test_a_stream_pushes_each_event_once_in_order_with_the_webhook_body(streams_app):
    client = streams_app.test_client()
    staff, key = backend(streams_app)
    verification_id = verification(client, staff)
    stream = open_stream(client, key)
    chunks = iter(stream.response)
    first = next(messages(chunks))
    assert first.id is None and first.comment is False  # the retry field opens the stream
    person = Person(client, verification_id, "crm-1")
    person.present()
    got = events(chunks, 2)
    stream.close()
    assert [m.id for m in got] == ["1", "2"]
    assert [m.event for m in got] == ["individual.requested", "individual.verified"]
    bodies = [m.json() for m in got]
    assert [b["type"] for b in bodies] == ["individual.requested", "individual.verified"]
    assert {b["data"]["id"] for b in bodies} == {person.id}
    assert bodies[1]["data"]["status"] == "VERIFIED"
    assert all("claims" not in b["data"] for b in bodies)
    with streams_app.app_context():
        stored = db.session.scalars(select(WebhookEvent).order_by(WebhookEvent.position)).all()
        assert [m.data for m in got] == [e.body() for e in stored]
        # Closing the stream gave its place back.
        assert db.session.scalar(select(EventStream.id)) is None


def test_last_event_id_resumes_after_it_and_a_new_stream_starts_now(streams_app):
    client = streams_app.test_client()
    staff, key = backend(streams_app)
    verification_id = verification(client, staff)
    for number in range(3):
        Person(client, verification_id, f"crm-{number}").present()
    resumed = open_stream(client, {**key, "Last-Event-ID": "2"})
    assert [m.id for m in events(iter(resumed.response), 4)] == ["3", "4", "5", "6"]
    resumed.close()
    by_query = open_stream(client, key, "/events?last_event_id=5")
    assert [m.id for m in events(iter(by_query.response), 1)] == ["6"]
    by_query.close()
    fresh = open_stream(client, key)
    chunks = iter(fresh.response)
    Person(client, verification_id, "crm-new").request()  # its link: individual.requested
    assert [m.id for m in events(chunks, 1)] == ["7"]
    fresh.close()


def test_filters_by_type_and_verification(streams_app):
    client = streams_app.test_client()
    staff, key = backend(streams_app)
    first, second = verification(client, staff), verification(client, staff)
    Person(client, first, "crm-a").present()
    Person(client, second, "crm-b").present()
    only_second = open_stream(
        client, {**key, "Last-Event-ID": "0"}, f"/events?verification_id={second}"
    )
    got = events(iter(only_second.response), 2)
    only_second.close()
    assert [m.id for m in got] == ["3", "4"]
    assert {m.json()["data"]["verification_id"] for m in got} == {second}
    verified = open_stream(
        client, {**key, "Last-Event-ID": "0"}, "/events?type=individual.verified"
    )
    assert [m.id for m in events(iter(verified.response), 2)] == ["2", "4"]
    verified.close()


def test_a_lapsed_policy_request_reaches_the_stream_of_an_organization_without_endpoints(
    streams_app, moved_clock
):
    from app.policies.operations import report_expired

    client = streams_app.test_client()
    staff, key = backend(streams_app)
    created = client.post(
        "/policy-requests",
        json={"verification_id": verification(client, staff), "expires_in": 60},
        headers=key,
    )
    assert created.status_code == 201, created.get_json()
    moved_clock.advance(timedelta(minutes=2))
    with streams_app.app_context():
        assert report_expired() == 1
        db.session.commit()
    stream = open_stream(
        client, {**key, "Last-Event-ID": "0"}, "/events?type=policy_request.expired"
    )
    (got,) = events(iter(stream.response), 1)
    stream.close()
    assert got.event == "policy_request.expired"
    assert got.json()["data"]["id"] == created.get_json()["id"]


def test_heartbeats_keep_an_idle_stream_talking_until_its_lifetime_ends_it(make_app):
    app = make_app(**{**FAST, "EVENTS_STREAM_SECONDS": 0.3})
    client = app.test_client()
    _, key = backend(app)
    found = list(messages(iter(open_stream(client, key).response)))
    assert any(m.comment for m in found)
    with app.app_context():  # the stream ended by itself and gave its place back
        assert db.session.scalar(select(EventStream.id)) is None


def test_an_organization_has_a_bounded_number_of_open_streams(make_app):
    app = make_app(EVENTS_STREAMS_PER_ORGANIZATION=2, **FAST)
    client = app.test_client()
    _, key = backend(app)
    held = [open_stream(client, key), open_stream(client, key)]
    for stream in held:
        next(iter(stream.response))
    refused = client.get("/events", headers=key)
    assert refused.status_code == 429
    assert refused.get_json()["code"] == "TOO_MANY_STREAMS"
    # Another organization's streams are counted apart.
    other = make_staff(app, "bob@example.test", org_name="Other")
    other_stream = open_stream(client, {"apikey": make_apikey(app, other.organization_id)})
    other_stream.close()
    held.pop().close()
    again = open_stream(client, key)
    again.close()
    held[0].close()


def test_a_lease_left_by_a_dead_process_runs_out(make_app):
    app = make_app(EVENTS_STREAMS_PER_ORGANIZATION=1, **FAST)
    staff, key = backend(app)
    with app.app_context():
        # A stream whose process died: its lease was never renewed nor deleted.
        organization_id = uuid.UUID(staff.organization_id)
        operations.open_stream(organization_id, 1, timedelta(seconds=-1))
        db.session.commit()
    stream = open_stream(app.test_client(), key)
    stream.close()


def test_an_apikey_in_the_query_is_redacted_from_the_request_log(streams_app, caplog):
    client = streams_app.test_client()
    _, key = backend(streams_app)
    with caplog.at_level(logging.INFO, logger="verity.request"):
        stream = open_stream(client, {}, f"/events?apikey={key['apikey']}&type=individual.failed")
        stream.close()
    assert key["apikey"] not in caplog.text
    (line,) = [json.loads(r.getMessage()) for r in caplog.records if r.name == "verity.request"]
    assert line["path"] == "/events?apikey=[redacted]&type=individual.failed"


def test_refusals(streams_app):
    client = streams_app.test_client()
    _, key = backend(streams_app)
    assert client.get("/events").status_code == 401
    for path, headers, code in (
        ("/events", {"Last-Event-ID": "seven"}, "INVALID_LAST_EVENT_ID"),
        ("/events?type=credential.issued", {}, "INVALID_REQUEST"),
        ("/events?verification_id=nope", {}, "NOT_FOUND"),
        (f"/events?verification_id={uuid.uuid4()}", {}, "NOT_FOUND"),
        ("/events?since=1", {}, "UNKNOWN_QUERY_PARAMETER"),
    ):
        answer = client.get(path, headers={**key, **headers})
        assert (answer.status_code, answer.get_json()["code"]) == (400, code), path
    # A synchronous gunicorn worker does not hold a stream.
    sync = client.get(
        "/events",
        headers=key,
        environ_overrides={"SERVER_SOFTWARE": "gunicorn/23.0.0", "wsgi.multithread": False},
    )
    assert (sync.status_code, sync.get_json()["code"]) == (421, "EVENTS_NOT_SERVED_HERE")
    with streams_app.app_context():
        assert db.session.scalar(select(EventStream.id)) is None


WRITERS = 4
EACH = 15


def test_concurrent_writers_never_leave_a_reader_a_gap(make_app):
    """Writers commit one organization's events at once while a reader follows the log by
    position: the reader sees every position once, in order, with no gap, whatever order the
    transactions started in (on PostgreSQL, really concurrently)."""
    app = make_app()
    staff = make_staff(app)
    organization_id = uuid.UUID(staff.organization_id)
    client = app.test_client()
    verification_id = verification(client, staff)
    with app.app_context():
        person = Individual(
            verification_id=uuid.UUID(verification_id), customer_id="crm-writers", status="CREATED"
        )
        db.session.add(person)
        db.session.commit()
        person_id = person.id
    total = WRITERS * EACH
    seen: list[int] = []
    failures: list[BaseException] = []
    start = threading.Barrier(WRITERS + 1)

    def write() -> None:
        try:
            start.wait()
            for _ in range(EACH):
                with app.app_context():
                    individual = db.session.get(Individual, person_id)
                    outbox.emit("individual.requested", individual, organization_id, person_id)
                    db.session.commit()
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    def read() -> None:
        start.wait()
        after = 0
        while len(seen) < total and not failures:
            with app.app_context():
                found = operations.events_after(organization_id, after, operations.Filters())
                db.session.commit()
            for event in found:
                seen.append(event.position)
                after = event.position

    threads = [threading.Thread(target=write) for _ in range(WRITERS)]
    reader = threading.Thread(target=read)
    for thread in [*threads, reader]:
        thread.start()
    for thread in [*threads, reader]:
        thread.join(120)
    assert failures == []
    assert seen == list(range(1, total + 1))
    with app.app_context():
        rows = db.session.execute(
            select(WebhookEvent.sequence, WebhookEvent.position).order_by(WebhookEvent.sequence)
        ).all()
        assert sorted(position for _, position in rows) == list(range(1, total + 1))
        assert db.session.get(Organization, organization_id) is not None
