"""Verification definitions, the individuals verified against them, and each attempt.

An individual and a policy request are both *subjects* of presentation requests: they share
one set of columns, one status machine and one way of being linked to the requests made for
them (``PresentationSubject``). A presentation request points at exactly one subject, which
the database enforces.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import replace
from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    CheckConstraint,
    ColumnElement,
    Enum,
    ForeignKey,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, declared_attr, mapped_column, relationship

from app import clock
from app.extensions import db
from app.models_base import IdMixin, TimestampMixin
from app.oid4vp.formats import CredentialType
from app.organizations.models import Organization
from app.schemas.models import Schema
from app.zk.circuits import zk_system_types


class Status(enum.StrEnum):
    CREATED = "CREATED"
    REQUESTED = "REQUESTED"
    VERIFIED = "VERIFIED"
    FAILED = "FAILED"


# The status machine of every subject. A link moves CREATED to REQUESTED; a
# response decides VERIFIED or FAILED; a later response (a retry, or an older link answered
# late) may still turn an individual's FAILED into VERIFIED, and VERIFIED is final. A move not
# listed here changes nothing. An answer to a final subject (``is_final``: a policy request's
# FAILED too) or an expired one is refused before it gets here (``refuse_settled``).
TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.CREATED: frozenset({Status.REQUESTED}),
    Status.REQUESTED: frozenset({Status.VERIFIED, Status.FAILED}),
    Status.FAILED: frozenset({Status.VERIFIED, Status.FAILED}),
    Status.VERIFIED: frozenset(),
}


OPENID4VP = "openid4vp"
DIDCOMM = "didcomm"
WALLET_PROTOCOLS = (OPENID4VP, DIDCOMM)
DEFAULT_RETENTION_DAYS = 30
MAX_RETENTION_DAYS = 3650
DEFAULT_STATUS_CHECK_HOURS = 24
MAX_STATUS_CHECK_HOURS = 24 * 365

# Who may open an individual without the organization's integration key (``anonymous_open``):
# anyone (the contract), only with a ``customer_sig`` made with the verification's link
# secret, or nobody (the backend's apikey open still works).
ALLOWED, SIGNED, REFUSED = "allowed", "signed", "refused"
ANONYMOUS_OPEN = (ALLOWED, SIGNED, REFUSED)
# How an individual was first opened (``opened_by``): with a valid integration key of the
# verification's organization, through the no-code link, or with no credential.
BACKEND, LINK, ANONYMOUS = "backend", "link", "anonymous"
OPENERS = (BACKEND, LINK, ANONYMOUS)


def status_column() -> Mapped[Status]:
    return mapped_column(
        Enum(Status, native_enum=False, length=20, validate_strings=True), default=Status.CREATED
    )


class Verification(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "verifications"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    schema_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("schemas.id"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # The purpose in other languages, by language code ({"de": "..."}); English (the
    # description) is the fallback.
    description_translations: Mapped[dict[str, str] | None] = mapped_column(JSON, default=dict)
    type: Mapped[str] = mapped_column(String(10), default="SINGLE")
    claims: Mapped[list[str]] = mapped_column(JSON, default=list)
    attributes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    trusted_issuers: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Ids of the organization's trust sources whose anchors this verification trusts.
    trust_sources: Mapped[list[str] | None] = mapped_column(JSON, default=list)
    # The registration certificate (ETSI TS 119 475) the verification's requests are made
    # under: its query stays within it, and it travels in verifier_info.
    registration_certificate_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("registration_certificates.id", ondelete="SET NULL")
    )
    return_url: Mapped[str | None] = mapped_column(String(2000))
    # An intermediary's verification made for a relying party it acts for: that party's
    # access certificate (app.verifier_identity) signs its requests. None: the organization's.
    relying_party: Mapped[str | None] = mapped_column(String(200))
    # Wallet apps the organization recommends ({"name", "url"}), shown to the person instead of
    # the apps named by the credential's format.
    recommended_wallets: Mapped[list[dict[str, str]] | None] = mapped_column(JSON, default=list)
    # The wallet protocols the person is offered, in order: "openid4vp", "didcomm" (the
    # Identus wallets'). The first one's link is the connection link. None reads as OpenID4VP.
    wallet_protocols: Mapped[list[str] | None] = mapped_column(JSON, default=lambda: [OPENID4VP])
    # How long the claims of a decision are kept, in days after it; 0 keeps the decision only.
    retention_days: Mapped[int] = mapped_column(default=DEFAULT_RETENTION_DAYS)
    # How often a VERIFIED individual's credential status is checked again while its claims
    # are kept, in hours; 0 checks it only when presented.
    status_check_hours: Mapped[int] = mapped_column(default=DEFAULT_STATUS_CHECK_HOURS)
    # Who may open an individual without the integration key (ANONYMOUS_OPEN).
    anonymous_open: Mapped[str] = mapped_column(String(10), default=ALLOWED, server_default=ALLOWED)
    # The one age claim is asked as a zero-knowledge proof over the mdoc (``mso_mdoc_zk``,
    # ``app.verifications.zk``): the organization learns the claim and the issuer, nothing else.
    zk: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The secret a ``customer_sig`` is an HMAC under (``signed``), sealed: it must be read
    # back to check a signature, so it cannot be a hash (``app.verifications.link_secret``).
    sealed_link_secret: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Deleting keeps the record (and its individuals' audit trail) but hides it everywhere.
    deleted_at: Mapped[datetime | None]

    organization: Mapped[Organization] = relationship()
    schema: Mapped[Schema] = relationship()
    # The link secret minted by this request, for its answer only (never stored plain).
    fresh_link_secret: ClassVar[str | None] = None

    def description_in(self, language: str) -> str:
        """The purpose in the person's language where staff wrote one, else the description."""
        translated = (self.description_translations or {}).get(language, "")
        return translated.strip() or self.description

    def trust(self) -> str:
        """Trust "any" when nothing narrows the issuers (any issuer whose signature verifies is
        accepted), "pinned" when ``trusted_issuers`` or trust sources narrow them."""
        return "pinned" if self.trusted_issuers or self.trust_sources else "any"

    def protocols(self) -> list[str]:
        """The wallet protocols offered, first one first (OpenID4VP for older records)."""
        return list(self.wallet_protocols or [OPENID4VP])

    def credential_type(self) -> CredentialType:
        """What this verification asks wallets for: its schema's type, as a zero-knowledge
        proof over the circuits Verity pins when it asks for one (``mso_mdoc_zk``)."""
        credential = self.schema.credential_type()
        if not self.zk:
            return credential
        return replace(credential, zk_system_types=tuple(zk_system_types()))

    def zk_age(self) -> str | None:
        """The age a ZK verification's proof shows ("18" of ``age_over_18``), for the person's
        page; None when it asks for no proof."""
        if not self.zk:
            return None
        names = [*(self.claims or []), *(c.get("name") or "" for c in self.attributes or [])]
        return next((n.removeprefix("age_over_") for n in names if n.startswith("age_over_")), None)

    def requested_claims(self) -> list[str]:
        """Claims asked of the wallet: those wanted plus those conditions read, nothing else."""
        return requested_claim_names(self.claims, self.attributes)


