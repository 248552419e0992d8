"""Driving deliveries in tests: endpoints added through the API, decisions made by a wallet
(PyPI sd-jwt) through the service's own routes, and the queue run in-process."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from config_for_tests import TEST_CONFIG
from factories import Staff, make_verification
from flask import Flask
from wallets import Issuer, WalletRequest, post_response, python_presentation, read_request

from app.jobs.queue import queue_of
from app.webhooks import delivery


def add_endpoint(client, staff: Staff, url: str, **fields: Any) -> dict[str, Any]:
    response = client.post(
        "/webhooks/endpoints", json={"url": url, **fields}, headers=staff.headers()
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def drain(app: Flask) -> int:
    """Run queued jobs in this process until none is left (delayed ones stay scheduled)."""
    total = 0
    for _ in range(100):
        ran = queue_of(app).run_pending()
        if ran == 0:
            return total
        total += ran
    raise AssertionError("the queue never emptied")


def sweep(app: Flask) -> None:
    """What the periodic sweep job does, now (its schedule is the worker's)."""
    with app.app_context():
        delivery.enqueue_deliveries(delivery.sweep())


class Person:
    """An individual of a verification, answered by a wallet through the routes."""

    def __init__(self, client, verification_id: str, customer_id: str) -> None:
        self.client = client
        opened = client.post(
            "/verifications/individuals",
            json={"customer_id": customer_id, "verification_id": verification_id},
        )
        assert opened.status_code in (200, 201), opened.get_json()
        self.id = opened.get_json()["id"]

    def request(self) -> WalletRequest:
        connected = self.client.get(f"/verifications/{self.id}/connect")
        assert connected.status_code == 200, connected.get_json()
        return read_request(self.client, connected.get_json()["connection_url"])

    def presentation(self, *, adult: bool = True) -> tuple[WalletRequest, str]:
        request = self.request()
        claims = {
            "given_name": "Erika",
            "family_name": "Mustermann",
            "birthdate": "1984-01-26" if adult else "2020-01-26",
            "address": {"country": "DE", "locality": "Berlin"},
        }
        return request, python_presentation(request, Issuer(), claims=claims)

    def present(self, *, adult: bool = True) -> None:
        request, presentation = self.presentation(adult=adult)
        answered = post_response(self.client, request, presentation)
        assert answered.status_code == 200, answered.get_data(as_text=True)


def verification(client, staff: Staff) -> str:
    return make_verification(client, staff)["id"]


def database_url(app: Flask) -> str:
    """The test database as one URL a separate process can use (PostgreSQL: with the run's
    own schema on the search path, as the test apps connect)."""
    url = app.config["SQLALCHEMY_DATABASE_URI"]
    options = app.config["SQLALCHEMY_ENGINE_OPTIONS"].get("connect_args", {}).get("options")
    if options:
        url += ("&" if "?" in url else "?") + "options=" + quote(options)
    return url


def environment(app: Flask) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(app),
        "JOBS_QUEUE_URL": app.config["JOBS_QUEUE_URL"],
        "JOBS_QUEUE_NAME": app.config["JOBS_QUEUE_NAME"],
        "SECRET_KEY": TEST_CONFIG["SECRET_KEY"],
        "ISSUER_KEY_SECRET": TEST_CONFIG["ISSUER_KEY_SECRET"],
        "PUBLIC_URL": TEST_CONFIG["PUBLIC_URL"],
        "TRUST_ALLOW_PRIVATE": "1",
        "REQUEST_LOG": "0",
    }


def wait_until(predicate, what: str, deadline: float = 60) -> None:
    """Poll until ``predicate()`` holds; the deadline only stops a stuck test."""
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def queue_url(tmp_path: Path) -> str:
    redis = os.environ.get("TEST_REDIS_URL")
    if os.environ.get("VERITY_TEST_DB") == "postgresql" and redis:
        return redis
    return f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
