"""Deliveries to a real receiver on loopback, each signature checked with the Standard
Webhooks library: individual and credential events arrive once per event id, in order per
subject; failures retry with backoff on an injected clock; 410 disables the endpoint."""

from __future__ import annotations

import uuid
from datetime import timedelta
from itertools import pairwise

from factories import make_apikey, make_staff
from issuance.issuance_support import Wallet, issue, make_org, receive
from receiver import Receiver
from sqlalchemy import select
from standardwebhooks import Webhook
from wallets import Issuer, post_response, python_presentation, read_request
from webhook_support import Person, add_endpoint, drain, sweep, verification

from app.extensions import db
from app.integrations.models import Integration
from app.jobs.queue import queue_of
from app.webhooks import delivery
from app.webhooks.models import DeliveryState, WebhookDelivery, WebhookEndpoint, WebhookEvent


def payloads(receiver: Receiver, secret: str) -> list[dict]:
    return [received.verified(secret) for received in receiver.received]


def test_individual_events_arrive_signed_once_each_and_in_order(hooks_app, receiver):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url)
    person = Person(client, verification(client, staff), "crm-1")

    person.present(adult=False)  # requested, then failed
    person.present()  # a retry: verified
    drain(hooks_app)

    received = payloads(receiver, endpoint["secret"])
    assert [p["type"] for p in received] == [
        "individual.requested",
        "individual.failed",
        "individual.verified",
    ]
    assert {p["data"]["id"] for p in received} == {person.id}
    assert [p["data"]["status"] for p in received] == ["REQUESTED", "FAILED", "VERIFIED"]
    assert received[1]["data"]["validation_error"]
    # Each event once, each with an id of its own, the same id a receiver deduplicates on.
    ids = [r.webhook_id for r in receiver.received]
    assert len(set(ids)) == 3
    with hooks_app.app_context():
        stored = db.session.scalars(select(WebhookEvent).order_by(WebhookEvent.sequence))
        assert [event.webhook_id for event in stored] == ids


def test_claims_go_only_to_endpoints_that_opt_in(hooks_app):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    plain, with_claims = Receiver(), Receiver()
    try:
        plain_endpoint = add_endpoint(client, staff, plain.url, events=["individual.verified"])
        claims_endpoint = add_endpoint(
            client, staff, with_claims.url, events=["individual.verified"], include_claims=True
        )
        Person(client, verification(client, staff), "crm-2").present()
        drain(hooks_app)
        [without] = payloads(plain, plain_endpoint["secret"])
        [withclaims] = payloads(with_claims, claims_endpoint["secret"])
    finally:
        plain.close()
        with_claims.close()
    assert "claims" not in without["data"]
    assert withclaims["data"]["claims"]["given_name"] == "Erika"
    assert without["data"]["issuer"] == withclaims["data"]["issuer"]
    assert without["data"]["status"] == "VERIFIED"


def test_credential_events_arrive_in_order(hooks_app, receiver):
    client = hooks_app.test_client()
    org = make_org(hooks_app)
    endpoint = add_endpoint(
        client,
        org.staff,
        receiver.url,
        events=["credential.offered", "credential.issued", "credential.revoked"],
    )
    credential = issue(client, org)
    receive(client, org, Wallet(), credential)
    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.status_code == 200
    drain(hooks_app)

    received = payloads(receiver, endpoint["secret"])
    assert [p["type"] for p in received] == [
        "credential.offered",
        "credential.issued",
        "credential.revoked",
    ]
    assert [p["data"]["status"] for p in received] == ["OFFERED", "ISSUED", "REVOKED"]
    assert {p["data"]["id"] for p in received} == {credential["id"]}
    assert all("claims" not in p["data"] for p in received)


def test_an_endpoint_receives_only_the_event_types_it_chose(hooks_app, receiver):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    Person(client, verification(client, staff), "crm-3").present()
    drain(hooks_app)
    assert [p["type"] for p in payloads(receiver, endpoint["secret"])] == ["individual.verified"]


def test_an_organization_without_endpoints_logs_its_events_numbered_and_delivers_none(
    hooks_app,
):
    """The log is every organization's, whoever reads it (streams read it too); the relay
    fans each event out to no endpoint."""
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    Person(client, verification(client, staff), "crm-4").present()
    drain(hooks_app)
    with hooks_app.app_context():
        events = db.session.scalars(select(WebhookEvent).order_by(WebhookEvent.sequence)).all()
        assert [e.type for e in events] == ["individual.requested", "individual.verified"]
        assert [e.position for e in events] == [1, 2]
        assert all(e.dispatched_at is not None for e in events)
        assert db.session.scalar(select(WebhookDelivery.id)) is None


