"""Joining an organization twice at once: both joins succeed, one membership exists.

The contract calls joining twice harmless; two simultaneous joins (a double click, a retried
request) race to insert the same membership, and the loser must read the winner's.
"""

from __future__ import annotations

import uuid

from factories import make_staff
from sqlalchemy import func, select
from support.race import all_at_once

from app.extensions import db
from app.organizations.models import Membership

ROUNDS = 8


def test_two_simultaneous_joins_with_one_code_both_succeed(app):
    owner = make_staff(app, "owner@example.test")
    code = (
        app.test_client()
        .post(
            f"/organizations/{owner.organization_id}/codes",
            json={"days": 7},
            headers=owner.headers(),
        )
        .get_json()["code"]
    )
    for round_number in range(ROUNDS):
        newcomer = make_staff(app, f"newcomer{round_number}@example.test", org_name="Own")

        def join(_index: int, newcomer=newcomer):
            return app.test_client().post(
                "/organizations/join", json={"code": code}, headers=newcomer.headers()
            )

        answers = all_at_once(2, join)
        assert [a.status_code for a in answers] == [200, 200], [a.get_json() for a in answers]
        assert {a.get_json()["organization"]["id"] for a in answers} == {owner.organization_id}
        with app.app_context():
            count = db.session.scalar(
                select(func.count()).where(
                    Membership.user_id == uuid.UUID(newcomer.user_id),
                    Membership.organization_id == uuid.UUID(owner.organization_id),
                )
            )
            db.session.remove()
        assert count == 1
