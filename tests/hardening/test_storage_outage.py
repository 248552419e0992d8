"""Storage unreachable: 502 STORAGE_UNAVAILABLE with Retry-After, a calm page for the person,
and one log line when the outage starts and one when it ends (never a traceback per request).

Real outages, no mocks: a SQLite file behind a directory link that is missing and then
restored, served by gunicorn; PostgreSQL behind a TCP proxy that is stopped and started again;
Redis (the voucher throttle's storage) on a closed port.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import redis
import requests
from factories import make_staff, make_verification
from served import free_port, prepare, served, service_env
from support.outage_proxy import OutageProxy

from app.jobs.queue import queue_of

PEOPLE_PAGE = "try again in a moment"


def assert_unavailable(status: int, headers, body) -> None:
    assert status == 502, body
    assert body == {"error": body["error"], "code": "STORAGE_UNAVAILABLE"}
    assert int(headers["Retry-After"]) > 0


def outage_lines(log: str) -> tuple[list[str], list[str]]:
    lines = log.splitlines()
    return (
        [line for line in lines if "storage unavailable" in line],
        [line for line in lines if "storage available again" in line],
    )


def test_sqlite_file_that_cannot_be_opened_then_can(tmp_path: Path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    env = service_env(f"sqlite:///{link / 'verity.sqlite3'}")
    prepare(env)
    link.unlink()  # the file cannot be opened any more
    with served(env, tmp_path / "server.log") as service:
        for _ in range(6):
            response = requests.post(
                service.url("/verifications/individuals"),
                json={"customer_id": "c", "verification_id": str(uuid.uuid4())},
                timeout=30,
            )
            assert_unavailable(response.status_code, response.headers, response.json())
        page = requests.get(service.url(f"/i/{uuid.uuid4()}"), timeout=30)
        assert page.status_code == 502 and int(page.headers["Retry-After"]) > 0
        assert page.headers["Content-Type"].startswith("text/html")
        assert PEOPLE_PAGE in page.text
        assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]

        link.symlink_to(real)  # storage is back
        # Requests go to whichever worker accepts first, so the one that saw the outage may take
        # none of the first few: ask until it has (a bounded number of times).
        for _ in range(60):
            response = requests.post(
                service.url("/verifications/individuals"),
                json={"customer_id": "c", "verification_id": str(uuid.uuid4())},
                timeout=30,
            )
            assert response.status_code == 400 and response.json()["code"] == "NOT_FOUND"
            if outage_lines(service.log())[1]:
                break
        log = service.log()
    started, ended = outage_lines(log)
    # One line per worker process at most (two workers), never one per request.
    assert 1 <= len(started) <= 2, started
    # A worker logs the end at its first success; one that took no request since may not yet.
    assert 1 <= len(ended) <= len(started), ended
    assert "Traceback" not in log and "unhandled error" not in log


@pytest.mark.skipif(
    os.environ.get("VERITY_TEST_DB") != "postgresql", reason="runs in the PostgreSQL pass"
)
def test_postgresql_stopped_then_back(app, db_url, make_app, caplog):
    staff = make_staff(app)
    proxy = OutageProxy.in_front_of(db_url)
    proxied = proxy.url_through(db_url)
    proxy.start()
    served_app = make_app(SQLALCHEMY_DATABASE_URI=proxied)
    client = served_app.test_client()
    assert client.get("/me", headers=staff.headers()).status_code == 200
    caplog.set_level(logging.INFO)

    proxy.stop()
    for _ in range(5):
        response = client.get("/me", headers=staff.headers())
        assert_unavailable(response.status_code, response.headers, response.get_json())
    page = client.get(f"/i/{uuid.uuid4()}")
    assert page.status_code == 502 and PEOPLE_PAGE in page.get_data(as_text=True)

    proxy.start()
    assert client.get("/me", headers=staff.headers()).status_code == 200
    proxy.stop()
    started, ended = outage_lines(caplog.text)
    assert len(started) == 1 and len(ended) == 1, caplog.text
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.skipif(
    os.environ.get("VERITY_TEST_DB") != "postgresql", reason="runs in the PostgreSQL pass"
)
def test_postgresql_restarted_between_requests_goes_unnoticed(app, db_url, make_app, caplog):
    """Pooled connections the server closed while idle are replaced at checkout, with no
    round trip to ask: the first request after a restart is answered."""
    staff = make_staff(app)
    proxy = OutageProxy.in_front_of(db_url)
    proxied = proxy.url_through(db_url)
    proxy.start()
    client = make_app(SQLALCHEMY_DATABASE_URI=proxied).test_client()
    assert client.get("/me", headers=staff.headers()).status_code == 200
    caplog.set_level(logging.INFO)

    proxy.stop()  # every pooled connection is cut while idle
    proxy.start()
    try:
        for _ in range(3):
            assert client.get("/me", headers=staff.headers()).status_code == 200
    finally:
        proxy.stop()
    assert not outage_lines(caplog.text)[0], caplog.text


def test_redis_down_refuses_voucher_exchange_and_nothing_else(app, make_app, caplog):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    served_app = make_app(RATELIMIT_STORAGE_URI=closed)
    staff = make_staff(app)
    client = served_app.test_client()
    for _ in range(3):
        response = client.post(
            "/vouchers/exchange", json={"code": "vv_anything"}, headers=staff.headers()
        )
        assert_unavailable(response.status_code, response.headers, response.get_json())
    # Every other endpoint keeps working.
    assert client.get("/me", headers=staff.headers()).status_code == 200
    assert (
        client.post("/organizations", json={"name": "B"}, headers=staff.headers()).status_code
        == 201
    )
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


class PrivateRedis:
    """A redis-server of the test's own on a port of its own, started and stopped at will
    (never the machine's shared one)."""

    def __init__(self, port: int, directory: Path) -> None:
        self.port = port
        self.directory = directory
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        end = time.monotonic() + 30
        while True:
            with contextlib.suppress(redis.exceptions.ConnectionError):
                if client.ping():
                    break
            assert time.monotonic() < end, "redis-server did not start"
            time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)
            self.process = None


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_redis_down_logs_the_job_queue_outage_once_and_its_end_once(
    app, make_app, caplog, tmp_path: Path
):
    """Every request that emits a webhook event asks the queue to relay it. With Redis down
    the requests are answered as ever (the sweep relays later), and the log holds one line
    when the outage starts and one when it ends, not a traceback per request."""
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    served_app = make_app(
        JOBS_QUEUE_URL=url,
        JOBS_QUEUE_NAME=f"verity-outage-{uuid.uuid4().hex[:8]}",
        RATELIMIT_STORAGE_URI=url,
        TRUST_ALLOW_PRIVATE=True,
    )
    staff = make_staff(app)
    client = served_app.test_client()
    hooks = {"url": "http://127.0.0.1:9/hooks", "events": ["individual.requested"]}
    added = client.post("/webhooks/endpoints", json=hooks, headers=staff.headers())
    assert added.status_code == 201, added.get_json()
    verification_id = make_verification(client, staff)["id"]

    def hand_out_a_link(customer: str) -> None:
        opened = client.post(
            "/verifications/individuals",
            json={"customer_id": customer, "verification_id": verification_id},
        )
        assert opened.status_code == 201, opened.get_json()
        connected = client.get(f"/verifications/{opened.get_json()['id']}/connect")
        assert connected.status_code == 200, connected.get_json()

    caplog.set_level(logging.INFO)
    for number in range(5):  # Redis is not there
        hand_out_a_link(f"down-{number}")
    redis_server = PrivateRedis(port, tmp_path)
    redis_server.start()
    try:
        for number in range(3):
            hand_out_a_link(f"up-{number}")
        assert queue_of(served_app).pending_count() >= 1  # the queue took them again
    finally:
        redis_server.stop()
    for number in range(3):  # and gone again
        hand_out_a_link(f"down-again-{number}")

    lines = caplog.text.splitlines()
    started = [line for line in lines if "job queue unavailable" in line]
    ended = [line for line in lines if "job queue available again" in line]
    assert len(started) == 2, caplog.text
    assert len(ended) == 1, caplog.text
    assert "5 jobs not enqueued" in ended[0]
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
