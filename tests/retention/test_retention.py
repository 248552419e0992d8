"""Kept claims deleted after the verification's ``retention_days`` (with an injected clock),
``retention_days`` on the JSON API, and a person's record erased on request."""

from __future__ import annotations

import os
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from factories import make_apikey, make_staff, make_verification
from flask_migrate import upgrade
from sqlalchemy import event, func, select
from sqlalchemy.engine import make_url

from app import clock
from app.extensions import db
from app.organizations.models import Organization
from app.policies.models import PolicyRequest
from app.policies.operations import create_policy_request
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.retention import jobs as retention_jobs
from app.schemas.public import seed_public_schemas
from app.verifications.models import Individual, PresentationAttempt, Status
from app.verifications.operations import open_individual
from app.webhooks import operations as hooks
from app.webhooks.models import WebhookEvent

NOT_FOUND = {"error": "sql: no rows in result set", "code": "NOT_FOUND"}
CLAIMS = {"given_name": "Ada", "family_name": "Lovelace"}
ISSUER = "https://issuer.example"


@pytest.fixture
def now():
    """The service's clock, frozen and moved by hand."""
    current = [clock.now()]
    clock.set_source(lambda: current[0])
    return current


def decide_verified(subject, claims: dict | None = None) -> None:
    """A link handed out and answered with a good presentation, recorded as the wallet
    route records it."""
    request = connect(subject, 120, 600)
    record(consume(request.id), Decision(True, None, ISSUER, dict(claims or CLAIMS)))


def verified_individual(
    app, verification_id: str, customer: str = "customer-1", claims: dict | None = None
) -> None:
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification_id), customer)
        decide_verified(individual, claims)
        db.session.commit()
        db.session.remove()


def verified_policy_request(
    app, organization_id: str, verification_id: str, claims: dict | None = None
) -> uuid.UUID:
    with app.app_context():
        organization = db.session.get(Organization, uuid.UUID(organization_id))
        _, policy = create_policy_request(organization, uuid.UUID(verification_id), None, 900, "k")
        decide_verified(policy, claims)
        db.session.commit()
        policy_id = policy.id
        db.session.remove()
    return policy_id


def lookup(client, key: str, verification_id: str, customer: str = "customer-1"):
    return client.get(
        f"/verifications/{verification_id}/individuals/{customer}", headers={"apikey": key}
    )


def sweep(app) -> int:
    with app.app_context():
        erased = retention_jobs.delete_expired_claims()
        db.session.commit()
        db.session.remove()
    return erased


def test_claims_past_retention_are_deleted_and_the_outcome_and_attempts_stay(app, client, now):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    short = make_verification(client, staff, retention_days=2)["id"]
    default = make_verification(client, staff)["id"]
    assert (
        client.get(f"/verifications/{default}", headers=staff.headers()).get_json()[
            "retention_days"
        ]
        == 30
    )
    verified_individual(app, short)
    verified_individual(app, default)
    policy_id = verified_policy_request(app, staff.organization_id, short)

    now[0] += timedelta(days=2)
    assert sweep(app) == 0  # exactly two days: still kept
    assert lookup(client, key, short).get_json()["claims"] == CLAIMS

    now[0] += timedelta(seconds=1)
    assert sweep(app) == 2  # the individual and the policy request of the short one
    expired = lookup(client, key, short).get_json()
    assert expired["claims"] is None
    assert (expired["status"], expired["issuer"]) == ("VERIFIED", ISSUER)
    assert expired["verified_at"] is not None
    assert lookup(client, key, default).get_json()["claims"] == CLAIMS
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(PresentationAttempt)) == 3
        from app.policies.models import PolicyRequest

        policy = db.session.get(PolicyRequest, policy_id)
        assert (policy.claims, policy.status) == (None, Status.VERIFIED)
        db.session.remove()

    assert sweep(app) == 0  # nothing left to delete
    now[0] += timedelta(days=28)
    assert sweep(app) == 1
    assert lookup(client, key, default).get_json()["claims"] is None


