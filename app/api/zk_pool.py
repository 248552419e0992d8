"""The deployment's zero-knowledge verification pool, as the answer endpoints use it.

One pool per web process (``app.zk.shared_pool``, sized by ``ZK_VERIFY_WORKERS`` and
``ZK_VERIFY_QUEUE``), its admission slots shared by every web worker of the deployment on this
host (a directory named by the deployment's database, under the system's temporary
directory); None when the ``zk`` extra is not installed, so that nothing can be proven here
and a ZK verification is refused (503 ``NOT_CONFIGURED``).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import current_app

from app.errors import ApiError, NotConfigured
from app.zk import ProofCheck, VerificationPool, ZkBusy, available, shared_pool


class ZkPoolFull(ApiError):
    """Every slot of the pool is taken: the answer is refused at once, nothing consumed."""

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
        config["ZK_VERIFY_QUEUE"],
        float(config["ZK_VERIFY_TIMEOUT"]),
        slots_dir(str(config["SQLALCHEMY_DATABASE_URI"])),
    )


def slots_dir(database_url: str) -> Path:
    """Where the web workers of one deployment count their ZK answers: one name per database,
    so two deployments (or two test runs) on one host never share their slots."""
    name = hashlib.sha256(database_url.encode("utf-8")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"verity-zk-slots-{name}"


def required_pool() -> VerificationPool:
    pool = zk_pool()
    if pool is None:
        raise NotConfigured(
            "Zero-knowledge proofs are not configured on this deployment (install the zk extra)"
        )
    return pool


def verifier(pool: VerificationPool) -> Callable[[ProofCheck], str | None]:
    """The context's proof check: the pool's, its ``ZkBusy`` the API's 429 (on every
    channel, direct_post included: nothing is consumed before the decision)."""

    def verify(check: ProofCheck) -> str | None:
        try:
            return pool.verify(check)
        except ZkBusy as busy:
            raise ZkPoolFull(busy.retry_after) from None

    return verify


@contextmanager
def admitted(pool: VerificationPool) -> Iterator[None]:
    """A slot of the pool for the answer being read, or 429 ``ZK_BUSY`` at once."""
    try:
        with pool.admit():
            yield
    except ZkBusy as busy:
        raise ZkPoolFull(busy.retry_after) from None