def test_a_receiver_down_for_several_attempts_gets_the_event_when_it_is_back(
    hooks_app, receiver, moved_clock
):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    receiver.down()
    Person(client, verification(client, staff), "crm-5").present()
    drain(hooks_app)  # first attempt: connection refused

    waits = []
    for _ in range(4):
        with hooks_app.app_context():
            row = db.session.scalar(select(WebhookDelivery))
            waits.append(row.next_attempt_at - moved_clock.now)
        moved_clock.advance(waits[-1])
        sweep(hooks_app)
        drain(hooks_app)
    # The first retry within a minute, then each wait longer (exponential, with jitter).
    assert waits[0] <= timedelta(minutes=1)
    assert all(later > earlier for earlier, later in pairwise(waits))

    receiver.up()
    with hooks_app.app_context():
        row = db.session.scalar(select(WebhookDelivery))
        assert row.attempt_count == 5 and row.state == DeliveryState.PENDING
        moved_clock.now = row.next_attempt_at
    sweep(hooks_app)
    drain(hooks_app)

    [received] = receiver.received
    assert received.verified(endpoint["secret"])["type"] == "individual.verified"
    with hooks_app.app_context():
        row = db.session.scalar(select(WebhookDelivery))
        assert row.state == DeliveryState.DELIVERED and row.attempt_count == 6
    deliveries = client.get(
        f"/webhooks/endpoints/{endpoint['id']}/deliveries", headers=staff.headers()
    ).get_json()
    assert deliveries["total"] == 1
    assert deliveries["results"][0]["state"] == "DELIVERED"
    assert deliveries["results"][0]["last_status_code"] == 204
    assert deliveries["results"][0]["webhook_id"] == received.webhook_id


def test_a_later_event_waits_for_an_earlier_one_of_the_same_subject(
    hooks_app, receiver, moved_clock
):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url)
    receiver.answers.extend([500])  # the first event (requested) fails once
    person = Person(client, verification(client, staff), "crm-6")
    person.present()
    drain(hooks_app)
    assert [r.status for r in receiver.received] == [500]  # verified was held back

    moved_clock.advance(timedelta(minutes=2))
    sweep(hooks_app)
    drain(hooks_app)
    types = [r.verified(endpoint["secret"])["type"] for r in receiver.received]
    assert types == ["individual.requested", "individual.requested", "individual.verified"]
    assert receiver.received[0].webhook_id == receiver.received[1].webhook_id


def test_a_delivery_gives_up_after_three_days(hooks_app, receiver, moved_clock):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    receiver.default_status = 503
    Person(client, verification(client, staff), "crm-7").present()
    drain(hooks_app)
    for _ in range(40):
        with hooks_app.app_context():
            row = db.session.scalar(select(WebhookDelivery))
            if row.state != DeliveryState.PENDING:
                break
            moved_clock.now = row.next_attempt_at
        sweep(hooks_app)
        drain(hooks_app)
    with hooks_app.app_context():
        row = db.session.scalar(select(WebhookDelivery))
        event = db.session.scalar(select(WebhookEvent))
        assert row.state == DeliveryState.FAILED
        last = moved_clock.now
        assert last <= event.created_at + delivery.RETRY_WINDOW
        assert last > event.created_at + delivery.RETRY_WINDOW - delivery.LONGEST_WAIT * 2
    assert all(r.status == 503 for r in receiver.received)


def test_410_gone_disables_the_endpoint(hooks_app, receiver):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url)
    receiver.default_status = 410
    person = Person(client, verification(client, staff), "crm-8")
    person.present()
    drain(hooks_app)
    assert len(receiver.received) == 1  # the verified event was not tried after the 410
    listed = client.get("/webhooks/endpoints", headers=staff.headers()).get_json()
    [row] = listed["results"]
    assert row["id"] == endpoint["id"] and row["enabled"] is False
    assert "410" in row["disabled_reason"]
    with hooks_app.app_context():
        states = set(db.session.scalars(select(WebhookDelivery.state)))
        assert states == {DeliveryState.FAILED}


def test_loopback_endpoints_are_refused_without_the_development_setting(
    make_app, app, receiver, moved_clock
):
    """The same address checks as issuer fetches: TRUST_ALLOW_PRIVATE off refuses loopback,
    and plain http is refused at creation."""
    client = app.test_client()
    staff = make_staff(app)
    refused = client.post(
        "/webhooks/endpoints", json={"url": receiver.url}, headers=staff.headers()
    )
    assert refused.status_code == 400
    with app.app_context():
        from app.webhooks import settings
        from app.webhooks.sealing import new_secret, seal

        # Stored as an endpoint added before creation refused such addresses: a delivery
        # checks the address again whatever was stored.
        endpoint = WebhookEndpoint(
            organization_id=uuid.UUID(staff.organization_id),
            url="https://127.0.0.1:1/hooks",
            events=["individual.verified"],
            sealed_secret=seal(new_secret(), settings.current().kek),
        )
        db.session.add(endpoint)
        db.session.commit()
        endpoint_id = endpoint.id
    Person(client, verification(client, staff), "crm-9").present()
    with app.app_context():
        delivery.relay()
        [row] = db.session.scalars(
            select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint_id)
        )
        delivery.deliver(row.id)
        db.session.refresh(row)
        assert row.state == DeliveryState.PENDING
        assert "loopback" in row.last_error
        assert row.last_status_code is None
    assert receiver.received == []


