"""What this package raises: a refusal with a reason, or a pool that is full."""

from __future__ import annotations


class ZkError(Exception):
    """A zero-knowledge answer was refused.

    ``reason`` is one plain English sentence for the organization that asked; it never echoes
    presented text, so it is safe to display and log (as ``app.mdoc.MdocError``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ZkUnavailable(Exception):
    """The optional ``pylongfellow`` library (the ``zk`` extra) is not installed."""


class ZkBusy(Exception):
    """A proof could not be checked now (the pool is past its capacity): later is fine.

    ``retry_after`` is the seconds to wait (about one check's time).
    """

    def __init__(self, retry_after: int) -> None:
        super().__init__("The zero-knowledge verification pool is full")
        self.retry_after = retry_after
