"""Instances are stateless: two of them behind nginx behave as one service.

Every request here is a fresh connection, so nginx spreads them over both instances; each
carries an X-Request-ID, and the instances' request logs say which one answered.
"""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

from deploy_support import WORKERS, Answer, Deployment, loopback_client, post_json, send
from sqlalchemy import text
from support.race import all_at_once

from bench import presenting

VOUCHER_ATTEMPTS = 30
VOUCHER_LIMIT = 10  # the documented default: 10 tries a minute per client IP
PARALLEL_OPENS = 64
LOAD_THREADS = 8
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def both_answered(deployment: Deployment, answers: list[Answer]) -> None:
    counts = deployment.answered_by({a.request_id for a in answers})
    assert all(counts.values()), f"nginx sent all of them to one instance: {counts}"


def open_individual(deployment: Deployment, customer_id: str) -> Answer:
    return post_json(
        deployment.base,
        "/verifications/individuals",
        {"customer_id": customer_id, "verification_id": deployment.verification_id},
    )


def individuals_named(deployment: Deployment, customer_ids: list[str]) -> set[str]:
    with deployment.engine.connect() as connection:
        rows = connection.execute(
            text("SELECT customer_id FROM individuals WHERE customer_id = ANY(:ids)"),
            {"ids": customer_ids},
        )
        return {row.customer_id for row in rows}


def test_the_voucher_limit_is_one_count_across_instances(deployment):
    client = loopback_client()  # nginx passes it on as X-Forwarded-For, the instances believe it

    def attempt(index: int) -> Answer:
        return post_json(
            deployment.base,
            "/vouchers/exchange",
            {"code": f"vv_guess{index}"},
            headers=deployment.staff(),
            source=client,
        )

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(attempt, range(VOUCHER_ATTEMPTS)))
    statuses = [a.status for a in answers]
    assert statuses.count(404) == VOUCHER_LIMIT, statuses
    assert statuses.count(429) == VOUCHER_ATTEMPTS - VOUCHER_LIMIT, statuses
    both_answered(deployment, answers)
    # Another client has its own budget: the count is per client, not per nginx.
    other = post_json(
        deployment.base,
        "/vouchers/exchange",
        {"code": "vv_other"},
        headers=deployment.staff(),
        source=loopback_client(),
    )
    assert other.status == 404, other.body


def test_the_connect_link_is_the_same_whichever_instance_answers(deployment):
    opened = open_individual(deployment, f"link-{uuid.uuid4()}")
    assert opened.status == 201, opened.body
    path = f"/verifications/{opened.json()['id']}/connect"
    answers = [send(deployment.base, "GET", path) for _ in range(8)]
    answers += [send(instance.base, "GET", path) for instance in deployment.instances]
    assert {a.status for a in answers} == {200}
    links = {a.json()["connection_url"] for a in answers}
    assert len(links) == 1, links
    # The link names the deployment (nginx), not the instance that made it.
    query = parse_qs(urlsplit(next(iter(links))).query)
    # By value the link names where to answer; by reference, where to fetch the request.
    wallet_uri = (query.get("request_uri") or query["response_uri"])[0]
    assert wallet_uri.startswith(deployment.base + "/oid4vp/"), wallet_uri
    both_answered(deployment, answers)


def test_parallel_opens_split_across_instances_make_one_individual(deployment):
    customer_id = f"parallel-{uuid.uuid4()}"
    answers = all_at_once(PARALLEL_OPENS, lambda _: open_individual(deployment, customer_id))
    statuses = sorted(a.status for a in answers)
    assert statuses == [200] * (PARALLEL_OPENS - 1) + [201], statuses
    assert len({a.json()["id"] for a in answers}) == 1
    assert individuals_named(deployment, [customer_id]) == {customer_id}
    with deployment.engine.connect() as connection:
        count = connection.scalar(
            text("SELECT count(*) FROM individuals WHERE customer_id = :id"), {"id": customer_id}
        )
    assert count == 1
    both_answered(deployment, answers)


def wallet_response(deployment: Deployment, connect_on, fetch_on) -> tuple[str, str, dict]:
    """A person opens the page (the link from ``connect_on``), the wallet reads the request
    (fetched from ``fetch_on`` when the link passes it by reference) and makes its response;
    the individual, where to post, the form."""
    opened = open_individual(deployment, f"present-{uuid.uuid4()}")
    individual_id = opened.json()["id"]
    connected = send(connect_on.base, "GET", f"/verifications/{individual_id}/connect")
    assert connected.status == 200, connected.body
    link = connected.json()["connection_url"]
    claims = presenting.carried_request(link)
    if claims is None:
        request_object = send(fetch_on.base, "GET", presenting.request_path(link))
        assert request_object.status == 200, request_object.body
        claims = presenting.request_claims(request_object.body.decode("ascii"))
    path, form = presenting.response(presenting.issue(), claims)
    return individual_id, path, form


