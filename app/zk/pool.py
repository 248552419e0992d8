"""A bounded pool of worker processes for proof checks.

Checking one Longfellow proof takes 0.5-0.8 s of CPU and about 250 MiB. The job worker checks
proofs (``app.presentations.zk_checks``), never a web worker, and this pool keeps even that
off the job worker's own interpreter: ``workers`` processes of their own (each loads the pinned
circuits once), so the job worker's other queues (webhooks, DIDComm) are not held for a
proof's time. Processes are started with ``spawn`` (no copy of a threaded parent) and only when
the first proof arrives, so a deployment that never sees one never starts them. They run at a
lower CPU priority (``nice`` 10, in a scheduling group of their own: ``lower_priority``): where
they share cores with the web workers, a person's page is served first and a proof waits the
few milliseconds.

A proof not checked within ``timeout`` (a machine far past its capacity), or a worker that died
(out of memory, killed), raises ``ZkBusy``: the check is not a refusal and is tried again.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

from app.zk.backend import ProofCheck, verify_proof, warm
from app.zk.errors import ZkBusy

WORKER_NICENESS = 10
# About one proof's check on a loaded machine: how long a check that could not run waits.
RETRY_AFTER_SECONDS = 2


class VerificationPool:
    """``verify`` checks a proof in a worker process; ``ZkBusy`` when it could not."""

    def __init__(self, workers: int, timeout: float, yield_seconds: float = 0.0) -> None:
        self.workers = max(1, workers)
        self.timeout = timeout
        # Never so long that a proof could not be checked within the timeout after it.
        self.yield_seconds = max(0.0, min(yield_seconds, timeout / 2))
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None

    def verify(self, check: ProofCheck) -> str | None:
        """The proof's refusal reason, or None."""
        future = self._pool().submit(verify_when_quiet, check, self.yield_seconds)
        try:
            return future.result(timeout=self.timeout)
        except FutureTimeout:
            future.cancel()
            raise ZkBusy(RETRY_AFTER_SECONDS) from None
        except BrokenProcessPool:
            # A worker died: start afresh on the next check.
            self._reset()
            raise ZkBusy(RETRY_AFTER_SECONDS) from None

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
    lower_priority()
    warm()


def lower_priority() -> None:
    """``nice`` 10, and a scheduling group of its own at that niceness.

    Where the kernel groups processes by session for scheduling (Linux's autogroup, on by
    default), a process's ``nice`` weighs only against its own session: the proof processes,
    in the job worker's session, would otherwise take a whole session's share of the CPU from
    the web workers'. So each leaves its parent's session (``setsid``) and sets its group's
    niceness (``/proc/self/autogroup``); without autogroup only ``nice`` applies.
    """
    os.nice(max(0, WORKER_NICENESS - os.nice(0)))
    try:
        os.setsid()
        Path("/proc/self/autogroup").write_text(f"{WORKER_NICENESS}\n")
    except OSError:
        pass  # already a session leader, or no autogroup on this kernel


@functools.cache
def shared_pool(workers: int, timeout: float, yield_seconds: float = 0.0) -> VerificationPool:
    """One pool per process and setting: every app of the process shares its workers."""
    return VerificationPool(workers, timeout, yield_seconds)


# -- yielding to the pages ---------------------------------------------------------------------

# Others busy on more than this share of the machine's CPUs: a proof waits before it starts.
BUSY_SHARE = 0.5
# How often the machine is looked at while a proof waits, and the oldest look still trusted.
LOOK_SECONDS = 0.1
FRESH_SECONDS = 2.0


class _Look:
    """The machine's busy CPU time, this process's own, and when they were read."""

    last: tuple[float, float, float] | None = None


def verify_when_quiet(check: ProofCheck, yield_seconds: float) -> str | None:
    """``verify_proof``, once the rest of the machine leaves a CPU free, or after
    ``yield_seconds`` whatever it does.

    ``nice`` orders the scheduler's queue, but a proof running on a CPU the pages left idle for
    a moment still costs them: measured on a two-core host, a process at the lowest priority
    (``SCHED_IDLE``) spinning beside the status poll took 40 % of its rate, the caches and the
    host's cores being shared. So while other processes keep more than half of the machine's
    CPUs busy (a flood of page loads), a proof waits, a bounded time: pages first, and every
    proof is still checked within ``ZK_VERIFY_TIMEOUT``.
    """
    waited = 0.0
    while waited < yield_seconds and _others_busy() > BUSY_SHARE:
        time.sleep(LOOK_SECONDS)
        waited += LOOK_SECONDS
    try:
        return verify_proof(check)
    finally:
        _Look.last = _sample()


def _others_busy() -> float:
    """The share of the machine's CPUs other processes used since the last look (a fresh
    look of ``LOOK_SECONDS`` when that one is old); 0 where ``/proc`` cannot be read."""
    before = _Look.last
    if before is None or time.monotonic() - before[0] > FRESH_SECONDS:
        before = _sample()
        time.sleep(LOOK_SECONDS)
    now = _sample()
    _Look.last = now
    elapsed = now[0] - before[0]
    if elapsed <= 0:
        return 0.0
    others = (now[1] - before[1]) - (now[2] - before[2])
    return max(0.0, others) / (elapsed * (os.cpu_count() or 1))


def _sample() -> tuple[float, float, float]:
    """(monotonic seconds, the machine's busy CPU seconds, this process's CPU seconds)."""
    return time.monotonic(), _machine_busy_seconds(), time.process_time()


def _machine_busy_seconds() -> float:
    """user + nice + system + irq + softirq of ``/proc/stat``'s first line (steal, the time a
    hypervisor took, is not ours to yield to)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")
