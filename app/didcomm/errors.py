"""Errors of the DIDComm protocol code: each carries a reason a person can read."""

from __future__ import annotations


class DidcommError(ValueError):
    """Base of every DIDComm protocol error; ``reason`` is the readable explanation."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PeerDidError(DidcommError):
    """A did:peer:2 that cannot be read or made."""


class PrismDidError(DidcommError):
    """A long-form did:prism that cannot be read, or a JWS its keys do not verify."""
