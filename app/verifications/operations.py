"""Verification definitions and the individuals verified against them."""

from __future__ import annotations

import contextlib
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from flask import current_app, has_app_context
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.database import reading
from app.errors import InvalidRequest, NotFound
from app.extensions import db
from app.oid4vp.request import AuthorizationRequest, link_for
from app.oid4vp.verifier import Verifier
from app.organizations.models import Organization
from app.schemas.operations import get_schema, require_schema_entitlement
from app.trust.policy import parse_pins
from app.verifications.conditions import check_conditions, known_attribute
from app.verifications.models import (
    Individual,
    PresentationRequest,
    Status,
    Verification,
)

FINAL = (Status.VERIFIED,)


# Where the application keeps its Verifier (``app.extensions``).
VERIFIER_EXTENSION = "oid4vp_verifier"


def deployment_verifier() -> Verifier:
    """The verifier identity the running application settled at start-up.

    It is configuration, fixed for the life of the app (``app.api.wallet`` loads it when the
    app is built), and read like the database session is: from the current application. Links
    made without one therefore agree everywhere on the client ID they hand out and expect.
    """
    if has_app_context():
        return current_app.extensions.get(VERIFIER_EXTENSION) or Verifier()
    return Verifier()


@dataclass(frozen=True)
class Links:
    """Where this deployment is reached, and who it is, as seen by wallets and people."""

    base_url: str
    verifier: Verifier = field(default_factory=deployment_verifier)

    def request_uri(self, request_id: uuid.UUID) -> str:
        return f"{self.base_url}/oid4vp/requests/{request_id}"

    def response_uri(self, request_id: uuid.UUID) -> str:
        return f"{self.base_url}/oid4vp/responses/{request_id}"

    def client_id(self, request_id: uuid.UUID) -> str:
        """The client ID of a request: in its link, its Request Object, and the KB-JWT ``aud``."""
        return self.verifier.client_id(self.response_uri(request_id))

    def connection_url(self, request_id: uuid.UUID) -> str:
        """The ``openid4vp://`` link for a presentation request, passed by reference."""
        return link_for(
            self.response_uri(request_id), self.request_uri(request_id), self.verifier.client
        )


# -- definitions ----------------------------------------------------------------------------


def _live(organization: Organization):
    return select(Verification).where(
        Verification.organization_id == organization.id, Verification.deleted_at.is_(None)
    )


def get_verification(organization: Organization, verification_id: uuid.UUID) -> Verification:
    verification = db.session.get(Verification, verification_id)
    if (
        verification is None
        or verification.organization_id != organization.id
        or verification.deleted_at is not None
    ):
        raise NotFound()
    return verification


def list_verifications(
    organization: Organization, offset: int, limit: int
) -> tuple[list[Verification], int]:
    total = db.session.scalar(select(func.count()).select_from(_live(organization).subquery())) or 0
    rows = db.session.scalars(
        _live(organization)
        .order_by(Verification.created_at.desc(), Verification.id)
        .offset(offset)
        .limit(limit)
    )
    return list(rows), total


def create_verification(organization: Organization, fields: dict[str, Any]) -> Verification:
    verification = Verification(organization_id=organization.id)
    _apply(organization, verification, fields)
    db.session.add(verification)
    db.session.flush()
    return verification


def update_verification(
    organization: Organization, verification_id: uuid.UUID, fields: dict[str, Any]
) -> Verification:
    verification = get_verification(organization, verification_id)
    _apply(organization, verification, fields)
    db.session.flush()
    return verification


def delete_verification(organization: Organization, verification_id: uuid.UUID) -> None:
    verification = get_verification(organization, verification_id)
    verification.deleted_at = clock.now()
    db.session.flush()


def _apply(organization: Organization, verification: Verification, fields: dict[str, Any]) -> None:
    schema_id = fields.get("schema_id") or verification.schema_id
    if schema_id is None:
        raise InvalidRequest("schema_id is required")
    schema = get_schema(organization, schema_id)
    require_schema_entitlement(organization, schema)
    verification.schema_id = schema.id
    for key in ("name", "description", "type", "return_url"):
        if key in fields and fields[key] is not None:
            setattr(verification, key, fields[key])
    if not (verification.name or "").strip():
        raise InvalidRequest("name must not be empty")
    names = schema.attribute_names()
    if fields.get("claims") is not None:
        unknown = [c for c in fields["claims"] if not known_attribute(c, names)]
        if unknown:
            raise InvalidRequest(f"claims not in the verification's schema: {', '.join(unknown)}")
        verification.claims = list(dict.fromkeys(fields["claims"]))
    elif verification.claims is None:
        verification.claims = []
    if fields.get("attributes") is not None:
        verification.attributes = check_conditions(fields["attributes"], names)
    elif verification.attributes is None:
        verification.attributes = []
    if fields.get("trusted_issuers") is not None:
        pins = list(dict.fromkeys(i.strip() for i in fields["trusted_issuers"]))
        try:
            parse_pins(pins)
        except ValueError as exc:  # refused when saved, rather than failing every presentation
            raise InvalidRequest(f"trusted_issuers: {exc}") from exc
        verification.trusted_issuers = pins
    elif verification.trusted_issuers is None:
        verification.trusted_issuers = []


# -- individuals ----------------------------------------------------------------------------