def requested_claim_names(
    claims: list[str] | None, conditions: list[dict[str, Any]] | None
) -> list[str]:
    """A verification's requested claims from its columns (the lookup reads them as a row)."""
    names = list(claims or [])
    for condition in conditions or []:
        name = condition.get("name") or condition.get("attribute_id")
        if name and name not in names:
            names.append(name)
    return names


class PresentationSubject(IdMixin, TimestampMixin):
    """What presentation requests are made for: an individual or a policy request.

    Both are verified against a verification, hand out one current link at a time and follow
    ``TRANSITIONS``; they differ only in the two class settings below and in expiry.
    """

    # The presentation_requests column that points at a subject of this kind.
    request_key: ClassVar[str]
    # Whether a FAILED subject may present again: an individual may, a one-off
    # policy request may not.
    retries_after_failure: ClassVar[bool]

    status: Mapped[Status] = status_column()
    validation_error: Mapped[str | None] = mapped_column(Text)
    # Every unmet condition of the last failure (``validation_error`` names the first only).
    failed_conditions: Mapped[list[str] | None] = mapped_column(JSON)
    claims: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    issuer: Mapped[str | None] = mapped_column(String(2000))
    verified_at: Mapped[datetime | None]
    # The presentation request behind the current link (no foreign key: the two tables point
    # at each other, and this is a pointer, not ownership).
    connection_request_id: Mapped[uuid.UUID | None]
    connection_at: Mapped[datetime | None]
    # OpenID4VP 1.0 §5.1 transaction data the backend asked the person to authorize: each
    # entry's base64url string exactly as every request sends it (the wallet hashes that
    # string, so it is kept, never re-encoded); None when there is none.
    transaction_data: Mapped[list[str] | None] = mapped_column(JSON)

    @declared_attr
    def verification_id(cls) -> Mapped[uuid.UUID]:
        return mapped_column(ForeignKey("verifications.id"))

    @declared_attr
    def verification(cls) -> Mapped[Verification]:
        return relationship(Verification)

    def is_final(self) -> bool:
        """Nothing more can be presented: no new link is handed out."""
        return self.final_status(self.status)

    @classmethod
    def final_status(cls, status: Status) -> bool:
        """Whether a subject of this kind in ``status`` is final."""
        if status == Status.VERIFIED:
            return True
        return status == Status.FAILED and not cls.retries_after_failure

    def has_expired(self) -> bool:
        """Whether the subject stopped taking presentations by age; an individual never does."""
        return False

    def requests_clause(self) -> ColumnElement[bool]:
        """The presentation requests made for this subject, as a query condition."""
        return getattr(PresentationRequest, self.request_key) == self.id


