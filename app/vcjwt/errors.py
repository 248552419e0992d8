"""The one exception this package raises."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class VcJwtError(Exception):
    """A presentation or credential was refused.

    ``reason`` is one plain sentence that can be shown to the organization that asked for the
    verification. ``issuer`` is the issuer the credential names (or was resolved to), when the
    refusal came after it was read, so a caller can say which issuer it could not accept.
    """

    def __init__(self, reason: str, issuer: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.issuer = issuer


class IssuerUnresolved(VcJwtError):
    """The credential's issuer (``issuer``) could not be resolved to a key: a caller that pins
    its issuers may rather say that this issuer is not one it trusts."""


def refusing(reason: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a public entry point raise only VcJwtError, with ``reason`` for the unforeseen:
    hostile input must end in a refusal a caller can show, never in a crash."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return function(*args, **kwargs)
            except VcJwtError:
                raise
            except Exception as exc:
                raise VcJwtError(reason) from exc

        return wrapper

    return decorate
