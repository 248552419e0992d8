"""The audit trail through HTTP: each write leaves one event naming who, what and which record,
with no secret and no personal value in it; each organization reads only its own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from factories import make_apikey, make_staff, verification_body
from issuance.issuance_support import Org, issue, make_org

from app import clock
from app.audit import operations as audit
from app.audit.models import AppendOnly, AuditEvent
from app.extensions import db


@dataclass
class World:
    client: Any
    org: Org
    apikey: dict[str, str]
    app: Any = None

    @property
    def session(self) -> dict[str, str]:
        return self.org.headers

    def verification(self) -> dict[str, Any]:
        response = self.client.post(
            "/verifications", json=verification_body(), headers=self.session
        )
        assert response.status_code == 201, response.get_json()
        return response.get_json()


@pytest.fixture
def world(app, client) -> World:
    org = make_org(app)
    return World(client, org, {"apikey": make_apikey(app, org.id, name="billing backend")}, app)


def events(client, headers, **query) -> list[dict[str, Any]]:
    response = client.get("/audit-events", query_string=query, headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["results"]


@dataclass(frozen=True)
class Write:
    """One write endpoint: how to make it, and the event it must leave."""

    name: str
    act: Callable[[World], tuple[Any, str]]  # returns (response, record id)
    action: str
    actor: str  # "user" or "integration"
    never: tuple[str, ...] = ()  # text that must not appear anywhere in the event


def created_id(response) -> str:
    assert response.status_code in (200, 201, 202), response.get_json()
    return response.get_json()["id"]


def _issue(w: World):
    response = w.client.post("/credentials", json=w.org.body(), headers=w.session)
    return response, created_id(response)


def _revoke(w: World):
    credential = issue(w.client, w.org)
    return w.client.post(f"/credentials/{credential['id']}/revoke", headers=w.session), credential[
        "id"
    ]


def _create_verification(w: World):
    response = w.client.post("/verifications", json=verification_body(), headers=w.session)
    return response, created_id(response)


def _update_verification(w: World):
    made = w.verification()
    body = verification_body(name="Renamed")
    return w.client.put(f"/verifications/{made['id']}", json=body, headers=w.session), made["id"]


def _delete_verification(w: World):
    made = w.verification()
    return w.client.delete(f"/verifications/{made['id']}", headers=w.session), made["id"]


def _create_integration(w: World):
    response = w.client.post("/integrations", json={"name": "ci"}, headers=w.session)
    return response, created_id(response)


def _delete_integration(w: World):
    made = w.client.post("/integrations", json={"name": "old"}, headers=w.session).get_json()
    return w.client.delete(f"/integrations/{made['id']}", headers=w.session), made["id"]


def _create_webhook(w: World):
    body = {"url": "https://hooks.example.test/verity"}
    response = w.client.post("/webhooks/endpoints", json=body, headers=w.session)
    return response, created_id(response)


def _delete_webhook(w: World):
    body = {"url": "https://hooks.example.test/old"}
    made = w.client.post("/webhooks/endpoints", json=body, headers=w.session).get_json()
    return w.client.delete(f"/webhooks/endpoints/{made['id']}", headers=w.session), made["id"]


def _create_schema(w: World):
    body = {
        "name": "Badge",
        "vct": "https://credentials.example.test/badge",
        "attributes": [{"name": "level", "description": "Level", "type": "NUMBER"}],
    }
    response = w.client.post("/schemas", json=body, headers=w.session)
    return response, created_id(response)


def _publish_schema(w: World):
    body = {
        "name": "Card",
        "vct": "https://credentials.example.test/card",
        "attributes": [{"name": "level", "description": "Level", "type": "NUMBER"}],
    }
    made = w.client.post("/schemas", json=body, headers=w.session).get_json()
    return w.client.post(f"/schemas/{made['id']}/publish", headers=w.session), made["id"]


def _create_recipient(w: World):
    body = {"first_name": "Grace", "last_name": "Hopper", "email": "grace@example.test"}
    response = w.client.post("/recipients", json=body, headers=w.apikey)
    return response, created_id(response)


def _create_policy_request(w: World):
    made = w.verification()
    response = w.client.post(
        "/policy-requests", json={"verification_id": made["id"]}, headers=w.apikey
    )
    return response, created_id(response)


def _erase_individual(w: World):
    made = w.verification()
    opened = w.client.post(
        "/verifications/individuals",
        json={"customer_id": "cust-42", "verification_id": made["id"]},
    ).get_json()
    path = f"/verifications/{made['id']}/individuals/cust-42"
    return w.client.delete(path, headers=w.apikey), opened["id"]


def _verifier_profile(w: World):
    body = {"logo_uri": "https://acme.example.test/logo.png"}
    response = w.client.put("/verifier-identity/profile", json=body, headers=w.session)
    return response, w.org.id


def _pem_source(w: World, name: str):
    from trust_sources.sources_support import make_party

    body = {"name": name, "kind": "PEM", "certificates": make_party(name, ca=True).pem}
    response = w.client.post("/trust/sources", json=body, headers=w.session)
    return response, created_id(response)


def _add_trust_source(w: World):
    return _pem_source(w, "Our CAs")


def _delete_trust_source(w: World):
    _, source_id = _pem_source(w, "Old CAs")
    return w.client.delete(f"/trust/sources/{source_id}", headers=w.session), source_id


def _test_event(w: World):
    body = {"url": "https://hooks.example.test/test"}
    hook = w.client.post("/webhooks/endpoints", json=body, headers=w.session).get_json()
    response = w.client.post(f"/webhooks/endpoints/{hook['id']}/test", headers=w.session)
    return response, created_id(response)


def _replay_delivery(w: World):
    """Replaying is a dashboard form (the API has no replay)."""
    from staff.staff_support import sign_in, submit

    body = {"url": "https://hooks.example.test/replayed"}
    hook = w.client.post("/webhooks/endpoints", json=body, headers=w.session).get_json()
    sent = w.client.post(f"/webhooks/endpoints/{hook['id']}/test", headers=w.session)
    browser = w.app.test_client()
    sign_in(browser, w.org.staff.token)
    delivery_id = sent.get_json()["id"]
    path = f"/dashboard/webhooks/{hook['id']}/deliveries/{delivery_id}/replay"
    return submit(browser, path), delivery_id


def _upload_issuer_chain(w: World):
    from issuance.issuance_support import Wallet, receive
    from issuance.test_issuance_display_x5c import _ca_chain

    receive(w.client, w.org, Wallet(), issue(w.client, w.org))  # the organization has a key now
    well_known = f"/.well-known/jwt-vc-issuer/issuers/{w.org.id}"
    (key,) = w.client.get(well_known).get_json()["jwks"]["keys"]
    chain_pem, _ = _ca_chain(key, w.org.issuer)
    body = {"chain_pem": chain_pem}
    response = w.client.put("/issuer/certificate", json=body, headers=w.session)
    with w.app.app_context():
        from app.issuance.models import IssuerKey

        (stored,) = db.session.scalars(db.select(IssuerKey.id).where(IssuerKey.kid == key["kid"]))
    return response, str(stored)


WRITES = [
    Write("issue a credential", _issue, "credential.created", "user", ("Lovelace", "Mathematics")),
    Write("revoke a credential", _revoke, "credential.revoked", "user"),
    Write("create a verification", _create_verification, "verification.created", "user"),
    Write("update a verification", _update_verification, "verification.updated", "user"),
    Write("delete a verification", _delete_verification, "verification.deleted", "user"),
    Write("add an integration key", _create_integration, "integration.created", "user"),
    Write("delete an integration key", _delete_integration, "integration.deleted", "user"),
    Write("add a webhook endpoint", _create_webhook, "webhook_endpoint.created", "user"),
    Write("delete a webhook endpoint", _delete_webhook, "webhook_endpoint.deleted", "user"),
    Write("create a schema", _create_schema, "schema.created", "user"),
    Write("publish a schema", _publish_schema, "schema.published", "user"),
    Write("send a test event", _test_event, "webhook_delivery.test_sent", "user"),
    Write("replay a delivery", _replay_delivery, "webhook_delivery.replayed", "user"),
    Write(
        "upload the issuer's certificate chain",
        _upload_issuer_chain,
        "issuer_key.updated",
        "user",
        ("BEGIN",),
    ),
    Write("add a trust source", _add_trust_source, "trust_source.created", "user", ("BEGIN",)),
    Write("delete a trust source", _delete_trust_source, "trust_source.deleted", "user"),
    Write("set the verifier profile", _verifier_profile, "verifier_identity.created", "user"),
    Write(
        "add a recipient",
        _create_recipient,
        "recipient.created",
        "integration",
        ("Hopper", "grace@example.test"),
    ),
    Write(
        "create a policy request", _create_policy_request, "policy_request.created", "integration"
    ),
    Write("erase an individual", _erase_individual, "individual.deleted", "integration"),
]


@pytest.mark.parametrize("write", WRITES, ids=[w.name for w in WRITES])
def test_each_write_leaves_one_audit_event(world: World, write: Write):
    response, record_id = write.act(world)
    assert response.status_code < 400, response.get_data(as_text=True)
    found = [
        e
        for e in events(world.client, world.session, action=write.action)
        if e["record_id"] == record_id
    ]
    assert len(found) == 1, events(world.client, world.session)
    event = found[0]
    assert event["actor"]["type"] == write.actor
    expected_name = "registrar@example.test" if write.actor == "user" else "billing backend"
    assert event["actor"]["name"] == expected_name
    assert event["record_type"] == write.action.split(".")[0]
    assert event["client_ip"] == "127.0.0.1"
    text = json.dumps(event)
    for secret in write.never:
        assert secret not in text


def test_secrets_are_named_but_never_recorded(world: World):
    created = world.client.post("/integrations", json={"name": "ci"}, headers=world.session)
    key = created.get_json()["key"]
    hook = world.client.post(
        "/webhooks/endpoints", json={"url": "https://hooks.example.test/a"}, headers=world.session
    ).get_json()
    trail = events(world.client, world.session)
    text = json.dumps(trail)
    assert key not in text and hook["secret"] not in text
    integration = next(e for e in trail if e["action"] == "integration.created")
    assert "key_hash" in integration["fields"] and "key_hash" not in integration["changes"]
    assert integration["changes"]["name"] == "ci"


def test_claim_values_are_kept_out_by_name(world: World):
    credential = issue(world.client, world.org)
    (event,) = events(world.client, world.session, record_id=credential["id"])
    assert "claims" in event["fields"]
    assert "claims" not in event["changes"]
    assert "Lovelace" not in json.dumps(event)


def test_reads_and_the_persons_flow_leave_no_event(world: World):
    made = world.verification()
    before = len(events(world.client, world.session))
    world.client.get("/verifications", headers=world.session)
    world.client.get(f"/verifications/{made['id']}/individuals/nobody", headers=world.apikey)
    world.client.post(
        "/verifications/individuals", json={"customer_id": "c1", "verification_id": made["id"]}
    )
    assert len(events(world.client, world.session)) == before


def test_an_organization_reads_only_its_own_trail(app, world: World):
    world.verification()
    other = make_staff(app, "mallory@example.test", org_name="Other")
    assert events(world.client, other.headers()) == []
    ours = events(world.client, world.session)
    assert ours and all(e["actor"]["name"] == "registrar@example.test" for e in ours)
    # Naming another organization's record finds nothing either.
    assert events(world.client, other.headers(), record_id=ours[0]["record_id"]) == []


def test_filters_by_actor_action_record_type_and_day(world: World):
    made = world.verification()
    world.client.post(
        "/recipients",
        json={"first_name": "A", "last_name": "B", "email": "a@example.test"},
        headers=world.apikey,
    )
    assert {e["actor"]["name"] for e in events(world.client, world.session, actor="billing")} == {
        "billing backend"
    }
    by_action = events(world.client, world.session, action="verification.created")
    assert [e["record_id"] for e in by_action] == [made["id"]]
    assert {
        e["record_type"] for e in events(world.client, world.session, record_type="recipient")
    } == {"recipient"}
    today = clock.now().date()
    assert events(world.client, world.session, **{"from": str(today), "to": str(today)})
    tomorrow = today + timedelta(days=1)
    assert events(world.client, world.session, **{"from": str(tomorrow)}) == []


def test_a_malformed_day_is_a_clear_400(world: World):
    response = world.client.get("/audit-events?from=yesterday", headers=world.session)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_the_trail_is_paged_and_needs_a_session(world: World):
    for _ in range(3):
        world.verification()
    page = world.client.get("/audit-events?limit=2&page=2", headers=world.session).get_json()
    assert page["total"] >= 3 and len(page["results"]) >= 1
    assert world.client.get("/audit-events").status_code == 401
    assert world.client.get("/audit-events", headers=world.apikey).status_code == 401


def test_events_refuse_updates_and_deletes(app, world: World):
    world.verification()
    with app.app_context():
        event = db.session.scalars(db.select(AuditEvent)).first()
        event.action = "nothing.happened"
        with pytest.raises(AppendOnly):
            db.session.flush()
        db.session.rollback()
        event = db.session.scalars(db.select(AuditEvent)).first()
        db.session.delete(event)
        with pytest.raises(AppendOnly):
            db.session.flush()
        db.session.rollback()


def test_retention_removes_only_events_past_the_setting(app, world: World):
    world.verification()
    with app.app_context():
        total = db.session.scalar(db.select(db.func.count()).select_from(AuditEvent))
        assert audit.expire_events(clock.now() + timedelta(days=364), 365) == 0
        assert audit.expire_events(clock.now() + timedelta(days=366), 365) == total
        db.session.commit()


def test_dashboard_writes_are_recorded_with_their_verbs(app, world: World):
    """The dashboard's own forms (rotate a secret, disable an endpoint, revoke) go through the
    same hook as the API: the user, the verb, the record, and no secret."""
    from staff.staff_support import sign_in, submit

    browser = app.test_client()
    sign_in(browser, world.org.staff.token)
    hook = world.client.post(
        "/webhooks/endpoints", json={"url": "https://hooks.example.test/r"}, headers=world.session
    ).get_json()
    rotated = submit(browser, f"/dashboard/webhooks/{hook['id']}/rotate")
    assert rotated.status_code < 400
    submit(browser, f"/dashboard/webhooks/{hook['id']}/disable")
    submit(browser, f"/dashboard/webhooks/{hook['id']}/enable")
    tested = submit(browser, f"/dashboard/webhooks/{hook['id']}/test")
    assert tested.status_code < 400
    credential = issue(world.client, world.org)
    submit(browser, f"/dashboard/credentials/{credential['id']}/revoke")
    trail = events(world.client, world.session)
    actions = {(e["action"], e["record_id"]) for e in trail}
    assert ("webhook_endpoint.secret_rotated", hook["id"]) in actions
    assert ("webhook_endpoint.disabled", hook["id"]) in actions
    assert ("credential.revoked", credential["id"]) in actions
    (test_event,) = [e for e in trail if e["action"] == "webhook_delivery.test_sent"]
    assert test_event["actor"]["name"] == "registrar@example.test"
    rotation = next(e for e in trail if e["action"] == "webhook_endpoint.secret_rotated")
    assert "sealed_secret" in rotation["fields"] and "sealed_secret" not in rotation["changes"]
    assert "whsec_" not in json.dumps(trail)


def test_the_retention_sweep_applies_audit_retention_days(app, world: World, monkeypatch):
    from app.retention import jobs as retention_jobs

    monkeypatch.setitem(app.config, "AUDIT_RETENTION_DAYS", 30)
    earlier = clock.now() - timedelta(days=31)
    clock.set_source(lambda: earlier)
    old = world.verification()  # its event is 31 days old
    clock.set_source(None)
    new = world.verification()
    with app.app_context():
        retention_jobs.delete_expired_claims()
        db.session.commit()
        db.session.remove()
    kept = events(world.client, world.session, action="verification.created")
    assert [e["record_id"] for e in kept] == [new["id"]]
    assert old["id"] != new["id"]


# Records no member of staff or integration writes through a request, so never in the trail.
NOT_AUDITED = {
    "AuditEvent": "the trail itself",
    "IdempotentRequest": "a stored answer to a retried request, not a change of its own",
    "LoginAttempt": "throttling bookkeeping of the sign-in",
    "SessionToken": "a sign-in, not a change to the organization's records",
    "User": "made by signing up, before there is an organization to audit it in",
    "PresentationAttempt": "the wallet's presentations: the individual's own trail",
    "PresentationRequest": "the person's page and the wallet make them",
    "Voucher": "operators make them from the command line",
    "WebhookAttempt": "the delivery jobs write them",
    "WebhookEvent": "the outbox; a test event is audited by its delivery",
    "EventCounter": "the last position of an organization's event log, moved with each event",
    "ZkCheck": "a zero-knowledge answer waiting seconds for its proof's check; its decision is the attempt",
    "EventStream": "the lease of an open event stream, written while it is open",
    "AccessToken": "the wallet's, while it takes a credential",
    "AuthorizationRequest": "the wallet's and the person's, while a credential is taken",
    "CNonce": "the wallet's, while it takes a credential",
    "CredentialCopy": "the wallet's copies; the credential itself is audited",
    "CredentialUpload": "a CSV upload's job bookkeeping; each credential it issues is audited",
    "DpopProofSeen": "replay protection of the wallet's proofs",
    "DidcommIdentity": "made when a DIDComm link is first handed out, not by a member of staff",
    "DidcommExchange": "the wallet's connection, made by the DIDComm job",
    "GoogleWalletCertificate": "issued when a wallet's browser fetches a DC API request, not by "
    "a member of staff; the profile change that makes a new one is audited",
}


def test_every_model_is_audited_or_says_why_not(app):
    """A write endpoint is audited without more code only if what it writes is an audited
    record: a new model must be one, or be listed here with the reason it is not."""
    mapped = {mapper.class_.__name__ for mapper in db.Model.registry.mappers}
    unaccounted = mapped - set(audit.RECORD_TYPES) - set(NOT_AUDITED)
    assert not unaccounted, f"add to RECORD_TYPES or NOT_AUDITED: {sorted(unaccounted)}"
    assert not set(NOT_AUDITED) & set(audit.RECORD_TYPES)


def test_a_savepoint_rolled_back_takes_only_its_own_notes(app, world: World):
    """A lost first-use race rolls back a savepoint (``begin_nested``) inside a request whose
    other writes still commit: those keep their events, the rolled-back one leaves none."""
    from flask import g

    from app.organizations.models import Organization

    with app.test_request_context("/", method="POST"):
        g.audit_actor = audit.Actor("user", "u-1", "ada@example.test", "192.0.2.1")
        organization = db.session.get(Organization, uuid.UUID(world.org.id))
        organization.name = "Renamed before the race"
        db.session.flush()
        savepoint = db.session.begin_nested()
        organization.support_contact = "lost@example.test"
        db.session.flush()
        savepoint.rollback()
        db.session.commit()

    recorded = events(world.client, world.session, action="organization.updated")
    assert [event["changes"] for event in recorded] == [{"name": "Renamed before the race"}]
