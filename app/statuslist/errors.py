"""Errors of the status list package."""

from __future__ import annotations


class StatusError(Exception):
    """No statement about the credential's status can be made: the list is unreachable,
    invalid, or not the issuer's. The caller decides whether that fails the presentation
    (Token Status List 8.3: the token SHOULD then be rejected)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
