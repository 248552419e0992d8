"""Event streams on two instances behind nginx, as deploy/cluster.py runs them: each instance
with its event stream server (gunicorn.events.conf.py), nginx routing /events to them.

Two consumers read one organization's stream through nginx, reconnecting with Last-Event-ID
whenever their connection ends; one drops its connection on purpose mid-run, and an instance
(web server and event stream server) is killed mid-stream. Each consumer still gets every event
of the run once, in order.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Iterator

import pytest
from deploy_support import Deployment, post_json, send, two_instances_behind_nginx, why_skipped

# The heartbeat sets how soon a killed stream's place is free again (three of them).
SETTINGS = {
    "EVENTS_HEARTBEAT_SECONDS": "1",
    "EVENTS_POLL_SECONDS": "0.1",
    "EVENTS_STREAMS_PER_ORGANIZATION": "3",
}
BEFORE, BETWEEN, AFTER = 6, 6, 6
WAIT = 60  # seconds a consumer may take to catch up; only a stuck test reaches it


@pytest.fixture(scope="module")
def streaming(tmp_path_factory) -> Iterator[Deployment]:
    reason = why_skipped()
    if reason:
        pytest.skip(reason)
    with two_instances_behind_nginx(
        tmp_path_factory.mktemp("events"), event_servers=True, settings=SETTINGS
    ) as deployment:
        yield deployment


class Consumer:
    """A backend reading /events through nginx on a thread: each event once (it remembers the
    last id and sends it as Last-Event-ID whenever it reconnects)."""

    def __init__(self, base: str, apikey: str) -> None:
        self.host, port = base.removeprefix("http://").split(":")
        self.port = int(port)
        self.apikey = apikey
        self.ids: list[int] = []
        self.types: list[str] = []
        self.connections = 0
        self.refusals: list[int] = []
        self.failure: Exception | None = None
        self.stopping = threading.Event()
        self.drop_now = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self) -> Consumer:
        self.thread.start()
        return self

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.read_once()
            except (OSError, http.client.HTTPException):
                time.sleep(0.2)  # the SSE retry delay, shortened
            except Exception as exc:  # told to the test by wait_for
                self.failure = exc
                return

    def read_once(self) -> None:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        headers = {"apikey": self.apikey, "Accept": "text/event-stream"}
        headers["Last-Event-ID"] = str(self.ids[-1] if self.ids else 0)
        try:
            connection.request("GET", "/events", headers=headers)
            answer = connection.getresponse()
            if answer.status != 200:
                self.refusals.append(answer.status)
                answer.read()
                time.sleep(0.5)
                return
            self.connections += 1
            block: list[str] = []
            while not self.stopping.is_set() and not self.drop_now.is_set():
                line = answer.readline()  # the chunked coding undone
                if not line:
                    return  # the server ended the stream: reconnect
                text = line.decode().rstrip("\n")
                if text:
                    block.append(text)
                    continue
                self.take(block)
                block = []
            self.drop_now.clear()
        finally:
            connection.close()

    def take(self, block: list[str]) -> None:
        fields = dict(line.split(": ", 1) for line in block if not line.startswith(":"))
        if "id" in fields:
            self.ids.append(int(fields["id"]))
            self.types.append(fields["event"])

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + WAIT
        while len(self.ids) < count:
            assert self.failure is None, self.failure
            assert time.monotonic() < deadline, f"{len(self.ids)} of {count} events"
            time.sleep(0.05)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(15)


def apikey(deployment: Deployment) -> str:
    made = post_json(
        deployment.base, "/integrations", {"name": "streams"}, headers=deployment.staff()
    )
    assert made.status == 201, made.body
    return made.json()["key"]


def requested(deployment: Deployment, key: str, customer_id: str) -> None:
    """One event: a new individual's first link (individual.requested), through nginx."""
    opened = post_json(
        deployment.base,
        "/verifications/individuals",
        {"customer_id": customer_id, "verification_id": deployment.verification_id},
        headers={"apikey": key},
    )
    assert opened.status in (200, 201), opened.body
    linked = send(deployment.base, "GET", f"/verifications/{opened.json()['id']}/connect")
    assert linked.status == 200, linked.body


def test_two_consumers_get_every_event_once_in_order_across_a_reconnect_and_a_killed_instance(
    streaming: Deployment,
):
    key = apikey(streaming)
    consumers = [Consumer(streaming.base, key).start() for _ in range(2)]
    deadline = time.monotonic() + WAIT
    while not all(consumer.connections for consumer in consumers):
        assert time.monotonic() < deadline, "the consumers never connected"
        time.sleep(0.05)
    try:
        # The bound holds across the instances: 2 open, one more place, then 429.
        third = http.client.HTTPConnection(*streaming.base.removeprefix("http://").split(":"))
        third.request("GET", "/events", headers={"apikey": key})
        assert third.getresponse().status == 200
        refused = send(streaming.base, "GET", "/events", headers={"apikey": key})
        assert refused.status == 429 and refused.json()["code"] == "TOO_MANY_STREAMS"
        third.close()

        for number in range(BEFORE):
            requested(streaming, key, f"before-{number}")
        consumers[0].drop_now.set()  # a deliberate reconnect, with Last-Event-ID
        for number in range(BETWEEN):
            requested(streaming, key, f"between-{number}")
        for consumer in consumers:
            consumer.wait_for(BEFORE + BETWEEN)
        connections = [consumer.connections for consumer in consumers]
        # An instance dies mid-stream: its web server and its event stream server at once.
        streaming.instances[0].kill()
        streaming.event_servers[0].kill()
        for number in range(AFTER):
            requested(streaming, key, f"after-{number}")
        total = BEFORE + BETWEEN + AFTER
        for consumer in consumers:
            consumer.wait_for(total)
    finally:
        for consumer in consumers:
            consumer.stop()
    for consumer in consumers:
        assert consumer.ids == list(range(1, total + 1))
        assert set(consumer.types) == {"individual.requested"}
    assert consumers[0].connections >= connections[0] >= 2  # the deliberate reconnect
    # nginx spread the two streams over both event stream servers: the kill cut one.
    assert sum(c.connections for c in consumers) > sum(connections)


def test_last_event_id_that_is_not_an_id_is_refused_through_nginx(streaming: Deployment):
    key = apikey(streaming)
    answer = send(streaming.base, "GET", "/events", headers={"apikey": key, "Last-Event-ID": "x"})
    assert (answer.status, answer.json()["code"]) == (400, "INVALID_LAST_EVENT_ID")
