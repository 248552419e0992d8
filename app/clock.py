"""The service's one source of time, replaceable in tests.

Link reuse windows, token expiries and plan periods all read this, so a test can move time
forward instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime


def _system_now() -> datetime:
    return datetime.now(UTC)


_source: Callable[[], datetime] = _system_now


def now() -> datetime:
    return _source()


def set_source(source: Callable[[], datetime] | None) -> None:
    """Install a clock (tests), or restore the system clock with ``None``."""
    global _source
    _source = source or _system_now