def test_after_a_rotation_both_secrets_sign_for_a_day(hooks_app, receiver, moved_clock):
    from app.organizations.models import Organization
    from app.webhooks.operations import rotate_secret

    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.requested"])
    verification_id = verification(client, staff)
    with hooks_app.app_context():
        organization = db.session.get(Organization, uuid.UUID(staff.organization_id))
        new_secret = rotate_secret(organization, uuid.UUID(endpoint["id"])).secret
        db.session.commit()
    Person(client, verification_id, "crm-10").request()
    drain(hooks_app)
    moved_clock.advance(timedelta(hours=25))
    Person(client, verification_id, "crm-11").request()
    drain(hooks_app)

    first, second = receiver.received
    assert first.verified(endpoint["secret"]) == first.verified(new_secret)
    assert len(first.headers["webhook-signature"].split(" ")) == 2
    second.verified(new_secret)
    assert len(second.headers["webhook-signature"].split(" ")) == 1
    try:
        Webhook(endpoint["secret"]).verify(second.body, second.headers)
    except Exception as exc:  # the old secret no longer signs
        assert "signature" in str(exc).lower()
    else:
        raise AssertionError("the old secret still signs after its overlap")
    with hooks_app.app_context():
        stored = db.session.get(WebhookEndpoint, uuid.UUID(endpoint["id"]))
        assert new_secret.encode() not in stored.sealed_secret


def policy_request(app, client, staff, **body) -> tuple[dict, dict]:
    headers = {"apikey": make_apikey(app, staff.organization_id)}
    created = client.post(
        "/policy-requests",
        json={"verification_id": verification(client, staff), **body},
        headers=headers,
    )
    assert created.status_code == 201, created.get_json()
    return created.get_json(), headers


def test_policy_request_outcomes_and_expiry_arrive_once(hooks_app, receiver, moved_clock):
    from app.policies.operations import connect_policy
    from app.web.links import links

    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(
        client,
        staff,
        receiver.url,
        events=["policy_request.verified", "policy_request.expired"],
    )
    answered, _ = policy_request(hooks_app, client, staff)
    lapsing, _ = policy_request(hooks_app, client, staff, expires_in=60)
    with hooks_app.test_request_context():
        _, request = connect_policy(answered["token"], 120, 600)
        db.session.commit()
        url = links().connection_url(request.id)
    wallet_request = read_request(client, url)
    post_response(client, wallet_request, python_presentation(wallet_request, Issuer()))

    moved_clock.advance(timedelta(minutes=2))
    queue_of(hooks_app).tasks["policies.report_expired"].call_local()
    queue_of(hooks_app).tasks["policies.report_expired"].call_local()  # a second sweep: no twin
    drain(hooks_app)

    received = payloads(receiver, endpoint["secret"])
    assert [(p["type"], p["data"]["id"]) for p in received] == [
        ("policy_request.verified", answered["id"]),
        ("policy_request.expired", lapsing["id"]),
    ]
    assert received[0]["data"]["status"] == "VERIFIED"
    assert "claims" not in received[0]["data"]


def test_a_replayed_delivery_is_sent_again_with_the_same_webhook_id(hooks_app, receiver):
    from app.organizations.models import Organization
    from app.webhooks.operations import replay_delivery

    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    Person(client, verification(client, staff), "crm-12").present()
    drain(hooks_app)
    with hooks_app.app_context():
        organization = db.session.get(Organization, uuid.UUID(staff.organization_id))
        delivery_id = db.session.scalar(select(WebhookDelivery.id))
        replay_delivery(organization, uuid.UUID(endpoint["id"]), delivery_id)
        assert queue_of(hooks_app).pending_count() == 0  # handed over only once committed
        db.session.commit()
    drain(hooks_app)

    first, second = receiver.received
    assert first.webhook_id == second.webhook_id
    assert second.verified(endpoint["secret"])["type"] == "individual.verified"
    with hooks_app.app_context():
        row = db.session.get(WebhookDelivery, delivery_id)
        assert row.state == DeliveryState.DELIVERED and row.attempt_count == 2


def test_individual_events_say_who_first_opened_the_individual(hooks_app, receiver):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    verification_id = verification(client, staff)
    key = make_apikey(hooks_app, staff.organization_id)
    with hooks_app.app_context():
        (integration_id,) = db.session.execute(select(Integration.id)).one()
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-backend", "verification_id": verification_id},
        headers={"apikey": key},
    )
    assert opened.status_code == 201
    Person(client, verification_id, "crm-backend").present()
    Person(client, verification_id, "crm-stranger").present()
    drain(hooks_app)

    received = {p["data"]["customer_id"]: p["data"] for p in payloads(receiver, endpoint["secret"])}
    assert received["crm-backend"]["opened_by"] == {
        "kind": "backend",
        "integration_id": str(integration_id),
    }
    assert received["crm-stranger"]["opened_by"] == {"kind": "anonymous"}
