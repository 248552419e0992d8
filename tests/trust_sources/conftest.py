"""Fixtures for the trust source tests: an app that may fetch from loopback (where the test's
list server lives), its client, and the server publishing the lists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from trust.trust_support import LocalServer


@pytest.fixture
def list_app(make_app) -> Flask:
    """Lists are served on 127.0.0.1 over http: the development setting allows both."""
    return make_app(TRUST_ALLOW_PRIVATE=True)


@pytest.fixture
def list_client(list_app: Flask) -> FlaskClient:
    return list_app.test_client()


@pytest.fixture
def publisher() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()
