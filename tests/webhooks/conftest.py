"""Apps that deliver webhooks: outbound requests may reach loopback (the receiver), and the
job queue is real storage of the test's own (SQLite; Redis in the PostgreSQL pass when
``TEST_REDIS_URL`` is set)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask
from receiver import Receiver
from webhook_support import queue_url

from app import clock
from app.jobs.queue import queue_of


@pytest.fixture
def hooks_app(make_app, tmp_path: Path) -> Iterator[Flask]:
    app = make_app(
        TRUST_ALLOW_PRIVATE=True,
        # A new link on every connect, so that a person can answer again after a failure.
        CONNECT_LINK_SECONDS=0,
        JOBS_QUEUE_URL=queue_url(tmp_path),
        JOBS_QUEUE_NAME=f"verity-test-{os.getpid()}-{uuid.uuid4().hex[:8]}",
    )
    yield app
    queue_of(app).flush()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


class MovableClock:
    """The service's clock, moved by the test instead of sleeping."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture
def moved_clock() -> MovableClock:
    source = MovableClock()
    clock.set_source(source)
    return source  # the autouse fixture of tests/conftest.py restores the system clock
