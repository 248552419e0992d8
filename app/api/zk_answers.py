"""The doors of zero-knowledge answers, and the pool the job worker checks their proofs in.

A ZK answer is kept and answered at once (``app.presentations.zk_checks``): the web worker
never waits for a proof. Its door refuses, in this order and before the body is read: a
deployment without the ``zk`` extra (503 ``NOT_CONFIGURED``), a deployment whose checks
already wait at capacity (429 ``ZK_BUSY`` with ``Retry-After``: ``ZK_VERIFY_WORKERS`` +
``ZK_VERIFY_QUEUE``), and a client past its budget (``ZK_ANSWER_LIMIT``); then it reads up to
``ZK_MAX_ANSWER_BYTES`` where every other answer keeps ``MAX_CONTENT_LENGTH``.

The pool (``app.zk.shared_pool``) is one per process, sized by ``ZK_VERIFY_WORKERS``; None when
the extra is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from flask import current_app, request

from app import throttle
from app.errors import ApiError, NotConfigured
from app.presentations import zk_checks
from app.presentations.decide import Context
from app.zk import VerificationPool, ZkBusy, available, shared_pool


class ZkPoolFull(ApiError):
    """As many answers as the deployment checks at once already wait: this one is refused at
    once, nothing consumed."""

    status = 429
    code = "ZK_BUSY"

    def __init__(self, retry_after: int) -> None:
        super().__init__("Zero-knowledge proofs are being checked at capacity; retry shortly")
        self.headers = {"Retry-After": str(retry_after)}


def zk_pool() -> VerificationPool | None:
    if not available():
        return None
    config = current_app.config
    return shared_pool(
        config["ZK_VERIFY_WORKERS"],
        float(config["ZK_VERIFY_TIMEOUT"]),
        float(config["ZK_VERIFY_YIELD_SECONDS"]),
    )


def check_settings(
    config: Mapping[str, Any], trust_context: Callable[..., Context]
) -> zk_checks.ZkCheckSettings:
    """What the checks need (the application factory provides it): their bound, and the
    trust context of a decision, whose proofs this process's pool checks."""

    def context(audience: str, nonce: str, **binding: Any) -> Context:
        pool = zk_pool()
        return replace(
            trust_context(audience, nonce, **binding),
            zk_verify=pool.verify if pool is not None else None,
        )

    return zk_checks.ZkCheckSettings(
        capacity=max(1, config["ZK_VERIFY_WORKERS"]) + max(0, config["ZK_VERIFY_QUEUE"]),
        timeout=float(config["ZK_VERIFY_TIMEOUT"]),
        context=context,
    )


@contextmanager
def zk_door() -> Iterator[None]:
    """The checks of a ZK answer's door, cheapest first; inside, the answer is read and kept
    (``zk_checks.receive``), and a ``ZkBusy`` from there (a concurrent door took the last
    place) is the same 429 as a full deployment's."""
    if not available():
        raise NotConfigured(
            "Zero-knowledge proofs are not configured on this deployment (install the zk extra)"
        )
    try:
        zk_checks.refuse_when_full()
        throttle.count_zk_answer()
        request.max_content_length = current_app.config["ZK_MAX_ANSWER_BYTES"]
        yield
    except ZkBusy as busy:
        raise ZkPoolFull(busy.retry_after) from None
