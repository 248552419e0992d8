"""The person's page under load: many people with the page open, each polled every 2 s.

bench/load/run.py (``make bench-load``) starts the service, seeds it and runs this file with
locust; it passes in the environment ``LOAD_VERIFICATION_ID`` (what the people are asked),
``LOAD_PRESENTING`` (the percentage of people who present), ``LOAD_SETTLE`` (seconds after the
last person arrived before requests are counted) and ``LOAD_REPORT`` (where to write what was
counted, as JSON).

One locust user is one person:

1. The organization's backend opens an individual for them (``POST /verifications/individuals``).
2. They open the page (``GET /i/<id>``); its status region polls the address in its
   ``hx-get`` every 2 s, as htmx does (``hx-trigger="every 2s"``), with htmx's headers.
3. A 204 changes nothing. A 200 replaces the region: the next poll goes to its new ``hx-get``,
   or nowhere when the page stopped polling (an outcome).
4. Some people present: after a few polls their wallet (bench/presenting.py, a holder and an
   issuer written on ``cryptography`` alone) fetches the request object behind the page's link
   and answers it (``direct_post``); their page must then show "Verified".
5. A person whose page stopped polling leaves, and a new person arrives (1 and 2 again), so
   the number of open pages stays the same.
"""

from __future__ import annotations

import html
import json
import os
import random
import re
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

from locust import FastHttpUser, events, task
from locust.exception import StopUser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for presenting.py

import presenting

POLL_SECONDS = 2  # the page's hx-trigger
PRESENT_AFTER_POLLS = (2, 10)  # a presenting person scans the code after this many polls
HX_GET = re.compile(r'hx-get="([^"]+)"')
WALLET_LINK = re.compile(r'id="open-wallet"[^>]*href="([^"]+)"')
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
# One name per kind of request, so the report has a line for each.
OPEN = "open      POST /verifications/individuals"
PAGE = "page      GET /i/{id}"
POLL = "poll      GET /i/{id}/status"
REQUEST = "wallet    GET /oid4vp/requests/{id}"
RESPONSE = "wallet    POST /oid4vp/responses/{id}"

VERIFICATION_ID = os.environ.get("LOAD_VERIFICATION_ID", "")
PRESENTING = float(os.environ.get("LOAD_PRESENTING", "10")) / 100
SETTLE = float(os.environ.get("LOAD_SETTLE", "10"))
REPORT = os.environ.get("LOAD_REPORT", "")
# One credential for the whole run: a wallet presents the same credential again and again,
# with a new key binding JWT for each request.
CREDENTIAL = presenting.issue()


class Counted:
    """Requests that began once every person had arrived and ``SETTLE`` seconds had passed."""

    def __init__(self) -> None:
        self.started = time.time()
        self.since: float | None = None
        self.latencies: dict[str, list[float]] = {}
        self.errors: dict[str, list[str]] = {}
        self.verified = 0
        self.arrived = 0
        self.requests = 0  # in the whole run, counted or not

    def request(self, name: str, response_time: float, exception: BaseException | None) -> None:
        self.requests += 1
        if self.since is None or time.time() - response_time / 1000 < self.since:
            return
        self.latencies.setdefault(name, []).append(response_time)
        if exception is not None:
            self.errors.setdefault(name, []).append(str(exception)[:300])

    def write(self, path: str) -> None:
        Path(path).write_text(
            json.dumps(
                {
                    "seconds": time.time() - self.since if self.since else 0,
                    "all_arrived_after": self.since - SETTLE - self.started if self.since else None,
                    "latencies_ms": self.latencies,
                    "errors": self.errors,
                    "verified": self.verified,
                    "arrived": self.arrived,
                    "requests": self.requests,
                }
            )
        )


counted = Counted()


@events.test_start.add_listener
def _started(**_: object) -> None:
    counted.started = time.time()


@events.spawning_complete.add_listener
def _all_arrived(user_count: int, **_: object) -> None:
    counted.since = time.time() + SETTLE


@events.request.add_listener
def _request(name: str, response_time: float, exception: BaseException | None, **_: object):
    counted.request(name, response_time, exception)


@events.quitting.add_listener
def _quitting(**_: object) -> None:
    if REPORT:
        counted.write(REPORT)


