"""The one exception this package raises."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class SdJwtError(Exception):
    """A presentation, token or key was refused.

    ``reason`` is one plain English sentence that can be shown to the organization that asked
    for the verification. It never echoes attacker-controlled text, so it is safe to display and
    to log as is.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def refusing(reason: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a public entry point raise only SdJwtError, with ``reason`` for the unforeseen.

    Callers refuse a presentation by catching one exception type; an unexpected failure on
    hostile input must be a refusal too, never a crash. The cause stays chained for logs.
    """

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return function(*args, **kwargs)
            except SdJwtError:
                raise
            except Exception as exc:
                raise SdJwtError(reason) from exc

        return wrapper

    return decorate
