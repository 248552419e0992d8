"""``POST /didcomm`` is open to anyone, so it is bounded: a budget per client IP (counted
before the message is opened), one per sender DID (once it is), 429 with ``Retry-After``
past either; a bound on the DIDComm work waiting in the queue, 503 ``DIDCOMM_BUSY`` with
``Retry-After`` past it. And what the agent sends is bounded per destination: a host that
never answered is given up on sooner."""

from __future__ import annotations

import threading

import pytest
from support.tarpit import Tarpit
from trust.trust_support import LocalServer
from werkzeug.wrappers import Response

from app import jobs
from app.didcomm import messaging, peer_did, protocols
from app.jobs.queue import queue_of
from didcomm.test_didcomm_verifier import open_didcomm, post

PING = protocols.PING


def stranger(endpoint: str = "http://127.0.0.1:9/didcomm") -> peer_did.NewPeerDid:
    return peer_did.make(endpoint)


def ping_from(sender: peer_did.NewPeerDid, ours: str) -> bytes:
    return messaging.pack(
        messaging.message(PING, {"response_requested": True}), to_did=ours, sender=sender
    )


def from_address(app, address: str):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


@pytest.mark.parametrize("storage", ["memory://", "database://"])
def test_one_address_is_refused_past_its_budget_whatever_it_sends(make_app, storage):
    app = make_app(DIDCOMM_ADDRESS_LIMIT="3/minute", RATELIMIT_STORAGE_URI=storage)
    client = from_address(app, "203.0.113.7")
    ours = open_didcomm(app, app.test_client()).invitation["from"]

    answers = [post(client, ping_from(stranger(), ours)).status_code for _ in range(2)]
    answers.append(post(client, b"{not json").status_code)  # counted too: before opening
    refused = post(client, ping_from(stranger(), ours))
    elsewhere = post(from_address(app, "198.51.100.2"), ping_from(stranger(), ours))

    assert answers == [202, 202, 400]
    assert refused.status_code == 429
    assert refused.get_json()["code"] == "RATE_LIMITED"
    assert int(refused.headers["Retry-After"]) > 0
    assert elsewhere.status_code == 202


@pytest.mark.parametrize("storage", ["memory://", "database://"])
def test_one_sender_did_is_refused_past_its_budget_from_any_address(make_app, storage):
    app = make_app(DIDCOMM_SENDER_LIMIT="2/minute", RATELIMIT_STORAGE_URI=storage)
    ours = open_didcomm(app, app.test_client()).invitation["from"]
    flooding = stranger()

    answers = [
        post(from_address(app, f"203.0.113.{n}"), ping_from(flooding, ours)).status_code
        for n in (1, 2)
    ]
    refused = post(from_address(app, "203.0.113.3"), ping_from(flooding, ours))
    another = post(from_address(app, "203.0.113.3"), ping_from(stranger(), ours))

    assert answers == [202, 202]
    assert refused.status_code == 429
    assert refused.get_json() == {"error": "Too many attempts; retry later", "code": "RATE_LIMITED"}
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert another.status_code == 202
    assert queue_of(app).waiting(jobs.DIDCOMM) == 3


def test_past_the_bound_on_waiting_work_a_message_is_refused_with_503(make_app):
    app = make_app(DIDCOMM_QUEUE_LIMIT=2)
    client = app.test_client()
    ours = open_didcomm(app, client).invitation["from"]

    taken = [post(client, ping_from(stranger(), ours)).status_code for _ in range(2)]
    busy = post(client, ping_from(stranger(), ours))

    assert taken == [202, 202]
    assert busy.status_code == 503
    assert busy.get_json()["code"] == "DIDCOMM_BUSY"
    assert int(busy.headers["Retry-After"]) >= 30
    assert queue_of(app).waiting(jobs.DIDCOMM) == 2  # the refused one was not queued

    queue_of(app).run_pending()  # the worker catches up: the door opens again
    assert post(client, ping_from(stranger(), ours)).status_code == 202


# -- sending ---------------------------------------------------------------------------------


def deliver(app, url: str, attempt: int = 0) -> None:
    with app.app_context():
        jobs.registered()["didcomm.deliver"].func(url, "{}", attempt)


def scheduled(app) -> int:
    """Retries waiting (a delayed job sits in the queue until a worker moves it aside)."""
    return queue_of(app).waiting(jobs.DIDCOMM)


def test_a_destination_that_never_answers_is_given_up_after_two_attempts(make_app):
    app = make_app(TRUST_ALLOW_PRIVATE=True, DIDCOMM_SEND_TIMEOUT=0.5)
    with Tarpit() as tarpit:
        deliver(app, tarpit.url)  # the first attempt waits out its deadline
        assert scheduled(app) == 1  # one retry

        deliver(app, tarpit.url, attempt=1)  # the second: the last for a silent host

    assert tarpit.arrived == 2
    assert scheduled(app) == 1  # no third attempt was scheduled


def test_a_host_that_did_not_answer_gets_a_short_deadline_next_time(make_app):
    app = make_app(TRUST_ALLOW_PRIVATE=True, DIDCOMM_SEND_TIMEOUT=120)
    with Tarpit() as gone:
        port = gone.port
    deliver(app, f"http://127.0.0.1:{port}/didcomm")  # refused: nothing listens there now

    with Tarpit(port) as tarpit:  # the same host now accepts and never answers
        send = threading.Thread(target=deliver, args=(app, tarpit.url))
        send.start()
        send.join(60)  # a liveness bound only: the full deadline would be 120 s

        assert not send.is_alive()
        assert tarpit.wait_until_ended(1) == 1  # we gave up on it, not it on us
        assert tarpit.arrived == 1


def test_a_destination_that_answers_with_an_error_keeps_its_five_attempts(make_app):
    app = make_app(TRUST_ALLOW_PRIVATE=True)
    server = LocalServer()
    server.add("/didcomm", lambda _request: Response("busy", status=503))
    try:
        deliver(app, server.url("/didcomm"), attempt=1)
        deliver(app, server.url("/didcomm"), attempt=3)
    finally:
        server.stop()
    assert scheduled(app) == 2  # tried again both times: attempts 2 and 4 of 5


def test_sends_to_one_host_are_bounded_and_the_rest_wait_their_turn(make_app):
    app = make_app(TRUST_ALLOW_PRIVATE=True, DIDCOMM_SEND_TIMEOUT=60, DIDCOMM_SENDS_PER_HOST=2)
    with Tarpit() as tarpit:
        hanging = [threading.Thread(target=deliver, args=(app, tarpit.url)) for _ in range(2)]
        for thread in hanging:
            thread.start()
        tarpit.wait_for(2)

        deliver(app, tarpit.url)  # the host has its two sends: this one waits in the queue

        assert tarpit.arrived == 2
        assert tarpit.hanging() == 2
        assert scheduled(app) == 1
        tarpit.close()  # the hanging sends end at once
        for thread in hanging:
            thread.join(30)
