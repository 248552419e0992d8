"""Concurrency tests: many callers released at one instant, each with its own client.

A barrier lines the threads up before any of them calls, so the calls really overlap; an
exception in a thread fails the test instead of vanishing with the thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def all_at_once(count: int, call: Callable[[int], T]) -> list[T]:
    """Run ``call(0)`` ... ``call(count - 1)`` in ``count`` threads released together; returns
    their results in completion order."""
    barrier = threading.Barrier(count)
    results: list[T] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run(index: int) -> None:
        try:
            barrier.wait()
            result = call(index)
        except BaseException as exc:  # handed to the test: raised below
            with lock:
                errors.append(exc)
            return
        with lock:
            results.append(result)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
