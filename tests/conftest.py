"""Fixtures: one app and schema per run (built by the migrations), rows cleared between tests.

The schema comes from ``flask db upgrade``, never ``create_all``, so the tests exercise the
migrations a deployment runs. Tests commit for real (the concurrency tests need it), so each
test starts from empty tables instead of a rolled-back transaction.

Set ``VERITY_TEST_DB=postgresql`` with ``TEST_DATABASE_URL`` to run on PostgreSQL.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from config_for_tests import TEST_CONFIG
from flask import Flask
from flask.testing import FlaskClient
from flask_migrate import upgrade
from sqlalchemy import text

from app import clock, create_app
from app.database import engine_options
from app.extensions import db
from app.jobs.queue import queue_of
from app.schemas.public import seed_public_schemas


def database_url(tmp_dir: Path) -> str:
    if os.environ.get("VERITY_TEST_DB") == "postgresql":
        url = os.environ.get("TEST_DATABASE_URL")
        if not url:
            raise RuntimeError("VERITY_TEST_DB=postgresql needs TEST_DATABASE_URL")
        return url.replace("postgresql://", "postgresql+psycopg://", 1)
    return f"sqlite:///{tmp_dir / 'verity-test.sqlite3'}"


# Each PostgreSQL run works in a schema of its own, so parallel runs on one database
# (several developers, or CI beside a developer) never drop each other's tables.
PG_SCHEMA = f"verity_test_{os.getpid()}"


@pytest.fixture(scope="session")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return database_url(tmp_path_factory.mktemp("db"))


def db_config(url: str) -> dict:
    """The database part of a test app's configuration (reuse it for apps built in tests)."""
    config: dict = {"SQLALCHEMY_DATABASE_URI": url}
    if url.startswith("postgresql"):
        config["SQLALCHEMY_ENGINE_OPTIONS"] = {
            **engine_options(url),
            "connect_args": {"options": f"-csearch_path={PG_SCHEMA}"},
        }
    return config


@pytest.fixture(scope="session")
def db_settings(db_url: str) -> dict:
    return db_config(db_url)


def reset_schema(app: Flask) -> None:
    with app.app_context():
        if db.engine.dialect.name == "postgresql":
            with db.engine.begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
                connection.execute(text(f"CREATE SCHEMA {PG_SCHEMA}"))
        upgrade()
        db.session.remove()


def drop_schema(app: Flask) -> None:
    with app.app_context():
        if db.engine.dialect.name == "postgresql":
            db.session.remove()
            with db.engine.begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
        db.engine.dispose()


@pytest.fixture(scope="session")
def app(db_settings: dict) -> Iterator[Flask]:
    app = create_app({**TEST_CONFIG, **db_settings})
    reset_schema(app)
    yield app
    drop_schema(app)
    release_connections(app)


def clear_tables(app: Flask) -> None:
    with app.app_context():
        for table in reversed(db.metadata.sorted_tables):
            db.session.execute(table.delete())
        seed_public_schemas()
        db.session.commit()
        db.session.remove()


@pytest.fixture(autouse=True)
def clean_state(request: pytest.FixtureRequest) -> Iterator[None]:
    if "app" in request.fixturenames:
        app = request.getfixturevalue("app")
        clear_tables(app)
        with app.app_context():
            app.extensions["rate_limiter"].reset()
    yield
    clock.set_source(None)


@pytest.fixture
def make_app(app: Flask, db_settings: dict) -> Iterator:
    """Build extra apps on the test database (other settings); their engines are closed after."""
    made: list[Flask] = []

    def build(**config) -> Flask:
        extra = create_app({**TEST_CONFIG, **db_settings, **config})
        made.append(extra)
        return extra

    yield build
    for extra in made:
        with extra.app_context():
            db.session.remove()
            db.engine.dispose()
        release_connections(extra)


def release_connections(app: Flask) -> None:
    """Close what an app holds open besides its database (Redis pools of its queue, QR cache
    and limiter), so that a dropped app leaves no socket for the collector to warn about."""
    if "jobs" in app.extensions:
        queue_of(app).close()
    if "qr_cache" in app.extensions:
        app.extensions["qr_cache"].close()
    limiter = app.extensions.get("rate_limiter")
    client = getattr(getattr(limiter, "_storage", None), "storage", None)
    pool = getattr(client, "connection_pool", None)
    if pool is not None:
        pool.disconnect()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def ctx(app: Flask) -> Iterator[None]:
    """An app context for tests that call domain operations directly."""
    with app.app_context():
        yield
        db.session.rollback()
        db.session.remove()
