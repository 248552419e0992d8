"""Revocation checked again after the decision, with an injected clock.

A credential issued by the service (over OpenID4VCI) is presented through a full OpenID4VP
flow to a verification on the same service, which reads the issuer's status list over HTTP
on loopback; the re-check job reads that list again later, as any issuer's would be read.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from factories import make_apikey
from issuance.issuance_support import Org, Wallet, issue, make_org, receive
from jwcrypto import jwk
from sqlalchemy import update
from wallets import post_response, read_request

from app import clock
from app.extensions import db
from app.retention import jobs as retention_jobs
from app.trust.fetch import TTLCache
from app.verifications.models import Individual


class Clock:
    """The service's clock and the fetcher's cache clock, moved together."""

    def __init__(self, app) -> None:
        self.start = clock.now()
        self.offset = timedelta()
        clock.set_source(lambda: self.start + self.offset)
        app.extensions["fetcher"].cache = TTLCache(clock=lambda: self.offset.total_seconds())

    def advance(self, **delta: float) -> datetime:
        self.offset += timedelta(**delta)
        return clock.now()


def present(client, wallet: Wallet, verification_id: str, customer: str, sd_jwt: str) -> dict:
    from sd_jwt.holder import SDJWTHolder

    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer, "verification_id": verification_id},
    ).get_json()
    connect = client.get(f"/verifications/{individual['id']}/connect").get_json()
    request = read_request(client, connect["connection_url"])
    holder = SDJWTHolder(sd_jwt)
    holder.create_presentation(
        {"given_name": True, "degree": True},
        request.nonce,
        request.client_id,
        jwk.JWK.from_json(wallet.key.export_private()),
        "ES256",
    )
    answered = post_response(client, request, holder.sd_jwt_presentation)
    assert answered.status_code == 200, answered.get_data(as_text=True)
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


class Scene:
    def __init__(self, serve, **verification) -> None:
        self.served = serve()
        self.app = self.served.app
        self.clock = Clock(self.app)
        self.client = self.app.test_client()
        self.org: Org = make_org(self.app)
        self.wallet = Wallet()
        self.credential = issue(self.client, self.org)
        self.sd_jwt = receive(self.client, self.org, self.wallet, self.credential)
        response = self.client.post(
            "/verifications",
            json={
                "name": "Graduates",
                "schema_id": self.org.schema_id,
                "claims": ["given_name", "degree"],
                "trusted_issuers": [self.credential["issuer"]],
                **verification,
            },
            headers=self.org.headers,
        )
        assert response.status_code == 201, response.get_json()
        self.verification_id = response.get_json()["id"]
        self.apikey = make_apikey(self.app, self.org.id)

    def verified(self, customer: str = "graduate-1") -> dict:
        result = present(self.client, self.wallet, self.verification_id, customer, self.sd_jwt)
        assert result["status"] == "VERIFIED", result
        return result

    def revoke(self) -> None:
        response = self.client.post(
            f"/credentials/{self.credential['id']}/revoke", headers=self.org.headers
        )
        assert response.get_json()["status"] == "REVOKED"

    def check(self) -> int:
        with self.app.app_context():
            try:
                return retention_jobs.check_revocations()
            finally:
                db.session.remove()

    def lookup(self, customer: str = "graduate-1") -> dict:
        response = self.client.get(
            f"/verifications/{self.verification_id}/individuals/{customer}",
            headers={"apikey": self.apikey},
        )
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def stored(self, customer: str = "graduate-1") -> Individual:
        with self.app.app_context():
            row = db.session.scalar(db.select(Individual).where(Individual.customer_id == customer))
            db.session.expunge(row)
            db.session.remove()
            return row


def test_a_credential_revoked_after_the_decision_sets_revoked_at_and_verified_stays(serve):
    scene = Scene(serve)
    scene.verified()
    assert scene.lookup()["revoked_at"] is None
    assert scene.check() == 0  # checked at the decision: not due for a day

    scene.revoke()
    assert scene.clock.advance(hours=23) and scene.check() == 0  # still not due
    checked_at = scene.clock.advance(hours=1, seconds=1)
    assert scene.check() == 1

    looked_up = scene.lookup()
    assert looked_up["status"] == "VERIFIED"
    assert datetime.fromisoformat(looked_up["revoked_at"]) == checked_at
    assert looked_up["claims"] == {"given_name": "Ada", "degree": "Mathematics"}
    scene.clock.advance(days=2)
    assert scene.check() == 0  # revoked once; never checked again
    assert datetime.fromisoformat(scene.lookup()["revoked_at"]) == checked_at


def test_a_credential_still_valid_is_checked_again_and_left_alone(serve):
    scene = Scene(serve, status_check_hours=6)
    scene.verified()
    decided = scene.stored()
    assert decided.status_reference["uri"].startswith(scene.served.base)
    assert decided.status_checked_at == decided.verified_at

    later = scene.clock.advance(hours=6, seconds=1)
    assert scene.check() == 0
    checked = scene.stored()
    assert checked.status_checked_at == later
    assert checked.revoked_at is None and scene.lookup()["revoked_at"] is None


def test_an_unreadable_list_is_tried_again_next_time_and_revokes_nothing(serve):
    scene = Scene(serve)
    scene.verified()
    with scene.app.app_context():
        row = db.session.scalar(db.select(Individual))
        moved = {**row.status_reference, "uri": f"{scene.served.base}/issuers/nowhere/1"}
        db.session.execute(update(Individual).values(status_reference=moved))
        db.session.commit()
        db.session.remove()
    scene.revoke()
    later = scene.clock.advance(days=1, seconds=1)
    assert scene.check() == 0
    assert scene.stored().status_checked_at == later
    assert scene.lookup()["revoked_at"] is None


@pytest.mark.parametrize(
    "settings",
    [{"retention_days": 0}, {"status_check_hours": 0}],
    ids=["claims-not-kept", "re-check-off"],
)
def test_no_re_check_without_kept_claims_or_with_the_re_check_off(serve, settings):
    scene = Scene(serve, **settings)
    scene.verified()
    scene.revoke()
    scene.clock.advance(days=3)
    assert scene.check() == 0
    assert scene.lookup()["revoked_at"] is None
    if settings.get("retention_days") == 0:
        assert scene.lookup()["claims"] is None
        assert scene.stored().status_reference is None


def test_claims_deleted_by_retention_end_the_re_checks(serve):
    scene = Scene(serve, retention_days=1)
    scene.verified()
    scene.revoke()
    scene.clock.advance(days=1, seconds=1)
    with scene.app.app_context():
        assert retention_jobs.delete_expired_claims() == 1
        db.session.commit()
        db.session.remove()
    assert scene.check() == 0
    looked_up = scene.lookup()
    assert looked_up["claims"] is None and looked_up["revoked_at"] is None
    assert looked_up["status"] == "VERIFIED"


def test_the_revocation_is_delivered_as_a_signed_individual_revoked_event(serve):
    from webhooks.receiver import Receiver

    from app.jobs.queue import queue_of
    from app.webhooks import delivery

    receiver = Receiver()
    try:
        scene = Scene(serve)
        added = scene.client.post(
            "/webhooks/endpoints",
            json={"url": receiver.url, "events": ["individual.revoked"]},
            headers=scene.org.headers,
        )
        assert added.status_code == 201, added.get_json()
        secret = added.get_json()["secret"]
        scene.verified()
        scene.revoke()
        scene.clock.advance(days=1, seconds=1)
        assert scene.check() == 1
        with scene.app.app_context():
            delivery.enqueue_deliveries(delivery.relay())
            db.session.commit()
            db.session.remove()
        queue_of(scene.app).run_pending()

        [received] = receiver.received
        event = received.verified(secret)
        assert event["type"] == "individual.revoked"
        assert event["data"]["customer_id"] == "graduate-1"
        assert event["data"]["status"] == "VERIFIED"
        assert event["data"]["revoked_at"] == scene.lookup()["revoked_at"]
        assert "claims" not in event["data"]  # this endpoint did not opt in
    finally:
        receiver.close()
