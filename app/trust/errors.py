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


class AddressRefused(FetchError):
    """The host resolved to an address the fetcher must not reach. ``problem`` says what kind
    of address ("a loopback address"); callers that must not reveal the address itself (a
    webhook's delivery log) word their message from it."""

    def __init__(self, reason: str, host: str, problem: str) -> None:
        super().__init__(reason)
        self.host = host
        self.problem = problem


class ConnectionRefused(FetchError):
    """Every address of the host refused the connection (nothing listens on the port)."""

    def __init__(self, reason: str, host: str) -> None:
        super().__init__(reason)
        self.host = host


class DeadlinePassed(FetchError):
    """The whole attempt (connect, TLS, headers, body) took longer than its deadline."""

    def __init__(self, reason: str, seconds: float) -> None:
        super().__init__(reason)
        self.seconds = seconds


class AnsweredStatus(FetchError):
    """The server answered, with a status other than 2xx or 3xx: ``status`` says which (a DID
    resolver's 404 means it does not know the DID, which is not a failure to reach it)."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__(reason)
        self.status = status
