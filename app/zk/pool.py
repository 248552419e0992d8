"""A bounded pool of worker processes for proof checks, off the web worker.

Checking one Longfellow proof takes 0.5-0.8 s of CPU and about 250 MiB. Done in the web
worker it would hold the interpreter for that long, and a flood of answers would stall every
person's page. So proofs are checked in ``workers`` processes of their own (each loads the
pinned circuits once). The web worker that waits for one holds no CPU, but a sync worker
serves nothing else meanwhile: so at most ``workers + queue`` answers are admitted at once
on the whole host, counted by slots every web worker of the deployment shares (one lock file
per slot in ``slots_dir``, ``flock``: a slot held by a worker that dies is free again), and
one more is refused at once with ``ZkBusy`` (the API's 429 with ``Retry-After``), never queued
without bound and never a 5xx. Keep that number below the web workers', and the rest of them
serve pages whatever arrives. Processes are started with ``spawn`` (no copy of a threaded parent) and only when the
first proof arrives, so a deployment that never sees one never starts them. The workers run
at a lower CPU priority (``nice`` 10): where they share cores with the web workers, a person's
page is served first and a proof waits the few milliseconds.
"""

from __future__ import annotations

import fcntl
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
from pathlib import Path
from typing import IO

from app.zk.backend import ProofCheck, verify_proof, warm
from app.zk.errors import ZkBusy

WORKER_NICENESS = 10
# About one proof's check on a loaded machine: what a refused client is told to wait.
RETRY_AFTER_SECONDS = 2


class VerificationPool:
    """``verify`` checks a proof in a worker process, or raises ``ZkBusy`` when full."""

    def __init__(self, workers: int, queue: int, timeout: float, slots_dir: Path) -> None:
        self.workers = max(1, workers)
        self.capacity = self.workers + max(0, queue)
        self.timeout = timeout
        slots_dir.mkdir(parents=True, exist_ok=True)
        self._slot_paths = [slots_dir / f"slot-{index}" for index in range(self.capacity)]
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._admitted = threading.local()

    @contextmanager
    def admit(self) -> Iterator[None]:
        """Hold one slot for the answer being read, or raise ``ZkBusy`` at once.

        Taken at the answer endpoint's door, before a 2 MiB body is read; ``verify`` inside
        uses it rather than taking another.
        """
        slot = self._take_slot()
        if slot is None:
            raise ZkBusy(self.retry_after)
        self._admitted.depth = getattr(self._admitted, "depth", 0) + 1
        try:
            yield
        finally:
            self._admitted.depth -= 1
            slot.close()  # closing the file releases its lock

    def _take_slot(self) -> IO[bytes] | None:
        for path in self._slot_paths:
            handle = path.open("ab")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            return handle
        return None

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
def shared_pool(workers: int, queue: int, timeout: float, slots_dir: Path) -> VerificationPool:
    """One pool per web process and setting: every app of the process shares its workers."""
    return VerificationPool(workers, queue, timeout, slots_dir)