class Individual(PresentationSubject, db.Model):
    __tablename__ = "individuals"
    # One individual per (customer_id, verification_id): concurrent opens meet here.
    __table_args__ = (UniqueConstraint("verification_id", "customer_id"),)

    request_key = "individual_id"
    retries_after_failure = True

    customer_id: Mapped[str] = mapped_column(String(200))
    # Where the presented credential's status can be read again (its status list entry and
    # the issuer that signs the list), kept with the claims and deleted with them.
    status_reference: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    status_checked_at: Mapped[datetime | None] = mapped_column(index=True)
    # Set when a later check finds the credential no longer valid; VERIFIED stays final.
    revoked_at: Mapped[datetime | None]
    # How the individual was first opened (OPENERS), set at insert and never replaced, so a
    # backend can tell a record it opened from one a stranger opened under its customer ID.
    # Rows from before it was recorded read "anonymous": their opener is unknown.
    opened_by: Mapped[str] = mapped_column(String(10), default=ANONYMOUS, server_default=ANONYMOUS)
    # The integration whose key opened it (``backend``); kept after the integration is deleted.
    opened_by_integration_id: Mapped[uuid.UUID | None]


class PresentationRequest(IdMixin, db.Model):
    """One OpenID4VP authorization request: what a connect link or policy page points at."""

    __tablename__ = "presentation_requests"
    # A request is made for exactly one subject.
    __table_args__ = (
        CheckConstraint(
            "(individual_id IS NULL) <> (policy_request_id IS NULL)", name="one_subject"
        ),
    )

    individual_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("individuals.id", ondelete="CASCADE"), index=True
    )
    policy_request_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("policy_requests.id", ondelete="CASCADE"), index=True
    )
    nonce: Mapped[str] = mapped_column(String(100))
    state: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    expires_at: Mapped[datetime]
    # Set once a response was accepted: a second response (replay) is refused.
    consumed_at: Mapped[datetime | None]
    # OpenID4VP 1.0 §13.3: the redirect after a same-device response carries a code only the
    # browser the wallet returned to holds; the result is shown to that browser.
    response_code_hash: Mapped[str | None] = mapped_column(String(64))
    # The organization's own key the request was made under (its link, its Request Object
    # and the key binding's audience all follow it); None: the deployment's identity.
    verifier_key_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("verifier_keys.id", ondelete="SET NULL")
    )

    individual: Mapped[Individual | None] = relationship()
    # Named, not imported: ``app.policies.models`` builds on this module (its PolicyRequest is
    # a PresentationSubject), so this one does not import it back.
    policy_request: Mapped[PresentationSubject | None] = relationship("PolicyRequest")

    @classmethod
    def for_subject(cls, subject: PresentationSubject, **fields: Any) -> PresentationRequest:
        return cls(**{subject.request_key: subject.id}, **fields)

    @property
    def subject(self) -> PresentationSubject:
        subject = self.individual if self.individual_id is not None else self.policy_request
        if subject is None:  # the check constraint makes this unreachable
            raise LookupError(f"presentation request {self.id} has no subject")
        return subject


class PresentationAttempt(IdMixin, db.Model):
    """Every presentation, kept for the organization's audit view; its request names whose."""

    __tablename__ = "presentation_attempts"

    request_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("presentation_requests.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    outcome: Mapped[Status] = status_column()
    validation_error: Mapped[str | None] = mapped_column(Text)
    issuer: Mapped[str | None] = mapped_column(String(2000))
    # The long form of a did:prism issuer, when the presentation revealed one
    # (``app.vcjwt.learned``): what trusting that issuer from the dashboard pins.
    issuer_long_form: Mapped[str | None] = mapped_column(Text)

    request: Mapped[PresentationRequest] = relationship()
