"""The voucher throttle holds per client IP for the whole deployment, not per worker.

By default the count lives in the service's database, which every gunicorn worker (and every
instance) shares; ``RATELIMIT_STORAGE_URI`` may move it to Redis.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from factories import make_staff
from hardening_support import sign_in, submit
from served import flask, prepare, served, service_env

ATTEMPTS = 30
LIMIT = 10  # the documented default: 10 tries a minute per IP


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("throttle")
    env = service_env(f"sqlite:///{tmp / 'served.sqlite3'}")
    prepare(env)
    flask(env, "users", "create", "--email", "guesser@example.test")
    flask(env, "orgs", "create", "--name", "Guesser", "--owner-email", "guesser@example.test")
    token = json.loads(flask(env, "tokens", "create", "--email", "guesser@example.test"))["token"]
    with served(env, tmp / "server.log", workers=2) as service:
        yield service, token


def test_two_gunicorn_workers_share_one_budget_per_ip(deployment):
    service, token = deployment

    def attempt(index: int) -> int:
        # A fresh connection each time, several at once, so both workers take requests.
        response = requests.post(
            service.url("/vouchers/exchange"),
            json={"code": f"vv_guess{index}"},
            headers={"Authorization": f"Bearer {token}", "Connection": "close"},
            timeout=30,
        )
        return response.status_code

    with ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(attempt, range(ATTEMPTS)))
    assert statuses.count(404) == LIMIT, statuses
    assert statuses.count(429) == ATTEMPTS - LIMIT, statuses


def test_two_instances_on_one_database_share_one_budget(app, make_app):
    first = make_app(VOUCHER_EXCHANGE_LIMIT="3/minute", RATELIMIT_STORAGE_URI="")
    second = make_app(VOUCHER_EXCHANGE_LIMIT="3/minute", RATELIMIT_STORAGE_URI="")
    staff = make_staff(app)
    with first.app_context():
        first.extensions["rate_limiter"].reset()
    statuses = [
        instance.test_client()
        .post(
            "/vouchers/exchange",
            json={"code": "vv_x"},
            headers=staff.headers(),
            environ_base={"REMOTE_ADDR": "192.0.2.77"},
        )
        .status_code
        for instance in (first, second, first, second)
    ]
    assert statuses == [404, 404, 404, 429]
    other_ip = first.test_client().post(
        "/vouchers/exchange",
        json={"code": "vv_x"},
        headers=staff.headers(),
        environ_base={"REMOTE_ADDR": "192.0.2.78"},
    )
    assert other_ip.status_code == 404
    with first.app_context():
        first.extensions["rate_limiter"].reset()


def test_the_dashboard_form_and_the_api_draw_on_one_budget_in_the_database(app, make_app):
    served_app = make_app(VOUCHER_EXCHANGE_LIMIT="3/minute", RATELIMIT_STORAGE_URI="")
    staff = make_staff(app)
    browser = served_app.test_client()
    sign_in(browser, staff.token)
    with served_app.app_context():
        served_app.extensions["rate_limiter"].reset()
    page = submit(browser, "/dashboard/plan/voucher", {"code": "vv_x"})
    api = served_app.test_client()
    first = api.post("/vouchers/exchange", json={"code": "vv_x"}, headers=staff.headers())
    second = submit(browser, "/dashboard/plan/voucher", {"code": "vv_x"})
    third = api.post("/vouchers/exchange", json={"code": "vv_x"}, headers=staff.headers())
    assert [page.status_code < 429, first.status_code, second.status_code < 429] == [
        True,
        404,
        True,
    ]
    assert third.status_code == 429
    with served_app.app_context():
        served_app.extensions["rate_limiter"].reset()
