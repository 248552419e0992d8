"""A presentation request has exactly one subject, on every engine and across the migration.

Individuals and policy requests share one status machine; the database itself refuses a
presentation request that names no subject or two, and migration 0003 carries existing rows
over (and back).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from config_for_tests import TEST_CONFIG
from factories import make_apikey, make_staff, make_verification
from flask import Flask
from flask_migrate import downgrade, upgrade
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from app import clock, create_app
from app.extensions import db
from app.policies.operations import connect_policy
from app.presentations import operations as presentations
from app.presentations.decide import Decision
from app.schemas.public import seed_public_schemas
from app.verifications.models import PresentationAttempt, PresentationRequest, Status
from app.verifications.operations import get_individual, open_individual

MIGRATION_SCHEMA = f"verity_migration_{os.getpid()}"


def insert_request(individual_id: uuid.UUID | None, policy_id: uuid.UUID | None) -> None:
    now = clock.now()
    db.session.add(
        PresentationRequest(
            individual_id=individual_id,
            policy_request_id=policy_id,
            nonce="n",
            state=uuid.uuid4().hex,
            created_at=now,
            expires_at=now,
        )
    )
    db.session.flush()


@pytest.fixture
def subjects(app, client) -> tuple[uuid.UUID, str]:
    """An individual and a policy request's token, made through the API."""
    staff = make_staff(app)
    verification = make_verification(client, staff)
    headers = {"apikey": make_apikey(app, staff.organization_id)}
    policy = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers=headers
    ).get_json()
    individual = client.post(
        "/verifications/individuals",
        json={"verification_id": verification["id"], "customer_id": "c-1"},
    ).get_json()
    return uuid.UUID(individual["id"]), policy["token"]


@pytest.mark.parametrize("both", [False, True])
def test_the_database_refuses_a_request_with_no_subject_or_two(app, subjects, both):
    individual_id, token = subjects
    with app.app_context():
        policy, _ = connect_policy(token, 120, 600)
        db.session.commit()
        with pytest.raises(IntegrityError):
            insert_request(individual_id if both else None, policy.id if both else None)
        db.session.rollback()


def test_individuals_and_policy_requests_follow_one_status_machine(app, subjects):
    """A link moves CREATED to REQUESTED; VERIFIED is final for both; a FAILED individual may
    present again, a FAILED policy request may not."""
    individual_id, token = subjects
    with app.app_context():
        presentations.connect_individual(individual_id, 120, 600)
        policy, _ = connect_policy(token, 120, 600)
        individual = get_individual(individual_id)
        assert individual.status == policy.status == Status.REQUESTED
        for subject in (individual, policy):
            link = presentations.connect(subject, 120, 600)
            assert link is not None
            presentations.record(presentations.consume(link.id), Decision(False, "no"))
            assert subject.status == Status.FAILED
        assert not individual.is_final() and policy.is_final()
        assert presentations.connect(policy, 0, 600) is None
        again = presentations.connect(individual, 0, 600)
        assert again is not None
        presentations.record(presentations.consume(again.id), Decision(True, issuer="i"))
        assert individual.status == Status.VERIFIED and individual.is_final()
        assert not presentations.set_status(individual, Status.FAILED)
        assert individual.status == Status.VERIFIED
        assert len(presentations.attempts_of(individual)) == 2
        assert presentations.answerable_and_attempts(policy, None) == (None, 1)
        db.session.rollback()


@pytest.fixture
def migration_app(db_settings: dict, tmp_path) -> Iterator[Flask]:
    """An app on a database of its own, so that migrating down touches no other test."""
    url = db_settings["SQLALCHEMY_DATABASE_URI"]
    config = {**TEST_CONFIG}
    if url.startswith("postgresql"):
        config["SQLALCHEMY_DATABASE_URI"] = url
        config["SQLALCHEMY_ENGINE_OPTIONS"] = {
            "connect_args": {"options": f"-csearch_path={MIGRATION_SCHEMA}"}
        }
    else:
        config["SQLALCHEMY_DATABASE_URI"] = f"sqlite:///{tmp_path / 'migration.sqlite3'}"
    app = create_app(config)
    with app.app_context():
        if db.engine.dialect.name == "postgresql":
            with db.engine.begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {MIGRATION_SCHEMA} CASCADE"))
                connection.execute(text(f"CREATE SCHEMA {MIGRATION_SCHEMA}"))
        upgrade()
        seed_public_schemas()
        db.session.commit()
        db.session.remove()
    yield app
    with app.app_context():
        db.session.remove()
        if db.engine.dialect.name == "postgresql":
            with db.engine.begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {MIGRATION_SCHEMA} CASCADE"))
        db.engine.dispose()


def as_uuid(value: object) -> uuid.UUID | None:
    """A UUID column read by plain SQL: 32 hex digits on SQLite, a UUID on PostgreSQL."""
    return None if value is None else uuid.UUID(str(value))


def attempt_subjects() -> list[tuple[uuid.UUID | None, uuid.UUID | None]]:
    rows = db.session.execute(
        text("SELECT individual_id, policy_request_id FROM presentation_attempts")
    )
    return [(as_uuid(a), as_uuid(p)) for a, p in rows]


def test_migration_0003_carries_existing_rows_down_and_up(migration_app):
    app = migration_app
    client = app.test_client()
    staff = make_staff(app)
    verification = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"verification_id": verification["id"], "customer_id": "c-1"},
    ).get_json()
    with app.app_context():
        subject = open_individual(uuid.UUID(verification["id"]), "c-1")[0]
        link = presentations.connect(subject, 120, 600)
        assert link is not None
        presentations.record(presentations.consume(link.id), Decision(False, "no"))
        db.session.commit()
        db.session.remove()

        downgrade(revision="0002")
        db.session.remove()
        # Back at 0002 the attempt names its individual again, filled from its request.
        assert attempt_subjects() == [(uuid.UUID(individual["id"]), None)]
        # A request without a subject, as nothing stopped before 0003.
        db.session.execute(
            text(
                "INSERT INTO presentation_requests (id, nonce, state, created_at, expires_at)"
                " VALUES (:id, 'n', 's-orphan', :now, :now)"
            ),
            {"id": uuid.uuid4().hex, "now": clock.now().replace(tzinfo=None)},
        )
        db.session.commit()
        db.session.remove()

        upgrade()
        db.session.remove()
        assert db.session.scalar(select(func.count()).select_from(PresentationRequest)) == 1
        attempt = db.session.scalars(select(PresentationAttempt)).one()
        assert str(attempt.request.subject.id) == individual["id"]
        with pytest.raises(IntegrityError):
            insert_request(None, None)
        db.session.rollback()