def test_claims_waiting_in_the_webhook_outbox_expire_with_the_records(app, client, now):
    from app.webhooks import operations as hooks
    from app.webhooks.models import WebhookEvent

    staff = make_staff(app)
    verification = make_verification(client, staff, retention_days=1)["id"]
    with app.app_context():
        organization = db.session.get(Organization, uuid.UUID(staff.organization_id))
        hooks.create_endpoint(organization, "https://hooks.example.test/x", include_claims=True)
        db.session.commit()
        db.session.remove()
    verified_individual(app, verification)

    def outbox_claims() -> dict:
        with app.app_context():
            found = {e.type: e.claims for e in db.session.scalars(select(WebhookEvent))}
            db.session.remove()
            return found

    assert outbox_claims()["individual.verified"] == CLAIMS
    now[0] += timedelta(days=1, seconds=1)
    assert sweep(app) == 1
    assert outbox_claims() == {"individual.requested": None, "individual.verified": None}


def test_retention_zero_keeps_the_decision_only(app, client):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff, retention_days=0)["id"]
    verified_individual(app, verification)
    body = lookup(client, key, verification).get_json()
    assert (body["status"], body["claims"], body["issuer"]) == ("VERIFIED", None, ISSUER)


def test_retention_settings_are_read_back_updated_and_bounded(app, client):
    staff = make_staff(app)
    made = make_verification(client, staff)
    assert (made["retention_days"], made["status_check_hours"]) == (30, 24)
    path = f"/verifications/{made['id']}"
    changed = client.put(path, json={"retention_days": 0}, headers=staff.headers())
    assert changed.status_code == 200, changed.get_json()
    assert (changed.get_json()["retention_days"], changed.get_json()["status_check_hours"]) == (
        0,
        24,
    )
    hours = client.put(path, json={"status_check_hours": 1}, headers=staff.headers()).get_json()
    assert (hours["retention_days"], hours["status_check_hours"]) == (0, 1)
    for bad in ({"retention_days": -1}, {"retention_days": 3651}, {"retention_days": "x"}):
        refused = client.put(path, json=bad, headers=staff.headers())
        assert refused.status_code == 400, bad
        assert refused.get_json()["code"] == "INVALID_REQUEST"
        assert "retention_days" in refused.get_json()["error"]
    assert client.get(path, headers=staff.headers()).get_json()["retention_days"] == 0


def test_the_openapi_document_describes_retention_and_erasure(client):
    document = client.get("/openapi.json").get_json()
    schemas = document["components"]["schemas"]
    assert "retention_days" in schemas["VerificationIn"]["properties"]
    assert "revoked_at" in schemas["IndividualLookupOut"]["properties"]
    erase = document["paths"]["/verifications/{verification_id}/individuals/{customer_id}"]
    assert "204" in erase["delete"]["responses"]
    erase_policy = document["paths"]["/policy-requests/{policy_id}"]
    assert "204" in erase_policy["delete"]["responses"]


# -- erasure on request ------------------------------------------------------------------------


def test_erasing_a_person_removes_the_record_and_its_attempts(app, client):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff)["id"]
    verified_individual(app, verification)
    verified_individual(app, verification, "customer-2")
    path = f"/verifications/{verification}/individuals/customer-1"

    with app.app_context():
        from app.webhooks import operations as hooks
        from app.webhooks.models import WebhookEvent

        organization = db.session.get(Organization, uuid.UUID(staff.organization_id))
        hooks.create_endpoint(organization, "https://hooks.example.test/x")
        db.session.commit()
        db.session.remove()
    verified_individual(app, verification, "customer-3")

    erased = client.delete(
        f"/verifications/{verification}/individuals/customer-3", headers={"apikey": key}
    )
    assert erased.status_code == 204 and erased.get_data() == b""
    with app.app_context():
        # The log keeps every organization's events: the other people's stay, the erased
        # person's went with the record.
        left = db.session.scalars(select(WebhookEvent)).all()
        assert sorted(event.data["customer_id"] for event in left) == [
            "customer-1",
            "customer-1",
            "customer-2",
            "customer-2",
        ]
        db.session.remove()
    erased = client.delete(path, headers={"apikey": key})
    assert erased.status_code == 204 and erased.get_data() == b""
    assert lookup(client, key, verification).status_code == 400
    assert lookup(client, key, verification).get_json() == NOT_FOUND
    with app.app_context():
        assert db.session.scalars(select(Individual.customer_id)).all() == ["customer-2"]
        assert db.session.scalar(select(func.count()).select_from(PresentationAttempt)) == 1
        db.session.remove()
    again = client.delete(path, headers={"apikey": key})
    assert (again.status_code, again.get_json()) == (400, NOT_FOUND)
    reopened = client.post(
        "/verifications/individuals",
        json={"customer_id": "customer-1", "verification_id": verification},
    )
    assert reopened.status_code == 201 and reopened.get_json()["status"] == "CREATED"


