"""The job queue: jobs registered by name run in an app context on real Huey storage."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from flask import Flask
from huey import RedisHuey
from sqlalchemy import select

from app import jobs
from app.extensions import db
from app.jobs.queue import DurableSqliteStorage, build_huey, default_sqlite_path, queue_of
from app.organizations.models import Organization

ran: list[str] = []


@jobs.job(name="tests.name_organization")
def name_organization(organization_id: str, name: str) -> None:
    organization = db.session.get(Organization, uuid.UUID(organization_id))
    assert organization is not None
    organization.name = name
    ran.append(name)


@jobs.job(name="tests.fail_after_write")
def fail_after_write(organization_id: str) -> None:
    organization = db.session.get(Organization, uuid.UUID(organization_id))
    assert organization is not None
    organization.name = "half-done"
    raise RuntimeError("the job fails after writing")


@jobs.periodic(jobs.crontab(minute="*/5"), name="tests.every_five_minutes")
def every_five_minutes() -> None:
    ran.append("periodic")


@pytest.fixture
def queue_app(make_app, tmp_path: Path) -> Flask:
    return make_app(JOBS_QUEUE_URL=f"sqlite:///{tmp_path / 'jobs.sqlite3'}")


def organization_id(app: Flask) -> str:
    with app.app_context():
        organization = Organization(name="before")
        db.session.add(organization)
        db.session.commit()
        return str(organization.id)


def name_of(app: Flask, org_id: str) -> str:
    with app.app_context():
        return db.session.scalar(
            select(Organization.name).where(Organization.id == uuid.UUID(org_id))
        )


def test_an_enqueued_job_runs_by_name_and_its_changes_are_committed(queue_app: Flask):
    org = organization_id(queue_app)
    with queue_app.app_context():
        jobs.enqueue("tests.name_organization", org, "after")
    assert queue_of(queue_app).pending_count() == 1
    assert queue_of(queue_app).run_pending() == 1
    assert name_of(queue_app, org) == "after"
    assert queue_of(queue_app).pending_count() == 0


def test_a_failing_job_leaves_nothing_written(queue_app: Flask):
    org = organization_id(queue_app)
    with queue_app.app_context():
        jobs.enqueue("tests.fail_after_write", org)
    queue_of(queue_app).run_pending()
    assert name_of(queue_app, org) == "before"


def test_a_delayed_job_waits_in_the_schedule(queue_app: Flask):
    org = organization_id(queue_app)
    with queue_app.app_context():
        jobs.enqueue("tests.name_organization", org, "later", delay=3600)
    queue = queue_of(queue_app)
    queue.run_pending()
    assert name_of(queue_app, org) == "before"
    assert queue.huey.scheduled_count() == 1


def test_periodic_jobs_are_on_the_queue_schedule(queue_app: Flask):
    periodic = {task.name for task in queue_of(queue_app).huey._registry.periodic_tasks}
    assert "tests.every_five_minutes" in periodic
    assert "tests.name_organization" not in periodic


def test_two_jobs_cannot_share_a_name():
    with pytest.raises(ValueError, match="two jobs"):
        jobs.job(name="tests.name_organization")(lambda: None)


def test_the_default_storage_is_a_sqlite_file_beside_the_database(tmp_path: Path):
    database = f"sqlite:///{tmp_path / 'verity.sqlite3'}"
    config = {"SQLALCHEMY_DATABASE_URI": database, "JOBS_QUEUE_URL": ""}
    assert default_sqlite_path(config) == tmp_path / "verity-jobs.sqlite3"
    storage = build_huey(config).storage
    assert isinstance(storage, DurableSqliteStorage)
    assert storage.filename == str(tmp_path / "verity-jobs.sqlite3")
    assert storage.conn.execute("pragma synchronous").fetchone() == (1,)


def test_a_redis_url_selects_redis_storage():
    huey = build_huey({"SQLALCHEMY_DATABASE_URI": "sqlite://", "JOBS_QUEUE_URL": "redis://x:1/0"})
    assert isinstance(huey, RedisHuey)


def test_an_unknown_queue_url_is_refused():
    with pytest.raises(RuntimeError, match="JOBS_QUEUE_URL"):
        build_huey({"SQLALCHEMY_DATABASE_URI": "sqlite://", "JOBS_QUEUE_URL": "amqp://x"})
