"""A bounded pool of worker processes for proof checks, off the web worker.

Checking one Longfellow proof takes 0.5-0.8 s of CPU and about 250 MiB. Done in the web
worker it would hold the interpreter (and a sync worker) for that long, and a flood of answers
would stall every person's page. So proofs are checked in ``workers`` processes of their own
(each loads the pinned circuits once), and at most ``workers + queue`` checks are admitted at a
time per web process: one more is refused at once with ``ZkBusy`` (the API's 429 with
``Retry-After``), never queued without bound and never a 5xx. The web thread that waits holds
no CPU. Processes are started with ``spawn`` (no copy of a threaded parent) and only when the
first proof arrives, so a deployment that never sees one never starts them. The workers run
at a lower CPU priority (``nice`` 10): where they share cores with the web workers, a person's
page is served first and a proof waits the few milliseconds.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import get_context

from app.zk.backend import ProofCheck, verify_proof, warm
from app.zk.errors import ZkBusy

WORKER_NICENESS = 10
# About one proof's check on a loaded machine: what a refused client is told to wait.
RETRY_AFTER_SECONDS = 2


class VerificationPool:
    """``verify`` checks a proof in a worker process, or raises ``ZkBusy`` when full."""

    def __init__(self, workers: int, queue: int, timeout: float) -> None:
        self.workers = max(1, workers)
        self.capacity = self.workers + max(0, queue)
        self.timeout = timeout
        self._slots = threading.BoundedSemaphore(self.capacity)
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._admitted = threading.local()

    @contextmanager
    def admit(self) -> Iterator[None]:
        """Hold one slot for the answer being read, or raise ``ZkBusy`` at once.

        Taken at the answer endpoint's door, before a 2 MiB body is read; ``verify`` inside
        uses it rather than taking another.
        """
        if not self._slots.acquire(blocking=False):
            raise ZkBusy(self.retry_after)
        self._admitted.depth = getattr(self._admitted, "depth", 0) + 1
        try:
            yield
        finally:
            self._admitted.depth -= 1
            self._slots.release()

    def verify(self, check: ProofCheck) -> str | None:
        """The proof's refusal reason, or None; in this thread's slot, or a new one."""
        if getattr(self._admitted, "depth", 0):
            return self._run(check)
        with self.admit():
            return self._run(check)

    def _run(self, check: ProofCheck) -> str | None:
        future = self._pool().submit(verify_proof, check)
        try:
            return future.result(timeout=self.timeout)
        except FutureTimeout:
            future.cancel()
            raise ZkBusy(self.retry_after) from None
        except BrokenProcessPool:
            # A worker died (out of memory, killed): start afresh on the next answer.
            self._reset()
            raise ZkBusy(self.retry_after) from None

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(RETRY_AFTER_SECONDS * self.capacity / self.workers))

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=get_context("spawn"),
                    initializer=_start_worker,
                )
            return self._executor

    def _reset(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        self._reset()


def _start_worker() -> None:
    """A worker process: below the web workers' priority, the pinned circuits loaded."""
    os.nice(max(0, WORKER_NICENESS - os.nice(0)))
    warm()


@functools.cache
def shared_pool(workers: int, queue: int, timeout: float) -> VerificationPool:
    """One pool per web process and setting: every app of the process shares its workers."""
    return VerificationPool(workers, queue, timeout)