def test_erasure_needs_the_organizations_key(app, client):
    owner = make_staff(app)
    verification = make_verification(client, owner)["id"]
    verified_individual(app, verification)
    other = make_staff(app, "eve@example.test", org_name="Other")
    path = f"/verifications/{verification}/individuals/customer-1"

    assert client.delete(path).status_code == 401
    foreign = client.delete(path, headers={"apikey": make_apikey(app, other.organization_id)})
    assert (foreign.status_code, foreign.get_json()) == (400, NOT_FOUND)
    key = make_apikey(app, owner.organization_id)
    wrong = client.delete(
        f"/verifications/{uuid.uuid4()}/individuals/customer-1", headers={"apikey": key}
    )
    assert (wrong.status_code, wrong.get_json()) == (400, NOT_FOUND)
    assert lookup(client, key, verification).get_json()["claims"] == CLAIMS


def test_erasing_a_policy_request_removes_it_its_attempts_and_its_events(app, client):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff)["id"]
    kept = verified_policy_request(app, staff.organization_id, verification)
    with app.app_context():
        organization = db.session.get(Organization, uuid.UUID(staff.organization_id))
        hooks.create_endpoint(organization, "https://hooks.example.test/x")
        db.session.commit()
        db.session.remove()
    erased_id = verified_policy_request(app, staff.organization_id, verification)
    with app.app_context():
        assert db.session.scalar(
            select(func.count()).select_from(WebhookEvent).where(WebhookEvent.subject_id == erased_id)
        )  # fmt: skip
        db.session.remove()

    erased = client.delete(f"/policy-requests/{erased_id}", headers={"apikey": key})
    assert erased.status_code == 204 and erased.get_data() == b""
    status = client.get(f"/policy-requests/{erased_id}/status", headers={"apikey": key})
    assert (status.status_code, status.get_json()) == (400, NOT_FOUND)
    with app.app_context():
        assert db.session.scalars(select(PolicyRequest.id)).all() == [kept]
        # The log keeps every organization's events: the kept request's stays.
        assert db.session.scalars(select(WebhookEvent.subject_id)).all() == [kept]
        attempts = select(func.count()).select_from(PresentationAttempt)
        assert db.session.scalar(attempts) == 1, "the other request's attempt stays"
        db.session.remove()
    again = client.delete(f"/policy-requests/{erased_id}", headers={"apikey": key})
    assert (again.status_code, again.get_json()) == (400, NOT_FOUND)
    kept_status = client.get(f"/policy-requests/{kept}/status", headers={"apikey": key})
    assert kept_status.get_json()["status"] == "VERIFIED"


def test_erasing_a_policy_request_needs_the_organizations_key(app, client):
    owner = make_staff(app)
    verification = make_verification(client, owner)["id"]
    policy = verified_policy_request(app, owner.organization_id, verification)
    other = make_staff(app, "eve@example.test", org_name="Other")
    path = f"/policy-requests/{policy}"

    assert client.delete(path).status_code == 401
    foreign = client.delete(path, headers={"apikey": make_apikey(app, other.organization_id)})
    assert (foreign.status_code, foreign.get_json()) == (400, NOT_FOUND)
    key = make_apikey(app, owner.organization_id)
    for unknown in (uuid.uuid4(), "not-a-uuid"):
        wrong = client.delete(f"/policy-requests/{unknown}", headers={"apikey": key})
        assert wrong.status_code == 400 and wrong.get_json()["code"] in (
            "NOT_FOUND",
            "INVALID_REQUEST",
        )
    status = client.get(f"{path}/status", headers={"apikey": key})
    assert status.get_json()["status"] == "VERIFIED"


def secure_delete_off_by_default(dbapi_connection, _record) -> None:
    dbapi_connection.execute("PRAGMA secure_delete=OFF")


def database_files(app) -> dict[str, bytes]:
    """What a reader of the disk finds: the database file and the files SQLite keeps beside
    it (the write-ahead log, its index, a rollback journal)."""
    path = Path(make_url(app.config["SQLALCHEMY_DATABASE_URI"]).database)
    return {
        candidate.name: candidate.read_bytes()
        for candidate in path.parent.glob(path.name + "*")
        if candidate.is_file()
    }


def on_disk(app, value: str) -> list[str]:
    needle = value.encode()
    return [name for name, data in database_files(app).items() if needle in data]


