"""The one exception this package raises."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class MdocError(Exception):
    """A device response was refused.

    ``reason`` is one plain English sentence that can be shown to the organization that asked
    for the verification. It never echoes presented text, so it is safe to display and log.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def refusing(reason: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a public entry point raise only MdocError, with ``reason`` for the unforeseen.

    Hostile CBOR can put any type anywhere; a shape the checks did not foresee must be a
    refusal, never a crash. The cause stays chained for logs.
    """

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return function(*args, **kwargs)
            except MdocError:
                raise
            except Exception as exc:
                raise MdocError(reason) from exc

        return wrapper

    return decorate
