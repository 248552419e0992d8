"""The DIDComm jobs: handle a message a wallet sent, deliver a message to a wallet's mediator.

Both wait on other servers (a presentation's issuer keys and status lists, the mediator), so
both run on the deliveries queue, never in the web request that received the message."""

from __future__ import annotations

import base64
import logging

from app import jobs
from app.didcomm_agent import operations, settings
from app.trust.errors import AddressRefused, FetchError
from app.trust.fetch import Fetcher

log = logging.getLogger(__name__)


@jobs.job(name=operations.HANDLE_JOB, queue=jobs.DELIVERIES)
def handle(raw: str) -> None:
    operations.handle(base64.b64decode(raw))


@jobs.job(name=operations.DELIVER_JOB, queue=jobs.DELIVERIES)
def deliver(url: str, body: str, attempt: int) -> None:
    """POST one encrypted message; on failure try again later, up to the configured attempts.

    Sent through the outbound fetcher: its address rules (no loopback or private addresses
    outside development), deadline and answer cap hold for a mediator a holder's DID names as
    for any URL a credential names."""
    config = settings.current()
    fetcher = Fetcher(timeout=config.timeout, allow_private=config.allow_private)
    headers = {"Content-Type": operations.MEDIA_TYPE}
    try:
        answer = fetcher.post(url, body.encode("utf-8"), headers, body_limit=200)
        problem = None if 200 <= answer.status < 300 else f"answered {answer.status}"
    except AddressRefused as exc:
        # A mediator at a loopback or private address is never reached outside development:
        # trying again would change nothing.
        log.warning("didcomm message to %r not sent: %r", url, exc.reason)
        return
    except FetchError as exc:
        problem = exc.reason
    if problem is None:
        return
    attempt += 1
    if attempt >= config.attempts:
        log.warning("didcomm message to %r given up after %d attempts: %r", url, attempt, problem)
        return
    log.info("didcomm message to %r not delivered (%r); trying again", url, problem)
    jobs.enqueue(operations.DELIVER_JOB, url, body, attempt, delay=operations.retry_delay(attempt))
