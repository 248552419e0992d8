"""The transaction code limit holds under concurrency: at most five guesses are judged.

A guess is judged when its answer depends on whether it was right: a 200, or "Wrong tx_code".
Every other answer ("already used or no longer works", "not known") is the same for the right
code and a wrong one, so it tells a guesser nothing. On PostgreSQL, requests run side by side;
the limit must be decided by the row, not by what each request read before it wrote.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from issuance.issuance_support import Wallet, code_of, issue, make_org, offer_of
from sqlalchemy import select, text
from support.race import all_at_once

from app.extensions import db
from app.issuance.models import Credential
from app.issuance.wallet.token import MAX_TX_CODE_FAILURES

BURST = 24


def wrong_code(right: str) -> str:
    return "000000" if right != "000000" else "111111"


def judged(response) -> bool:
    if response.status_code == 200:
        return True
    return response.get_json()["error_description"].startswith("Wrong tx_code")


def failures_of(app, credential_id: str) -> int:
    with app.app_context():
        value = db.session.scalar(
            select(Credential.tx_code_failures).where(Credential.id == uuid.UUID(credential_id))
        )
        db.session.remove()
    return value


def offered_with_tx_code(app, client):
    org = make_org(app)
    credential = issue(client, org, tx_code=True)
    return org, credential, code_of(offer_of(client, credential))


def test_a_burst_of_wrong_guesses_is_judged_five_times_then_the_right_code_is_refused(
    app, client
) -> None:
    org, credential, code = offered_with_tx_code(app, client)
    wrong = wrong_code(credential["tx_code"])

    def guess(_index: int):
        return Wallet().token(app.test_client(), org, code, wrong)

    answers = all_at_once(BURST, guess)
    assert all(a.status_code == 400 for a in answers), [a.get_json() for a in answers]
    assert sum(judged(a) for a in answers) == MAX_TX_CODE_FAILURES
    assert failures_of(app, credential["id"]) == MAX_TX_CODE_FAILURES
    right = Wallet().token(client, org, code, credential["tx_code"])
    assert right.status_code == 400
    assert right.get_json()["error"] == "invalid_grant"


def test_a_burst_holding_the_right_code_judges_at_most_five_guesses(app, client) -> None:
    org, credential, code = offered_with_tx_code(app, client)
    wrong = wrong_code(credential["tx_code"])

    def guess(index: int):
        return Wallet().token(
            app.test_client(), org, code, credential["tx_code"] if index == 0 else wrong
        )

    answers = all_at_once(BURST, guess)
    assert sum(judged(a) for a in answers) <= MAX_TX_CODE_FAILURES
    assert sum(a.status_code == 200 for a in answers) <= 1
    assert failures_of(app, credential["id"]) <= MAX_TX_CODE_FAILURES


# -- the order fixed by a row lock (PostgreSQL) ------------------------------------------------


def waiting_on_credentials(app) -> int:
    """Requests blocked on a lock of this test schema's credentials table."""
    with app.app_context(), db.engine.connect() as connection:
        return connection.scalar(
            text(
                "SELECT count(DISTINCT a.pid) FROM pg_stat_activity a "
                "JOIN pg_locks l ON l.pid = a.pid "
                "WHERE l.relation = 'credentials'::regclass AND a.wait_event_type = 'Lock' "
                "AND a.pid <> pg_backend_pid()"
            )
        )


def wait_until_waiting(app, count: int) -> None:
    deadline = time.monotonic() + 30
    while waiting_on_credentials(app) < count:
        assert time.monotonic() < deadline, f"fewer than {count} requests reached the lock"
        time.sleep(0.02)


def queued_behind_a_row_lock(app, credential_id: str, calls: list) -> list:
    """Run ``calls`` while a transaction of the test holds the offer's row lock, each started
    once the one before waits at the row (so each has read the offer by then); release the
    lock and return their answers in call order."""
    answers: list = [None] * len(calls)

    def run(index: int) -> None:
        answers[index] = calls[index]()

    with app.app_context(), db.engine.connect() as holder:
        holder.execute(
            text("SELECT id FROM credentials WHERE id = :id FOR UPDATE"),
            {"id": uuid.UUID(credential_id)},
        )
        threads = []
        for index in range(len(calls)):
            thread = threading.Thread(target=run, args=(index,))
            thread.start()
            threads.append(thread)
            wait_until_waiting(app, index + 1)
        holder.rollback()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def needs_postgresql(app) -> None:
    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        pytest.skip("SQLite runs one writing transaction at a time: no request waits at a row")


def test_the_right_code_read_before_the_fifth_wrong_one_is_refused_after_it(app, client) -> None:
    """Four wrong codes; then the fifth and the right one both read the offer (four failures)
    and wait at the row, the fifth first. The fifth burns the code; the right one, judged
    after it, is refused. Before, the right one only checked that the code was unused, and got
    an access token."""
    needs_postgresql(app)
    org, credential, code = offered_with_tx_code(app, client)
    wrong, right = wrong_code(credential["tx_code"]), credential["tx_code"]
    for _ in range(MAX_TX_CODE_FAILURES - 1):
        assert judged(Wallet().token(client, org, code, wrong))
    fifth, late = queued_behind_a_row_lock(
        app,
        credential["id"],
        [
            lambda: Wallet().token(app.test_client(), org, code, wrong),
            lambda: Wallet().token(app.test_client(), org, code, right),
        ],
    )
    assert fifth.get_json()["error_description"] == (
        "Wrong tx_code too many times: the code no longer works"
    )
    assert late.status_code == 400, late.get_json()
    assert late.get_json()["error"] == "invalid_grant"
    assert not judged(late)
    assert failures_of(app, credential["id"]) == MAX_TX_CODE_FAILURES


def test_six_guesses_that_all_read_the_offer_first_are_not_all_judged(app, client) -> None:
    """Five wrong codes and the right one all read the offer before any is judged. In whatever
    order the row lets them through, at most five are judged; before, all six were (the five
    counted, and the right one got its token)."""
    needs_postgresql(app)
    org, credential, code = offered_with_tx_code(app, client)
    wrong = wrong_code(credential["tx_code"])
    guesses = [wrong] * MAX_TX_CODE_FAILURES + [credential["tx_code"]]
    answers = queued_behind_a_row_lock(
        app,
        credential["id"],
        [lambda g=g: Wallet().token(app.test_client(), org, code, g) for g in guesses],
    )
    assert sum(judged(a) for a in answers) <= MAX_TX_CODE_FAILURES
    assert failures_of(app, credential["id"]) <= MAX_TX_CODE_FAILURES
