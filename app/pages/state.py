"""What the person's page shows, the same way for an individual and for a policy request."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from app.pages.records import Subject, answerable, attempt_count, holds_code
from app.policies.operations import connect_policy, policy_for_token
from app.verifications import operations as individuals
from app.verifications.models import PresentationRequest, Status, Verification

# An open page stops polling after this long without an outcome: a forgotten tab should not
# poll (and mint a new link every window) forever. Reloading starts it again.
WAIT_SECONDS = 15 * 60


@dataclass(frozen=True)
class Windows:
    """How long a link is handed out, and how long its request stays answerable."""

    link_seconds: int
    request_seconds: int


@dataclass(frozen=True)
class PageState:
    path: str
    subject: Subject
    # Nothing more can be presented: no code to scan, nothing to poll for.
    final: bool
    # The request the QR code and buttons point at, while a wallet can still answer it.
    link: PresentationRequest | None
    attempts: int

    @property
    def verification(self) -> Verification:
        return self.subject.verification

    @property
    def organization(self) -> str:
        return self.verification.organization.name

    @property
    def status(self) -> Status:
        return self.subject.status

    @property
    def reason(self) -> str | None:
        return self.subject.validation_error

    @property
    def retry_allowed(self) -> bool:
        """A failed individual may present again (DESIGN.md 3); a policy request may not."""
        return not self.final and self.status == Status.FAILED

    @property
    def link_id(self) -> str:
        return str(self.link.id) if self.link is not None else ""

    def status_url(self, seen: int, since: int) -> str:
        """The fragment address; it says what the page shows, so an unchanged poll is a 204."""
        query = urlencode({"request": self.link_id, "seen": seen, "since": since})
        return f"{self.path}/status?{query}"


def of_individual(individual_id: uuid.UUID, windows: Windows) -> PageState:
    """Opening the page hands out the individual's link: the same one within its window."""
    individual = individuals.connect(individual_id, windows.link_seconds, windows.request_seconds)
    final = individual.status in individuals.FINAL
    return PageState(
        path=f"/i/{individual.id}",
        subject=individual,
        final=final,
        link=None if final else answerable(individual.connection_request_id),
        attempts=attempt_count(individual),
    )


def of_policy(token: str, windows: Windows) -> PageState:
    """The same for a policy request; an expired one without a result is 410 (Expired)."""
    policy, request = connect_policy(token, windows.link_seconds, windows.request_seconds)
    return PageState(
        path=f"/p/{token}",
        subject=policy,
        final=policy.is_final(),
        link=answerable(request.id if request is not None else None),
        attempts=attempt_count(policy),
    )


def answered_individual(individual_id: uuid.UUID, code: str) -> tuple[Subject, bool]:
    """The individual, and whether this browser holds a response code for it. Mints nothing."""
    individual = individuals.get_individual(individual_id)
    return individual, holds_code(individual, code)


def answered_policy(token: str, code: str) -> tuple[Subject, bool]:
    policy = policy_for_token(token)
    return policy, holds_code(policy, code)


def safe_return_url(url: str | None) -> str | None:
    """Only http(s) addresses become a link: a ``javascript:`` URL is never rendered."""
    if not url:
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None
