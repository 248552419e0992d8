"""The DIDComm jobs: handle a message a wallet sent, deliver a message to a wallet's mediator.

Both wait on servers that anyone who sends us a message may name (a presentation's issuer
keys and status lists, the mediator in the sender's DID), so both run on the DIDComm queue of
their own, never in the web request that received the message and never on the threads that
deliver organizations' webhooks: a flood naming a tarpit can hold the DIDComm threads only.

Sending is bounded twice more, since a destination is the sender's choice:

- **Per host:** at most ``sends_per_host`` sends to one host are in flight at once in a worker
  process; a send that finds its host busy waits in the queue (``HOST_BUSY_DELAY``) without
  using up an attempt, so one slow host never holds every DIDComm thread.
- **A destination that never answered** (no connection, or no status line before the
  deadline) is given up on after ``silent_attempts`` tries instead of ``attempts``, and while
  its host has not answered since, each attempt ends after ``silent_timeout`` seconds. A host
  that answers, even with an error status, is tried in full again.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from app import jobs
from app.didcomm_agent import operations, settings
from app.trust.errors import AddressRefused, FetchError
from app.trust.fetch import Fetcher, TTLCache

log = logging.getLogger(__name__)

# Seconds a send whose host already has its share of sends in flight waits before it looks
# again (it keeps its attempt).
HOST_BUSY_DELAY = 2.0
# How long a host that never answered is remembered as silent (seconds), and how many such
# hosts a worker process remembers.
SILENT_MEMORY_SECONDS = 600.0
SILENT_MEMORY_ENTRIES = 10_000


@jobs.job(name=operations.HANDLE_JOB, queue=jobs.DIDCOMM)
def handle(raw: str) -> None:
    operations.handle(base64.b64decode(raw))


@jobs.job(name=operations.DELIVER_JOB, queue=jobs.DIDCOMM)
def deliver(url: str, body: str, attempt: int) -> None:
    """POST one encrypted message; on failure try again later, up to the configured attempts
    (fewer for a destination that never answered).

    Sent through the outbound fetcher: its address rules (no loopback or private addresses
    outside development), deadline and answer cap hold for a mediator a holder's DID names as
    for any URL a credential names."""
    config = settings.current()
    host = host_of(url)
    with sending_slot(host, config.sends_per_host) as slot:
        if not slot:
            jobs.enqueue(operations.DELIVER_JOB, url, body, attempt, delay=HOST_BUSY_DELAY)
            return
        silent_before = _silent.get(host) is not None
        timeout = config.silent_timeout if silent_before else config.timeout
        fetcher = Fetcher(timeout=timeout, allow_private=config.allow_private)
        headers = {"Content-Type": operations.MEDIA_TYPE}
        try:
            answer = fetcher.post(url, body.encode("utf-8"), headers, body_limit=200)
        except AddressRefused as exc:
            # A mediator at a loopback or private address is never reached outside
            # development: trying again would change nothing.
            log.warning("didcomm message to %r not sent: %r", url, exc.reason)
            return
        except FetchError as exc:
            _silent.set(host, True, SILENT_MEMORY_SECONDS)
            _try_again(url, body, attempt, exc.reason, config.silent_attempts)
            return
    _silent.clear_key(host)  # it answered: tried in full again from now on
    if not 200 <= answer.status < 300:
        _try_again(url, body, attempt, f"answered {answer.status}", config.attempts)


def _try_again(url: str, body: str, attempt: int, problem: str, attempts: int) -> None:
    attempt += 1
    if attempt >= attempts:
        log.warning("didcomm message to %r given up after %d attempts: %r", url, attempt, problem)
        return
    log.info("didcomm message to %r not delivered (%r); trying again", url, problem)
    jobs.enqueue(operations.DELIVER_JOB, url, body, attempt, delay=operations.retry_delay(attempt))


def host_of(url: str) -> str:
    """The destination a per-host bound counts: host and port, as the URL names them."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{(parts.hostname or '').lower()}:{port or parts.scheme}"


class _Silent(TTLCache):
    def clear_key(self, key: str) -> None:
        with self._lock:
            self._drop(key)


# Hosts that did not answer their last send, per worker process.
_silent = _Silent(max_entries=SILENT_MEMORY_ENTRIES)
_in_flight: dict[str, int] = {}
_in_flight_lock = threading.Lock()


@contextmanager
def sending_slot(host: str, bound: int) -> Iterator[bool]:
    """One of the ``bound`` sends to ``host`` this process may have in flight, or False."""
    with _in_flight_lock:
        taken = _in_flight.get(host, 0)
        if taken >= bound:
            granted = False
        else:
            _in_flight[host] = taken + 1
            granted = True
    try:
        yield granted
    finally:
        if granted:
            with _in_flight_lock:
                left = _in_flight[host] - 1
                if left:
                    _in_flight[host] = left
                else:
                    del _in_flight[host]
