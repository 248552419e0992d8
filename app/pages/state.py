"""What the person's page shows, the same way for an individual and for a policy request."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from flask import url_for
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.organizations.models import SupportContact
from app.policies.operations import connect_policy, policy_for_token
from app.presentations.operations import (
    answerable_and_attempts,
    connect_individual,
    holds_subject_response_code,
)
from app.presentations.reasons import for_person, not_again_for_person
from app.verifications import operations as individuals
from app.verifications.models import (
    Individual,
    PresentationSubject,
    Status,
    Verification,
)
from app.verifier_identity.models import RegistrationCertificate

# An open page stops polling after this long without an outcome: a forgotten tab should not
# poll (and mint a new link every window) forever. Reloading starts it again.
WAIT_SECONDS = 15 * 60


# What the page reads of an individual beyond its row, loaded with it (one joined read).
_VERIFICATION = joinedload(Individual.verification)
PAGE_LOADS = (
    _VERIFICATION.joinedload(Verification.organization),
    _VERIFICATION.joinedload(Verification.schema),
)


@dataclass(frozen=True)
class Windows:
    """How long a link is handed out, and how long its request stays answerable."""

    link_seconds: int
    request_seconds: int


@dataclass(frozen=True)
class PageState:
    path: str
    subject: PresentationSubject
    # Nothing more can be presented: no code to scan, nothing to poll for.
    final: bool
    # The request the QR code and buttons point at, while a wallet can still answer it.
    link: uuid.UUID | None
    attempts: int

    @property
    def verification(self) -> Verification:
        return self.subject.verification

    @property
    def organization(self) -> str:
        return self.verification.organization.name

    def registered_purpose(self, language: str) -> str:
        """The purpose the registration certificate the request is made under states (ETSI
        TS 119 475), as the registrar registered it; empty without one."""
        certificate_id = (
            getattr(self.subject, "registration_certificate_id", None)
            or self.verification.registration_certificate_id
        )
        if certificate_id is None:
            return ""
        record = db.session.get(RegistrationCertificate, certificate_id)
        return record.purpose_in(language) if record is not None else ""

    @property
    def contact(self) -> SupportContact | None:
        return self.verification.organization.contact

    @property
    def status(self) -> Status:
        return self.subject.status

    @property
    def reason(self) -> str | None:
        """Plain words for the person; the technical reason is for the organization."""
        return for_person(self.subject.validation_error)

    @property
    def not_again(self) -> str | None:
        """Said where the same credential cannot pass again (a revoked one)."""
        return not_again_for_person(self.subject.validation_error)

    @property
    def retry_allowed(self) -> bool:
        """A failed individual may present again; a policy request may not."""
        return not self.final and self.status == Status.FAILED

    @property
    def link_id(self) -> str:
        return str(self.link) if self.link is not None else ""

    def status_url(self, seen: int, since: int) -> str:
        """The fragment address; it says what the page shows, so an unchanged poll is a 204."""
        query = urlencode({"request": self.link_id, "seen": seen, "since": since})
        return f"{self.path}/status?{query}"


def of_individual(individual_id: uuid.UUID, windows: Windows) -> PageState:
    """Opening the page hands out the individual's link: the same one within its window."""
    individual = connect_individual(
        individual_id, windows.link_seconds, windows.request_seconds, load=PAGE_LOADS
    )
    path = url_for("pages.individual_page", individual_id=individual.id)
    return page_of(individual, path, individual.connection_request_id)


def of_policy(token: str, windows: Windows) -> PageState:
    """The same for a policy request; an expired one without a result is 410 (Expired)."""
    policy, request = connect_policy(token, windows.link_seconds, windows.request_seconds)
    path = url_for("pages.policy_page", token=token)
    return page_of(policy, path, request.id if request is not None else None)


def page_of(subject: PresentationSubject, path: str, link: uuid.UUID | None) -> PageState:
    final = subject.is_final()
    answerable, attempts = answerable_and_attempts(subject, None if final else link)
    return PageState(path=path, subject=subject, final=final, link=answerable, attempts=attempts)


def answered_individual(individual_id: uuid.UUID, code: str) -> tuple[PresentationSubject, bool]:
    """The individual, and whether this browser holds a response code for it. Mints nothing."""
    individual = individuals.get_individual(individual_id)
    return individual, holds_subject_response_code(individual, code)


def answered_policy(token: str, code: str) -> tuple[PresentationSubject, bool]:
    policy = policy_for_token(token)
    return policy, holds_subject_response_code(policy, code)


def safe_return_url(url: str | None) -> str | None:
    """Only http(s) addresses become a link: a ``javascript:`` URL is never rendered."""
    if not url:
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None
