"""Errors of the trust package. Each carries one plain reason that can be shown to the
organization as a presentation's validation error, so reasons name what failed, not how."""

from __future__ import annotations


class TrustError(Exception):
    """The issuer of a credential (or its key) could not be established."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FetchError(Exception):
    """An outbound fetch was refused or failed. Kept apart from TrustError so callers can
    tell "the issuer is unreachable" from "the issuer is wrong"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
