"""The issuers a verification's presentations named, and trusting one of them.

Staff rarely know in advance which DID or URL signs the credentials their people hold (the
Socious Wallet's KYC credential is issued by a did:prism nobody publishes a document for). So
the verification lists the issuers it has seen, refused ones included, and "Trust this
issuer" adds one to its ``trusted_issuers``. For a did:prism whose long form a presentation
revealed (``app.vcjwt.learned``), trusting it also pins that long form for the organization
(``PinnedPrismDid``), so credentials naming the short form verify with its keys from then on:
the next presentation needs no deployment file and no resolver.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, inspect, or_, select

from app.didcomm import prism
from app.didcomm.errors import PrismDidError
from app.errors import InvalidRequest
from app.extensions import db
from app.organizations.models import Organization
from app.presentations.models import PinnedPrismDid
from app.presentations.reasons import Family, family_of
from app.trust.policy import names_issuer, parse_pins
from app.verifications.models import (
    Individual,
    PresentationAttempt,
    PresentationRequest,
    Status,
    Verification,
)
from app.verifications.operations import get_verification

# The verification's own limit on trusted_issuers (``VerificationPatch``).
MAX_TRUSTED_ISSUERS = 50
# The list shows this many issuers, the most recently seen first.
MAX_LISTED = 100


@dataclass(frozen=True)
class IssuerSeen:
    issuer: str
    presentations: int
    failed_untrusted: int
    last_seen_at: datetime
    trusted: bool
    # Whether a presentation revealed its did:prism long form (trusting it pins that).
    key_learnt: bool


def pinned_documents(organization_id: uuid.UUID) -> dict[str, dict[str, Any]]:
    """The organization's pinned did:prism documents by short form, as resolution reads
    them (``app.trust.did_prism.PrismResolution.pinned``)."""
    documents: dict[str, dict[str, Any]] = {}
    rows = db.session.execute(
        select(PinnedPrismDid.did, PinnedPrismDid.long_form).where(
            PinnedPrismDid.organization_id == organization_id
        )
    )
    for did, long_form in rows:
        try:
            documents[did] = prism.parse(long_form).document()
        except PrismDidError:  # checked when pinned; a long form never changes its meaning
            continue
    return documents


def _attempts_of(verification: Verification):
    """The clause that picks the verification's presentation attempts, through their
    requests' individual or policy request (found through the relationship: the policies
    package builds on this one, so this one does not import it)."""
    policy_request = inspect(PresentationRequest).relationships["policy_request"].mapper.class_
    return or_(
        PresentationRequest.individual_id.in_(
            select(Individual.id).where(Individual.verification_id == verification.id)
        ),
        PresentationRequest.policy_request_id.in_(
            select(policy_request.id).where(policy_request.verification_id == verification.id)
        ),
    )


def issuers_seen(organization: Organization, verification_id: uuid.UUID) -> list[IssuerSeen]:
    """Every issuer the verification's presentations named, the most recently seen first.

    ``failed_untrusted`` counts the presentations refused because the verification does not
    trust that issuer (the untrusted-issuer family of reasons, ``app.presentations.reasons``).
    Counted per distinct reason in SQL, then folded here: reasons are few, attempts many.
    """
    verification = get_verification(organization, verification_id)
    rows = db.session.execute(
        select(
            PresentationAttempt.issuer,
            PresentationAttempt.outcome,
            PresentationAttempt.validation_error,
            func.count(),
            func.max(PresentationAttempt.created_at),
            func.count(PresentationAttempt.issuer_long_form),
        )
        .join(PresentationAttempt.request)
        .where(_attempts_of(verification), PresentationAttempt.issuer.is_not(None))
        .group_by(
            PresentationAttempt.issuer,
            PresentationAttempt.outcome,
            PresentationAttempt.validation_error,
        )
    )
    folded: dict[str, dict[str, Any]] = {}
    for issuer, outcome, reason, count, last, learnt in rows:
        seen = folded.setdefault(
            issuer, {"presentations": 0, "failed_untrusted": 0, "last": last, "learnt": False}
        )
        seen["presentations"] += count
        if outcome == Status.FAILED and family_of(reason) == Family.UNTRUSTED_ISSUER:
            seen["failed_untrusted"] += count
        seen["last"] = max(seen["last"], last)
        seen["learnt"] = seen["learnt"] or learnt > 0
    pins = list(verification.trusted_issuers or [])
    listed = [
        IssuerSeen(
            issuer=issuer,
            presentations=seen["presentations"],
            failed_untrusted=seen["failed_untrusted"],
            last_seen_at=seen["last"],
            trusted=bool(pins) and names_issuer(pins, issuer),
            key_learnt=seen["learnt"],
        )
        for issuer, seen in folded.items()
    ]
    listed.sort(key=lambda seen: seen.last_seen_at, reverse=True)
    return listed[:MAX_LISTED]


def trust_issuer(
    organization: Organization, verification_id: uuid.UUID, issuer: str
) -> Verification:
    """Add an issuer the verification has seen to its ``trusted_issuers`` (once), and pin the
    did:prism long form its latest presentation revealed, if any, for the organization.

    Only an issuer seen is accepted: this is "trust the issuer shown", and what it pins comes
    from what was shown (any other list is still set with ``PUT /verifications/{id}``).
    """
    verification = get_verification(organization, verification_id)
    learnt = db.session.execute(
        select(PresentationAttempt.issuer_long_form)
        .join(PresentationAttempt.request)
        .where(_attempts_of(verification), PresentationAttempt.issuer == issuer)
        .order_by(
            PresentationAttempt.issuer_long_form.is_(None), PresentationAttempt.created_at.desc()
        )
        .limit(1)
    ).first()
    if learnt is None:
        raise InvalidRequest(
            "issuer: no presentation to this verification named this issuer "
            "(GET /verifications/{id}/issuers-seen lists those that did)",
            code="ISSUER_NOT_SEEN",
        )
    pins = list(verification.trusted_issuers or [])
    if not names_issuer(pins, issuer):
        if len(pins) >= MAX_TRUSTED_ISSUERS:
            raise InvalidRequest(
                f"trusted_issuers holds at most {MAX_TRUSTED_ISSUERS} issuers; remove one first"
            )
        try:
            parse_pins([*pins, issuer])
        except ValueError as exc:
            raise InvalidRequest(f"trusted_issuers: {exc}") from exc
        verification.trusted_issuers = [*pins, issuer]
    if learnt.issuer_long_form is not None:
        _pin(organization, verification, learnt.issuer_long_form)
    db.session.flush()
    return verification


def _pin(organization: Organization, verification: Verification, long_form: str) -> None:
    try:
        parsed = prism.parse(long_form)
    except PrismDidError:  # kept only when it parsed; a record written otherwise pins nothing
        return
    pinned = db.session.scalar(
        select(PinnedPrismDid).where(
            PinnedPrismDid.organization_id == organization.id,
            PinnedPrismDid.did == parsed.canonical,
        )
    )
    if pinned is None:
        db.session.add(
            PinnedPrismDid(
                organization_id=organization.id,
                did=parsed.canonical,
                long_form=parsed.did,
                verification_id=verification.id,
            )
        )
    elif pinned.long_form != parsed.did:
        # Another long form of the same DID (the same creation operation encoded again):
        # the latest one shown is kept, as the one staff just looked at.
        pinned.long_form = parsed.did
        pinned.verification_id = verification.id