class Person(FastHttpUser):
    """Someone with the person's page open, and sometimes a wallet."""

    def on_start(self) -> None:
        # locust starts each second's new users at one instant, but people open their page at
        # any moment: each one waits a random part of a poll period first. Without it every
        # page polls on the same tick (measured: 400 requests in 0.2 s, then none for 0.7 s).
        time.sleep(random.uniform(0, POLL_SECONDS))
        self.arrive()

    def wait_time(self) -> float:
        """The page's htmx timer: a poll every ``POLL_SECONDS`` from the moment it loaded."""
        self.next_poll += POLL_SECONDS
        return max(0.0, self.next_poll - time.monotonic())

    def arrive(self) -> None:
        """A new customer: the backend opens their individual, they open the page."""
        self.poll_path: str | None = None
        self.present_after = (
            random.randint(*PRESENT_AFTER_POLLS) if random.random() < PRESENTING else None
        )
        self.polls = 0
        self.presented = False
        self.wallet_link: str | None = None
        body = {"customer_id": f"load-{uuid.uuid4()}", "verification_id": VERIFICATION_ID}
        with self.client.post(
            "/verifications/individuals", json=body, name=OPEN, catch_response=True
        ) as opened:
            if opened.status_code not in (200, 201):
                opened.failure(f"{opened.status_code}: {(opened.text or '')[:200]}")
                raise StopUser()
            individual_id = opened.json()["id"]
        self.page_path = f"/i/{individual_id}"
        with self.client.get(self.page_path, name=PAGE, catch_response=True) as page:
            if page.status_code != 200:
                page.failure(f"{page.status_code}")
                raise StopUser()
            self.read_region(page.text or "")
            self.next_poll = time.monotonic()
            if self.poll_path is None:
                page.failure("the page does not poll")
                raise StopUser()
        counted.arrived += 1

    def read_region(self, fragment: str) -> None:
        """What htmx takes from a swapped region: the next poll address, the wallet link."""
        polled = HX_GET.search(fragment)
        self.poll_path = html.unescape(polled.group(1)) if polled else None
        link = WALLET_LINK.search(fragment)
        if link:
            self.wallet_link = html.unescape(link.group(1))
        self.region = fragment

    @task
    def poll(self) -> None:
        if self.present_after is not None and self.polls == self.present_after:
            self.present()
        headers = {
            "HX-Request": "true",
            "HX-Trigger": "status",
            "HX-Target": "status",
            "HX-Current-URL": self.host + self.page_path,
        }
        with self.client.get(
            self.poll_path, headers=headers, name=POLL, catch_response=True
        ) as answer:
            self.polls += 1
            if answer.status_code == 204:
                return
            if answer.status_code != 200:
                answer.failure(f"{answer.status_code}")
                return
            self.read_region(answer.text or "")
            if self.presented:  # the region changed after the wallet answered: the outcome
                if self.poll_path is None and "Verified." in self.region:
                    counted.verified += 1
                else:
                    answer.failure(f"the page shows no success: {self.region[:300]}")
                self.poll_path = None
        if self.poll_path is None:  # the page stopped polling: this person is done
            self.arrive()

    def fetch_request(self) -> dict | None:
        """The Request Object a link passes by reference (signed deployments)."""
        request_path = presenting.request_path(self.wallet_link or "")
        with self.client.get(request_path, name=REQUEST, catch_response=True) as fetched:
            if fetched.status_code != 200:
                fetched.failure(f"{fetched.status_code}: {(fetched.text or '')[:200]}")
                return None
            return presenting.request_claims(fetched.text or "")

    def present(self) -> None:
        """The wallet on the person's phone answers the request behind the page's link."""
        self.presented = True
        if self.wallet_link is None:
            events.request.fire(
                request_type="GET",
                name=REQUEST,
                response_time=0,
                response_length=0,
                exception=LookupError("the page shows no wallet link"),
                context={},
            )
            return
        claims = presenting.carried_request(self.wallet_link) or self.fetch_request()
        if claims is None:
            return
        path, form = presenting.response(CREDENTIAL, claims)
        with self.client.post(
            path, data=urlencode(form), headers=FORM, name=RESPONSE, catch_response=True
        ) as answered:
            if answered.status_code != 200:
                answered.failure(f"{answered.status_code}: {(answered.text or '')[:200]}")