def test_a_presentation_is_accepted_by_either_instance_and_only_once(deployment):
    first, second = deployment.instances
    for receiver, other in ((first, second), (second, first)):
        individual_id, path, form = wallet_response(deployment, other, receiver)
        accepted = send(receiver.base, "POST", path, urlencode(form), FORM)
        assert accepted.status == 200, accepted.body
        assert "redirect_uri" in accepted.json()
        status = send(deployment.base, "GET", f"/verifications/{individual_id}/verify")
        assert status.json()["status"] == "VERIFIED", status.body

        replayed = send(other.base, "POST", path, urlencode(form), FORM)
        assert (replayed.status, replayed.json()["code"]) == (400, "ALREADY_ANSWERED")
        again = send(receiver.base, "POST", path, urlencode(form), FORM)
        assert (again.status, again.json()["code"]) == (400, "ALREADY_ANSWERED")


@dataclass(frozen=True)
class Outcome:
    customer_id: str
    status: int  # 0: no answer at all
    request_id: str

    @property
    def acknowledged(self) -> bool:
        return self.status in (200, 201)


class Writer:
    """Threads opening individuals through nginx, one new customer id per request, until told
    to stop; what was acknowledged (2xx) and what was not, in order."""

    def __init__(self, deployment: Deployment, prefix: str) -> None:
        self.deployment = deployment
        self.prefix = prefix
        self.lock = threading.Lock()
        self.outcomes: list[Outcome] = []  # in the order they were answered
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(n,)) for n in range(LOAD_THREADS)]

    def run(self, thread: int) -> None:
        number = 0
        while not self.stopping.is_set():
            customer_id = f"{self.prefix}-{thread}-{number}"
            number += 1
            try:
                answer = open_individual(self.deployment, customer_id)
                outcome = Outcome(customer_id, answer.status, answer.request_id)
            except OSError:
                outcome = Outcome(customer_id, 0, "")
            with self.lock:
                self.outcomes.append(outcome)

    def __enter__(self) -> Writer:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join()

    def count(self) -> int:
        with self.lock:
            return len(self.outcomes)

    def wait_for(self, total: int) -> None:
        """Until ``total`` requests have been answered (or failed), whatever the time."""
        while self.count() < total:
            time.sleep(0.01)


def wait_for_new_workers(instance, before: set[int]) -> None:
    """Until every old worker is gone and new ones took their place (a guard, not a timing)."""
    deadline = time.monotonic() + 120
    while instance.workers() & before or len(instance.workers()) < WORKERS:
        assert time.monotonic() < deadline, f"gunicorn kept {instance.workers()} after SIGHUP"
        time.sleep(0.05)


def test_a_graceful_restart_drops_no_request(deployment):
    instance = deployment.instances[1]
    before = instance.workers()
    assert len(before) == WORKERS
    with Writer(deployment, f"reload-{uuid.uuid4()}") as writer:
        writer.wait_for(30)
        instance.reload()
        wait_for_new_workers(instance, before)
        reloaded_at = writer.count()
        writer.wait_for(reloaded_at + 40)
    assert [o for o in writer.outcomes if not o.acknowledged] == []
    acknowledged = [o.customer_id for o in writer.outcomes]
    assert individuals_named(deployment, acknowledged) == set(acknowledged)
    # The new workers took their share once the old ones were gone.
    after = {o.request_id for o in writer.outcomes[reloaded_at:]}
    assert deployment.answered_by(after)[instance.name] > 0


def test_killing_an_instance_under_load_loses_no_acknowledged_write(deployment):
    victim, survivor = deployment.instances
    with Writer(deployment, f"kill-{uuid.uuid4()}") as writer:
        writer.wait_for(30)
        victim.kill()
        killed_at = writer.count()
        writer.wait_for(killed_at + 60)
    acknowledged = [o.customer_id for o in writer.outcomes if o.acknowledged]
    assert individuals_named(deployment, acknowledged) == set(acknowledged)
    # Only a request the killed instance was answering can fail (nginx does not resend a POST
    # that reached an instance): at most one per client thread, each a 502 from nginx.
    failed = [o for o in writer.outcomes if not o.acknowledged]
    assert len(failed) <= LOAD_THREADS, failed
    assert {o.status for o in failed} <= {502}, failed
    # nginx keeps answering, from the instance left: the last 40 writes all went through.
    last = writer.outcomes[-40:]
    assert all(o.acknowledged for o in last), last
    assert deployment.answered_by({o.request_id for o in last}) == {
        victim.name: 0,
        survivor.name: 40,
    }
    deployment.restart(victim)
