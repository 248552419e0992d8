"""/vouchers/exchange: single use, per-IP throttle (429), 404 unknown, 409 conflicts."""

from __future__ import annotations

import os

import pytest
from factories import make_staff
from support.race import all_at_once

from app.extensions import db
from app.identity.operations import create_user, issue_session_token
from app.organizations.models import Plan
from app.organizations.operations import create_organization
from app.vouchers.models import Voucher, VoucherRedemption
from app.vouchers.operations import mint_vouchers


def mint(app, plan: Plan = Plan.PRO, days: int = 30) -> str:
    with app.app_context():
        (code,) = mint_vouchers(plan, days, 1)
        db.session.commit()
    return code


def exchange(client, staff, code: str, **kwargs):
    return client.post("/vouchers/exchange", json={"code": code}, headers=staff.headers(), **kwargs)


def test_vouchers_exchange_puts_the_acting_organization_on_the_plan(app, client):
    staff = make_staff(app, plan=Plan.FREE)
    code = mint(app, Plan.PREMIUM_PLUS, 30)
    response = exchange(client, staff, code)
    assert response.status_code == 200
    body = response.get_json()
    assert body["id"] == staff.organization_id
    assert body["plan"] == "PREMIUM_PLUS"
    assert body["plan_expires_at"] is not None
    assert (
        client.post("/integrations", json={"name": "k"}, headers=staff.headers()).status_code == 201
    )


def test_voucher_codes_are_stored_only_as_hashes(app):
    code = mint(app)
    with app.app_context():
        assert db.session.query(Voucher).one().code_hash != code


def test_unknown_voucher_is_404(app, client):
    staff = make_staff(app, plan=Plan.FREE)
    response = exchange(client, staff, "vv_nope")
    assert response.status_code == 404
    assert response.get_json()["code"] == "NOT_FOUND"


def test_voucher_already_redeemed_is_409(app, client):
    code = mint(app)
    first = make_staff(app, plan=Plan.FREE)
    second = make_staff(app, "bob@example.test", plan=Plan.FREE, org_name="Bob's")
    assert exchange(client, first, code).status_code == 200
    response = exchange(client, second, code)
    assert response.status_code == 409
    assert response.get_json()["code"] == "ALREADY_REDEEMED"


def test_voucher_for_an_organization_already_on_a_paid_plan_is_409(app, client):
    staff = make_staff(app, plan=Plan.PRO)
    response = exchange(client, staff, mint(app))
    assert response.status_code == 409
    assert response.get_json()["code"] == "ALREADY_PAID"


def test_vouchers_exchange_is_throttled_per_ip_with_429_and_retry_after(app, client):
    staff = make_staff(app, plan=Plan.PRO)
    statuses = [exchange(client, staff, "vv_guess").status_code for _ in range(10)]
    assert statuses == [404] * 10
    throttled = exchange(client, staff, "vv_guess")
    assert throttled.status_code == 429
    assert throttled.get_json()["code"] == "RATE_LIMITED"
    assert int(throttled.headers["Retry-After"]) > 0
    # Another client IP has its own budget.
    other_ip = exchange(client, staff, "vv_guess", environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert other_ip.status_code == 404


def test_only_vouchers_exchange_is_throttled(app, client):
    staff = make_staff(app)
    for _ in range(15):
        assert client.get("/me", headers=staff.headers()).status_code == 200


def test_a_raw_x_forwarded_for_does_not_buy_a_fresh_budget(app, client):
    staff = make_staff(app)
    for index in range(10):
        client.post(
            "/vouchers/exchange",
            json={"code": "vv_guess"},
            headers={**staff.headers(), "X-Forwarded-For": f"1.2.3.{index}"},
        )
    response = client.post(
        "/vouchers/exchange",
        json={"code": "vv_guess"},
        headers={**staff.headers(), "X-Forwarded-For": "9.9.9.9"},
    )
    assert response.status_code == 429


def test_the_client_ip_comes_from_the_trusted_proxy_count(app, make_app):
    proxied = make_app(VOUCHER_EXCHANGE_LIMIT="3/minute", TRUSTED_PROXY_COUNT=1)
    staff = make_staff(app)
    client = proxied.test_client()

    def from_ip(ip: str) -> int:
        headers = {**staff.headers(), "X-Forwarded-For": ip}
        return client.post("/vouchers/exchange", json={"code": "vv_x"}, headers=headers).status_code

    assert [from_ip("203.0.113.1") for _ in range(4)] == [404, 404, 404, 429]
    assert from_ip("203.0.113.2") == 404
    # A client-supplied hop in front of the proxy's is ignored: the proxy's own entry counts.
    assert from_ip("198.51.100.7, 203.0.113.1") == 429


@pytest.mark.skipif(not os.environ.get("TEST_REDIS_URL"), reason="TEST_REDIS_URL not set")
def test_redis_storage_shares_one_count_between_instances(app, make_app):
    url = os.environ["TEST_REDIS_URL"]
    first = make_app(VOUCHER_EXCHANGE_LIMIT="3/minute", RATELIMIT_STORAGE_URI=url)
    second = make_app(VOUCHER_EXCHANGE_LIMIT="3/minute", RATELIMIT_STORAGE_URI=url)
    staff = make_staff(app)
    environ = {"REMOTE_ADDR": f"192.0.2.{os.getpid() % 250}"}
    with first.app_context():
        first.extensions["rate_limiter"].reset()
    statuses = []
    for instance in (first, second, first, second):
        response = instance.test_client().post(
            "/vouchers/exchange",
            json={"code": "vv_x"},
            headers=staff.headers(),
            environ_base=environ,
        )
        statuses.append(response.status_code)
    assert statuses == [404, 404, 404, 429]
    with first.app_context():
        first.extensions["rate_limiter"].reset()


def test_one_hundred_parallel_redemptions_of_one_code_let_exactly_one_succeed(app, make_app):
    racing = make_app(VOUCHER_EXCHANGE_LIMIT="1000/minute")
    code = mint(app)
    tokens = []
    with app.app_context():
        for index in range(100):
            user = create_user(f"racer{index}@example.test")
            create_organization(user, f"Racer {index}", Plan.FREE)
            tokens.append(issue_session_token(user, 1)[0])
        db.session.commit()

    def redeem(index: int) -> list[int]:
        client = racing.test_client()
        return [
            client.post(
                "/vouchers/exchange",
                json={"code": code},
                headers={"Authorization": f"Bearer {token}"},
            ).status_code
            for token in tokens[index::20]
        ]

    statuses = [status for batch in all_at_once(20, redeem) for status in batch]
    assert sorted(statuses) == [200] + [409] * 99
    with app.app_context():
        assert db.session.query(VoucherRedemption).count() == 1
        assert db.session.query(db.func.count()).select_from(VoucherRedemption).scalar() == 1
