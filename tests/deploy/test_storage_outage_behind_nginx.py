"""PostgreSQL unreachable behind nginx: every answer is still the service's own, and the
service answers again as soon as the database is back.

nginx must not take an instance's 502 STORAGE_UNAVAILABLE for a broken instance: marked down,
every request (writes, pages, /healthz) would get nginx's own 502 until the marks expire, long
after the database is back. The instances reach PostgreSQL through a TCP proxy of the test's
own (the machine's server serves other runs too): stopping the proxy is the outage.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from deploy_support import (
    Answer,
    Deployment,
    post_json,
    send,
    two_instances_behind_nginx,
    why_skipped,
)
from support.outage_proxy import OutageProxy

OUTAGE_ROUNDS = 8  # every kind of request, eight times over, while the database is away
PEOPLE_PAGE = "try again in a moment"


@dataclass
class Outage:
    deployment: Deployment
    database: OutageProxy
    individual_id: str


@pytest.fixture(scope="module")
def outage(tmp_path_factory) -> Iterator[Outage]:
    reason = why_skipped()
    if reason:
        pytest.skip(reason)
    database = OutageProxy.in_front_of(os.environ["TEST_DATABASE_URL"])
    database.start()
    try:
        workdir = tmp_path_factory.mktemp("outage")
        with two_instances_behind_nginx(workdir, database.url_through) as deployment:
            opened = open_individual(deployment)
            assert opened.status == 201, opened.body
            yield Outage(deployment, database, opened.json()["id"])
    finally:
        if database.listener is not None:
            database.stop()


def open_individual(deployment: Deployment) -> Answer:
    return post_json(
        deployment.base,
        "/verifications/individuals",
        {"customer_id": f"outage-{uuid.uuid4()}", "verification_id": deployment.verification_id},
    )


def requests_of_every_kind(outage: Outage) -> dict[str, Callable[[], Answer]]:
    """What clients send: the JSON API (reads and writes), the person's page, the probes."""
    deployment, individual = outage.deployment, outage.individual_id
    base = deployment.base
    return {
        "GET /me": lambda: send(base, "GET", "/me", headers=deployment.staff()),
        "GET connect": lambda: send(base, "GET", f"/verifications/{individual}/connect"),
        "GET verify": lambda: send(base, "GET", f"/verifications/{individual}/verify"),
        "POST individuals": lambda: open_individual(deployment),
        "person's page": lambda: send(
            base, "GET", f"/i/{individual}", headers={"Accept": "text/html"}
        ),
        "GET /healthz": lambda: send(base, "GET", "/healthz"),
        "GET /readyz": lambda: send(base, "GET", "/readyz"),
    }


def json_body(answer: Answer) -> object:
    if not answer.headers.get("Content-Type", "").startswith("application/json"):
        return None
    return answer.json()


def retry_after(answer: Answer) -> int:
    value = answer.headers.get("Retry-After", "")
    return int(value) if value.isdigit() else 0


def the_service_during_an_outage(kind: str, answer: Answer) -> bool:
    """What the service itself answers while its database cannot be reached."""
    if kind == "GET /healthz":  # liveness never touches the database
        return answer.status == 200 and json_body(answer) == {"status": "ok"}
    if kind == "GET /readyz":
        body = json_body(answer)
        return answer.status == 503 and isinstance(body, dict) and body["code"] == "NOT_READY"
    if kind == "person's page":
        return (
            answer.status == 502
            and answer.headers.get("Content-Type", "").startswith("text/html")
            and PEOPLE_PAGE in answer.body.decode("utf-8", "replace")
            and retry_after(answer) > 0
        )
    body = json_body(answer)
    return (
        answer.status == 502
        and isinstance(body, dict)
        and body == {"error": body.get("error"), "code": "STORAGE_UNAVAILABLE"}
        and isinstance(body["error"], str)
        and retry_after(answer) > 0
    )


def the_service_answering(kind: str, answer: Answer) -> bool:
    if kind == "POST individuals":
        return answer.status == 201
    if kind == "person's page":
        return answer.status == 200 and "text/html" in answer.headers.get("Content-Type", "")
    return answer.status == 200


def described(kind: str, answer: Answer) -> str:
    return f"{kind}: {answer.status} {answer.body[:120]!r}"


def test_every_answer_during_a_database_outage_is_the_services_own(outage):
    kinds = requests_of_every_kind(outage)
    outage.database.stop()
    try:
        answers = [(kind, ask()) for _ in range(OUTAGE_ROUNDS) for kind, ask in kinds.items()]
    finally:
        outage.database.start()
    # Then, at once, every kind of request is served again: no instance was left out.
    resumed = [(kind, ask()) for kind, ask in kinds.items()]

    strangers = [described(k, a) for k, a in answers if not the_service_during_an_outage(k, a)]
    assert strangers == [], "answers that are not the service's own during the outage"
    # nginx kept sending requests to both instances all along.
    counts = outage.deployment.answered_by({a.request_id for _, a in answers})
    assert all(counts.values()), counts
    failed = [described(k, a) for k, a in resumed if not the_service_answering(k, a)]
    assert failed == [], "not served right after the database came back"