def open_individual(verification_id: uuid.UUID, customer_id: str) -> tuple[Individual, bool]:
    """The individual for (customer_id, verification_id), created on first call.

    Returns ``(individual, created)``. Concurrent first calls meet at the unique constraint:
    the loser's insert is rolled back to a savepoint and it reads the winner's row.
    """
    fresh = not db.session().in_transaction()
    with reading() if fresh else contextlib.nullcontext():
        existing = db.session.scalar(
            select(Individual)
            .join(Verification, Individual.verification_id == Verification.id)
            .where(
                Individual.verification_id == verification_id,
                Individual.customer_id == customer_id,
                Verification.deleted_at.is_(None),
            )
        )
    if existing is not None:  # a retry, the common case: one read, no write lock taken
        return existing, False
    if fresh:
        # End the reading transaction so the insert's begins IMMEDIATE on SQLite: a deferred
        # one that turns into a writer fails at once under contention instead of waiting.
        db.session.rollback()
    verification = db.session.get(Verification, verification_id)
    if verification is None or verification.deleted_at is not None:
        raise NotFound()
    try:
        with db.session.begin_nested():
            individual = Individual(verification_id=verification_id, customer_id=customer_id)
            db.session.add(individual)
    except IntegrityError:
        existing = _individual_for(verification_id, customer_id)
        if existing is None:
            raise
        return existing, False
    return individual, True


def _individual_for(verification_id: uuid.UUID, customer_id: str) -> Individual | None:
    return db.session.scalar(
        select(Individual).where(
            Individual.verification_id == verification_id, Individual.customer_id == customer_id
        )
    )


def get_individual(individual_id: uuid.UUID, *, lock: bool = False) -> Individual:
    if lock:
        query = select(Individual).where(Individual.id == individual_id)
        individual = db.session.scalar(query.with_for_update(of=Individual))
    else:  # the status poll's path: a get by primary key is the cheapest read the ORM has
        individual = db.session.get(Individual, individual_id)
    if individual is None:
        raise NotFound()
    return individual


def lookup_individual(
    organization: Organization, verification_id: uuid.UUID, customer_id: str
) -> Individual:
    """The authenticated lookup: another organization's verification reads as missing."""
    individual = db.session.scalar(
        select(Individual)
        .join(Verification, Individual.verification_id == Verification.id)
        .where(
            Individual.verification_id == verification_id,
            Individual.customer_id == customer_id,
            Verification.organization_id == organization.id,
        )
    )
    if individual is None:
        raise NotFound()
    return individual


def list_individuals(
    organization: Organization, verification_id: uuid.UUID, offset: int, limit: int
) -> tuple[list[Individual], int]:
    get_verification(organization, verification_id)
    query = select(Individual).where(Individual.verification_id == verification_id)
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(Individual.created_at.desc(), Individual.id).offset(offset).limit(limit)
    )
    return list(rows), total


def connect(individual_id: uuid.UUID, link_seconds: int, request_seconds: int) -> Individual:
    """Hand out the individual's connection link: the same one within the reuse window.

    The row is locked so that concurrent calls agree on one link instead of minting two.
    A VERIFIED individual is final and gets no new link.
    """
    individual = get_individual(individual_id, lock=True)
    if individual.status in FINAL:
        return individual
    now = clock.now()
    if (
        individual.connection_request_id is not None
        and individual.connection_at is not None
        and now - individual.connection_at < timedelta(seconds=link_seconds)
    ):
        return individual
    request = mint_presentation_request(link_seconds, request_seconds, individual_id=individual.id)
    individual.connection_request_id = request.id
    individual.connection_at = now
    if individual.status == Status.CREATED:
        individual.status = Status.REQUESTED
    db.session.flush()
    return individual


def mint_presentation_request(
    link_seconds: int, request_seconds: int, **subject: Any
) -> PresentationRequest:
    """A new OpenID4VP request (fresh nonce and state) for an individual or a policy request.

    It stays answerable a while after its link stops being handed out, so that a person who
    scans at the last second still has time to finish in the wallet.
    """
    now = clock.now()
    request = PresentationRequest(
        nonce=secrets.token_urlsafe(24),
        state=secrets.token_urlsafe(24),
        created_at=now,
        expires_at=now + timedelta(seconds=max(request_seconds, link_seconds)),
        **subject,
    )
    db.session.add(request)
    db.session.flush()
    return request


def authorization_request(request_id: uuid.UUID, links: Links) -> AuthorizationRequest:
    """The OpenID4VP request a wallet fetches by reference for one presentation request.

    Client identifier and response encryption key come from ``links.verifier``, the same
    identity that made the request's link and that will read its response.
    """
    request = db.session.get(PresentationRequest, request_id)
    if request is None:
        raise NotFound()
    verification = _verification_of(request)
    return AuthorizationRequest(
        client=links.verifier.client,
        encryption_jwk=links.verifier.response_jwk(str(request.id)),
        response_uri=links.response_uri(request.id),
        request_uri=links.request_uri(request.id),
        nonce=request.nonce,
        state=request.state,
        vct=verification.schema.vct,
        claims=verification.requested_claims(),
        issued_at=int(clock.now().timestamp()),
        expires_at=int(request.expires_at.timestamp()),
        client_name=verification.organization.name,
    )


def _verification_of(request: PresentationRequest) -> Verification:
    if request.individual_id is not None:
        return get_individual(request.individual_id).verification
    from app.policies.models import PolicyRequest

    policy = db.session.get(PolicyRequest, request.policy_request_id)
    if policy is None:
        raise NotFound()
    return policy.verification