@pytest.mark.skipif(
    os.environ.get("VERITY_TEST_DB") == "postgresql",
    reason="the files of an embedded SQLite database; PostgreSQL's are the server's",
)
def test_erased_claims_leave_no_bytes_in_the_database_file_or_its_log(make_app, tmp_path):
    # Debian's SQLite is built with secure_delete on; most other builds (macOS, the usual
    # source build) start with it off. Every connection here starts off as those do, so the
    # test holds for any build the service may run on. A database file of its own: the test
    # reads the files from disk and cuts the log, which no other test should share.
    app = make_app(SQLALCHEMY_DATABASE_URI=f"sqlite:///{tmp_path / 'erasure.sqlite3'}")
    with app.app_context():
        event.listen(db.engine, "connect", secure_delete_off_by_default, insert=True)
        db.engine.dispose()
        upgrade()
        seed_public_schemas()
        db.session.commit()
        db.session.remove()
    client = app.test_client()
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff)["id"]
    person = f"Quillon-{uuid.uuid4().hex}"
    policy_person = f"Quillon-{uuid.uuid4().hex}"
    verified_individual(app, verification, "customer-9", {"given_name": person})
    policy = verified_policy_request(
        app, staff.organization_id, verification, {"given_name": policy_person}
    )
    assert on_disk(app, person) and on_disk(app, policy_person), "the claims were written"

    individual = f"/verifications/{verification}/individuals/customer-9"
    assert client.delete(individual, headers={"apikey": key}).status_code == 204
    assert client.delete(f"/policy-requests/{policy}", headers={"apikey": key}).status_code == 204

    assert on_disk(app, person) == []
    assert on_disk(app, policy_person) == []


# -- on the job queue --------------------------------------------------------------------------


def test_the_jobs_are_on_the_queues_schedule_and_run_from_it(make_app, tmp_path, client, now):
    from app import jobs
    from app.jobs.queue import queue_of

    registered = jobs.registered()
    for name in ("retention.delete_expired_claims", "retention.check_revocations"):
        assert registered[name].schedule is not None, name
    # Hourly sweep, re-checks every quarter hour (huey's crontab takes the time to match).
    sweep_at = registered["retention.delete_expired_claims"].schedule
    check_at = registered["retention.check_revocations"].schedule
    assert check_at(now[0].replace(minute=45)) and not check_at(now[0].replace(minute=44))
    assert sweep_at(now[0].replace(minute=7)) and not sweep_at(now[0].replace(minute=8))

    queue_app = make_app(JOBS_QUEUE_URL=f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    staff = make_staff(queue_app)
    key = make_apikey(queue_app, staff.organization_id)
    verification = make_verification(client, staff, retention_days=1)["id"]
    verified_individual(queue_app, verification)
    # The relay of the decision's events (every organization's events are logged) goes first.
    assert queue_of(queue_app).run_pending() == 1
    now[0] += timedelta(days=1, seconds=1)
    with queue_app.app_context():
        jobs.enqueue("retention.delete_expired_claims")
        jobs.enqueue("retention.check_revocations")
    assert queue_of(queue_app).run_pending() == 2
    assert lookup(client, key, verification).get_json()["claims"] is None


def test_a_deleted_verifications_people_can_still_be_erased_and_their_claims_expire(
    app, client, now
):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff, retention_days=1)["id"]
    verified_individual(app, verification)
    verified_individual(app, verification, "customer-2")
    deleted = client.delete(f"/verifications/{verification}", headers=staff.headers())
    assert deleted.status_code == 204
    now[0] += timedelta(days=1, seconds=1)
    assert sweep(app) == 2
    erased = client.delete(
        f"/verifications/{verification}/individuals/customer-2", headers={"apikey": key}
    )
    assert erased.status_code == 204
    with app.app_context():
        assert db.session.scalars(select(Individual.customer_id)).all() == ["customer-1"]
        db.session.remove()


def test_lowering_retention_to_zero_deletes_the_claims_already_kept(app, client, now):
    staff = make_staff(app)
    key = make_apikey(app, staff.organization_id)
    verification = make_verification(client, staff)["id"]
    verified_individual(app, verification)
    assert sweep(app) == 0
    changed = client.put(
        f"/verifications/{verification}", json={"retention_days": 0}, headers=staff.headers()
    )
    assert changed.status_code == 200
    now[0] += timedelta(seconds=1)
    assert sweep(app) == 1
    assert lookup(client, key, verification).get_json()["claims"] is None
