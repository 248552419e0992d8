"""A settled subject takes no answer on any of its links.

A subject may hold several links at once: the reuse window hands out a new one while an older
one can still be answered in the wallet. Whichever link an answer comes through, the outcome
is decided under the subject's row lock after its own state and expiry are checked: an
answer to a VERIFIED subject, to a FAILED policy request or to an expired one gets the refusal
of a closed request (``400 ALREADY_ANSWERED`` / ``REQUEST_EXPIRED``) and changes nothing: no
attempt, no outcome, no webhook event. A FAILED individual still answers (it may retry).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from factories import make_apikey, make_staff, make_verification
from sqlalchemy import func, select
from support.race import all_at_once
from wallets import Issuer, WalletRequest, post_response, python_presentation, read_request

from app import clock
from app.errors import InvalidRequest
from app.extensions import db
from app.policies.models import PolicyRequest
from app.policies.operations import connect_policy
from app.presentations import operations as presentations
from app.presentations.decide import Decision
from app.verifications.models import PresentationAttempt
from app.web.links import links
from app.webhooks.models import WebhookEvent


@dataclass
class Subject:
    """An individual or a policy request, driven through the routes a backend and a wallet
    use; ``link()`` is what the person's page hands out now."""

    kind: str
    app: Any
    client: Any
    id: str
    token: str = ""
    headers: dict[str, str] | None = None

    def link(self) -> WalletRequest:
        if self.kind == "individual":
            connected = self.client.get(f"/verifications/{self.id}/connect")
            assert connected.status_code == 200, connected.get_json()
            return read_request(self.client, connected.get_json()["connection_url"])
        with self.app.test_request_context():
            _, request = connect_policy(self.token, 120, 600)
            db.session.commit()
            url = links().connection_url(request.id)
        return read_request(self.client, url)

    def second_link(self) -> tuple[WalletRequest, WalletRequest]:
        """Two links of the subject, both answerable: the first, and the one handed out once
        the first's reuse window passed."""
        first = self.link()
        later = clock.now() + timedelta(minutes=3)
        clock.set_source(lambda: later)
        second = self.link()
        clock.set_source(None)
        assert second.request_id != first.request_id
        return first, second

    def status(self) -> tuple[int, str | None]:
        if self.kind == "individual":
            response = self.client.get(f"/verifications/{self.id}/verify")
        else:
            response = self.client.get(f"/policy-requests/{self.id}/status", headers=self.headers)
        body = response.get_json()
        return response.status_code, body.get("status") or body.get("code")

    def attempts(self) -> int:
        with self.app.app_context():
            return db.session.scalar(select(func.count()).select_from(PresentationAttempt))

    def outcome_events(self) -> list[str]:
        """The webhook events written about the subject's outcome."""
        with self.app.app_context():
            return list(
                db.session.scalars(
                    select(WebhookEvent.type)
                    .where(
                        WebhookEvent.type.like("%.verified") | WebhookEvent.type.like("%.failed")
                    )
                    .order_by(WebhookEvent.sequence)
                )
            )


def open_subject(app, client, kind: str, **policy: Any) -> Subject:
    staff = make_staff(app)
    verification = make_verification(client, staff)
    # An endpoint, so that every outcome writes its webhook event.
    added = client.post(
        "/webhooks/endpoints", json={"url": "https://hooks.example.test/x"}, headers=staff.headers()
    )
    assert added.status_code == 201, added.get_json()
    if kind == "individual":
        opened = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-1", "verification_id": verification["id"]},
        ).get_json()
        return Subject(kind, app, client, opened["id"])
    headers = {"apikey": make_apikey(app, staff.organization_id)}
    created = client.post(
        "/policy-requests", json={"verification_id": verification["id"], **policy}, headers=headers
    ).get_json()
    return Subject(kind, app, client, created["id"], created["token"], headers)


def good(request: WalletRequest) -> str:
    return python_presentation(request, Issuer())


def bad(request: WalletRequest) -> str:
    return python_presentation(request, Issuer(), nonce="stale")


def refused(response, code: str) -> bool:
    return (response.status_code, response.get_json().get("code")) == (400, code)


@pytest.mark.parametrize("kind", ["individual", "policy"])
def test_a_verified_subject_refuses_an_answer_on_its_other_link(app, client, kind):
    subject = open_subject(app, client, kind)
    first, second = subject.second_link()
    assert post_response(client, first, good(first)).status_code == 200
    late = post_response(client, second, bad(second))
    assert refused(late, "ALREADY_ANSWERED"), late.get_json()
    assert subject.status() == (200, "VERIFIED")
    assert subject.attempts() == 1
    assert len(subject.outcome_events()) == 1
    # The refused link stays unanswered: its browser API request is refused the same way.
    assert refused(client.get(f"/oid4vp/dc-requests/{second.request_id}"), "ALREADY_ANSWERED")


def test_a_failed_policy_request_stays_failed_when_its_other_link_is_answered(app, client):
    subject = open_subject(app, client, "policy")
    first, second = subject.second_link()
    assert post_response(client, first, bad(first)).status_code == 200
    assert subject.status() == (200, "FAILED")
    late = post_response(client, second, good(second))
    assert refused(late, "ALREADY_ANSWERED"), late.get_json()
    assert subject.status() == (200, "FAILED")
    assert subject.attempts() == 1
    assert subject.outcome_events() == ["policy_request.failed"]


def test_a_failed_individual_may_still_answer_a_link_handed_out_before(app, client):
    """An individual's FAILED is not final (the README): the person tries again."""
    subject = open_subject(app, client, "individual")
    first, second = subject.second_link()
    assert post_response(client, first, bad(first)).status_code == 200
    assert post_response(client, second, good(second)).status_code == 200
    assert subject.status() == (200, "VERIFIED")
    assert subject.outcome_events() == ["individual.failed", "individual.verified"]


def test_an_expired_policy_request_stays_expired_when_its_link_is_answered(app, client):
    subject = open_subject(app, client, "policy", expires_in=1)
    request = subject.link()
    presentation = good(request)
    time.sleep(1.2)  # the policy request lapses; its link's own request is still open
    assert subject.status() == (410, "EXPIRED")
    late = post_response(client, request, presentation)
    assert refused(late, "REQUEST_EXPIRED"), late.get_json()
    assert subject.status() == (410, "EXPIRED")
    assert subject.attempts() == 0
    assert subject.outcome_events() == []


@pytest.mark.parametrize(
    ("kind", "answers"),
    [
        ("individual", (good, good)),
        ("policy", (good, good)),
        ("policy", (bad, good)),
    ],
)
def test_concurrent_answers_on_two_links_decide_one_outcome(app, client, kind, answers):
    subject = open_subject(app, client, kind)
    links_ = subject.second_link()
    answered = [answer(link) for answer, link in zip(answers, links_, strict=True)]

    def post(index: int) -> int:
        response = post_response(app.test_client(), links_[index], answered[index])
        assert response.status_code == 200 or refused(response, "ALREADY_ANSWERED")
        return response.status_code

    assert sorted(all_at_once(2, post)) == [200, 400]
    assert subject.attempts() == 1
    [event] = subject.outcome_events()
    assert event.endswith(subject.status()[1].lower())


@pytest.mark.parametrize("settle", ["failed", "expired"])
def test_the_outcome_is_decided_under_the_lock_whatever_was_read_before(app, client, settle):
    """An answer checked while the policy request was open, recorded after it settled (the
    window between deciding a presentation and recording it): the check under the row lock
    refuses it."""
    subject = open_subject(app, client, "policy")
    first, second = subject.second_link()
    with app.app_context():
        if settle == "failed":
            answered = presentations.consume(uuid.UUID(first.request_id))
            presentations.record(answered, Decision(False, "no"))
        else:
            policy = db.session.get(PolicyRequest, uuid.UUID(subject.id))
            policy.expires_at = clock.now() - timedelta(seconds=1)
        db.session.commit()
        late = presentations.consume(uuid.UUID(second.request_id))
        with pytest.raises(InvalidRequest) as refused_:
            presentations.record(late, Decision(True, issuer="i"))
        assert refused_.value.code == (
            "ALREADY_ANSWERED" if settle == "failed" else "REQUEST_EXPIRED"
        )
        db.session.rollback()
    assert subject.status() == ((200, "FAILED") if settle == "failed" else (410, "EXPIRED"))
    assert subject.attempts() == (1 if settle == "failed" else 0)
