"""Verification definitions and the individuals verified against them."""

from __future__ import annotations

import contextlib
import json
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, and_, bindparam, delete, func, select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.audit import operations as audit
from app.database import read_row, reading
from app.errors import InvalidRequest, NotFound, Unauthorized
from app.extensions import db
from app.oid4vp.formats import JWT_VC_JSON as DIDCOMM_FORMAT
from app.oid4vp.formats import SD_JWT_VC
from app.organizations.models import Organization
from app.schemas.models import Schema
from app.schemas.operations import get_schema, require_schema_entitlement
from app.trust.policy import parse_pins
from app.trust_sources import operations as trust_sources
from app.trust_sources.operations import check_source_ids
from app.verifications import link_secret
from app.verifications.conditions import check_conditions, echoed, known_attribute
from app.verifications.models import (
    ALLOWED,
    ANONYMOUS,
    ANONYMOUS_OPEN,
    BACKEND,
    DIDCOMM,
    LINK,
    REFUSED,
    SIGNED,
    WALLET_PROTOCOLS,
    Individual,
    Verification,
)
from app.verifications.profile import require_format_allowed
from app.verifications.relying_party import checked as checked_relying_party
from app.verifications.return_address import check_return_url
from app.verifications.zk import check_zk
from app.webhooks.models import WebhookEvent

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


def create_verification(
    organization: Organization, fields: dict[str, Any], own_issuer: str | None = None
) -> Verification:
    """``own_issuer`` is the organization's issuer identifier on this deployment
    (``<PUBLIC_URL>/issuers/<id>``): where ``trusted_issuers`` is left out, a verification of
    the organization's own SD-JWT VC schema starts pinned to it (``initial_pins``)."""
    verification = Verification(organization_id=organization.id)
    _apply(organization, verification, fields, own_issuer)
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


def initial_pins(
    organization: Organization, schema: Schema, fields: dict[str, Any], own_issuer: str | None
) -> list[str]:
    """The issuers a new verification trusts when ``trusted_issuers`` was left out.

    An empty list accepts any issuer whose signature verifies, a self-made ``did:jwk``
    included, so it is an explicit choice (``[]``), never what silence gets where a safer
    answer is known: the organization's own SD-JWT VC schema is the one it issues here, under
    ``own_issuer``. Chosen trust sources narrow the issuers themselves. The shipped public
    schemas name no issuer (a PID's issuers are the national providers a trust list names:
    choose them as trust sources), so there silence stays empty, as clients of the contract
    expect, and the answer's ``trust`` says "any".
    """
    if (
        own_issuer
        and schema.organization_id == organization.id
        and schema.format == SD_JWT_VC
        and not fields.get("trust_sources")
    ):
        return [own_issuer]
    return []


def _apply(
    organization: Organization,
    verification: Verification,
    fields: dict[str, Any],
    own_issuer: str | None = None,
) -> None:
    schema_id = fields.get("schema_id") or verification.schema_id
    if schema_id is None:
        raise InvalidRequest("schema_id is required")
    schema = get_schema(organization, schema_id)
    require_schema_entitlement(organization, schema)
    require_format_allowed(schema)  # before anything of the verification changes
    schema_changed = verification.schema_id is not None and verification.schema_id != schema.id
    verification.schema_id = schema.id
    for key in (
        "name",
        "description",
        "description_translations",
        "type",
        "return_url",
        "recommended_wallets",
        "retention_days",
        "status_check_hours",
    ):
        if key in fields and fields[key] is not None:
            setattr(verification, key, fields[key])
    if fields.get("return_url") is not None:
        check_return_url(fields["return_url"])
    if fields.get("relying_party") is not None:
        # "" goes back to the organization's own identity.
        verification.relying_party = checked_relying_party(
            organization.id, fields["relying_party"] or None
        )
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
        verification.attributes = check_conditions(fields["attributes"], schema.attributes)
    elif verification.attributes is None:
        verification.attributes = []
    elif schema_changed:  # kept conditions are read again by the new schema's types
        verification.attributes = check_conditions(
            [echoed(c) for c in verification.attributes], schema.attributes
        )
    if fields.get("trusted_issuers") is not None:
        pins = list(dict.fromkeys(i.strip() for i in fields["trusted_issuers"]))
        try:
            parse_pins(pins)
        except ValueError as exc:  # refused when saved, rather than failing every presentation
            raise InvalidRequest(f"trusted_issuers: {exc}") from exc
        verification.trusted_issuers = pins
    elif verification.trusted_issuers is None:
        verification.trusted_issuers = initial_pins(organization, schema, fields, own_issuer)
    if fields.get("trust_sources") is not None:
        verification.trust_sources = check_source_ids(organization, fields["trust_sources"])
    elif verification.trust_sources is None:
        verification.trust_sources = []
    _apply_registration(organization, verification, schema, fields)
    if fields.get("wallet_protocols") is not None:
        verification.wallet_protocols = check_wallet_protocols(fields["wallet_protocols"])
    if fields.get("anonymous_open") is not None:
        _set_anonymous_open(verification, fields["anonymous_open"])
    if fields.get("zk") is not None:
        verification.zk = bool(fields["zk"])
    if verification.zk:
        check_zk(schema.format, verification.claims, verification.attributes)
    if DIDCOMM in verification.protocols() and schema.format != DIDCOMM_FORMAT:
        raise InvalidRequest(
            f"wallet_protocols: DIDComm carries W3C VC-JWT credentials only; this verification's "
            f"schema is {schema.format} (choose a {DIDCOMM_FORMAT} schema, or openid4vp alone)",
            code="PROTOCOL_NOT_AVAILABLE",
        )


RegistrationCheck = Callable[[Organization, Verification, Schema, Any], None]
_registration_check: list[RegistrationCheck] = []


def provide_registration_check(check: RegistrationCheck) -> None:
    """Called by the verifier identity domain (which keeps registration certificates and so
    imports this one): it sets the certificate a verification is made under, or refuses."""
    _registration_check[:] = [check]


def _apply_registration(
    organization: Organization, verification: Verification, schema: Schema, fields: dict[str, Any]
) -> None:
    """The registration certificate the verification is made under, and no over-asking: its
    query (the requested claims of its credential type) must stay within it."""
    if not _registration_check:
        raise RuntimeError("the verifier identity domain provides the registration check")
    _registration_check[0](
        organization, verification, schema, fields.get("registration_certificate_id")
    )


def _set_anonymous_open(verification: Verification, value: str) -> None:
    """Turning ``signed`` on mints a link secret, shown once in this answer
    (``fresh_link_secret``); leaving ``signed`` forgets it, so turning it on again never
    brings an old secret back."""
    if value not in ANONYMOUS_OPEN:
        raise InvalidRequest(f"anonymous_open must be one of {', '.join(ANONYMOUS_OPEN)}")
    was_signed = verification.anonymous_open == SIGNED and verification.sealed_link_secret
    verification.anonymous_open = value
    if value == SIGNED and not was_signed:
        _mint_link_secret(verification)
    elif value != SIGNED:
        verification.sealed_link_secret = None


def _mint_link_secret(verification: Verification) -> str:
    secret = link_secret.new_secret()
    verification.sealed_link_secret = link_secret.seal(secret, link_secret_kek())
    verification.fresh_link_secret = secret
    return secret


def link_secret_kek() -> bytes:
    """The key link secrets are sealed under, derived from the issuer key secret."""
    return link_secret.current_kek()


def rotate_link_secret(organization: Organization, verification_id: uuid.UUID) -> Verification:
    """A new link secret (in ``fresh_link_secret``, shown once); signatures made with the old
    one stop opening at once. Only a ``signed`` verification has one."""
    verification = get_verification(organization, verification_id)
    if verification.anonymous_open != SIGNED:
        raise InvalidRequest(
            'Only a verification with anonymous_open "signed" has a link secret: set it first '
            "(the answer that sets it carries the first secret)",
            code="LINK_SECRET_NOT_USED",
        )
    _mint_link_secret(verification)
    db.session.flush()
    return verification


def check_wallet_protocols(protocols: list[str]) -> list[str]:
    """An ordered list of known protocols without repeats: the first one's link is the
    connection link, so an order with a repeat would be ambiguous."""
    unknown = [p for p in protocols if p not in WALLET_PROTOCOLS]
    if unknown:
        raise InvalidRequest(f"wallet_protocols: unknown protocol {unknown[0]!r}")
    if not protocols or len(set(protocols)) != len(protocols):
        raise InvalidRequest("wallet_protocols must name each protocol at most once, at least one")
    return list(protocols)


def verifications_using_source(organization: Organization, source_id: uuid.UUID) -> list[str]:
    """Names of the organization's live verifications that chose the trust source."""
    rows = db.session.execute(
        select(Verification.name, Verification.trust_sources).where(
            Verification.organization_id == organization.id, Verification.deleted_at.is_(None)
        )
    )
    return [name for name, ids in rows if ids and str(source_id) in ids]


trust_sources.provide_usage(verifications_using_source)


# -- individuals ----------------------------------------------------------------------------

CUSTOMER_ID_LENGTH = 200  # the column's length, and the JSON open's limit


def owner_scope(body: bytes) -> str | None:
    """Whose Idempotency-Keys an opening shares: the verification's organization, read from
    the body; None when the body names no live verification (the opening then answers 400)."""
    try:
        verification_id = uuid.UUID(str(json.loads(body or b"{}").get("verification_id")))
    except (ValueError, AttributeError, TypeError):
        return None
    organization_id = db.session.scalar(
        select(Verification.organization_id).where(
            Verification.id == verification_id, Verification.deleted_at.is_(None)
        )
    )
    return str(organization_id) if organization_id is not None else None


@dataclass(frozen=True)
class Opener:
    """Who opens an individual: ``kind`` is one of OPENERS; a backend comes with its
    integration and that integration's organization."""

    kind: str
    integration_id: uuid.UUID | None = None
    organization_id: uuid.UUID | None = None


ANONYMOUS_OPENER = Opener(ANONYMOUS)


def opening(verification_id: uuid.UUID, customer_id: str) -> Row | None:
    """The live verification's opening rules (``owner_id``, ``anonymous_open``,
    ``sealed_link_secret``) and the individual's columns for (customer_id, verification_id),
    ``id`` None until it is opened: a retried open, the common case, is this one Core read
    with no write lock and no ORM object. None when no live verification has the ID."""
    return read_row(
        db.engine,
        _OPENING_OF_PAIR,
        {"verification_id": verification_id, "customer_id": customer_id},
    )


def check_opener(rules: Row, opener: Opener, customer_id: str, customer_sig: str | None) -> None:
    """Whether ``opener`` may open ``customer_id`` under the verification's ``rules`` (a row
    of ``opening``). A backend's key must be of the verification's organization (another's
    verification reads as missing, as in the lookup); anyone else is held to
    ``anonymous_open``."""
    if opener.kind == BACKEND:
        if rules.owner_id != opener.organization_id:
            raise NotFound()
        return
    policy = rules.anonymous_open or ALLOWED
    if policy == REFUSED:
        raise Unauthorized(
            "This verification opens individuals only with the organization's integration "
            "key: send the 'apikey' header from your backend",
            code="APIKEY_REQUIRED",
        )
    if policy == SIGNED:
        secret = _open_link_secret(rules.sealed_link_secret)
        if secret is None or not link_secret.signature_holds(secret, customer_id, customer_sig):
            raise Unauthorized(
                "This verification opens an individual without the integration key only with "
                "customer_sig: base64url (no padding) of HMAC-SHA256 over the customer_id, "
                "keyed with the verification's link secret; it is missing or wrong",
                code="CUSTOMER_SIG_INVALID",
            )


LINK_OPENER = Opener(LINK)
# A customer ID the no-code link makes when the link names none: unguessable, and marked
# as the link's own so it never collides with the organization's IDs.
LINK_CUSTOMER_PREFIX = "link_"


def open_by_link(
    verification_id: uuid.UUID, customer_id: str | None, customer_sig: str | None
) -> uuid.UUID:
    """The no-code link ``/connect/redirect/{verification_id}?customer=``: the individual's ID
    for the customer, opened on first use (``opened_by`` link), under the verification's
    ``anonymous_open`` as an open without the key. Without a customer a new unguessable
    customer ID is made, which only ``allowed`` takes (nothing could have signed it)."""
    if customer_id is not None and not 0 < len(customer_id) <= CUSTOMER_ID_LENGTH:
        raise InvalidRequest(f"customer must be 1 to {CUSTOMER_ID_LENGTH} characters")
    chosen = customer_id or f"{LINK_CUSTOMER_PREFIX}{secrets.token_urlsafe(18)}"
    rules = opening(verification_id, chosen)
    if rules is None:
        raise NotFound()
    if customer_id is None and (rules.anonymous_open or ALLOWED) != ALLOWED:
        raise Unauthorized(
            "A no-code link without customer opens only where anyone may open",
            code="CUSTOMER_SIG_INVALID" if rules.anonymous_open == SIGNED else "APIKEY_REQUIRED",
        )
    check_opener(rules, LINK_OPENER, chosen, customer_sig)
    if rules.id is not None:
        return rules.id
    individual, _ = open_individual(verification_id, chosen, LINK_OPENER)
    db.session.flush()
    return individual.id


def _open_link_secret(sealed: bytes | None) -> str | None:
    """None when there is none, or it no longer opens (a secret changed without ``flask keys
    reseal``): every signature then fails, rather than the open failing with a 500."""
    if not sealed:
        return None
    try:
        return link_secret.open_sealed(sealed, link_secret_kek())
    except link_secret.SealedLinkSecretError:
        return None


def open_individual(
    verification_id: uuid.UUID,
    customer_id: str,
    opener: Opener = ANONYMOUS_OPENER,
    transaction_data: list[str] | None = None,
) -> tuple[Individual, bool]:
    """The individual for (customer_id, verification_id), created on first call.

    Returns ``(individual, created)``. Concurrent first calls meet at the unique constraint:
    the loser's insert is rolled back to a savepoint and it reads the winner's row. Only the
    insert records ``opener`` and ``transaction_data`` (already prepared,
    ``app.verifications.transaction_data``): the first opener is never replaced by a later one.
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
            individual = Individual(
                verification_id=verification_id,
                customer_id=customer_id,
                opened_by=opener.kind,
                opened_by_integration_id=opener.integration_id,
                transaction_data=transaction_data,
            )
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


def get_individual(
    individual_id: uuid.UUID, *, lock: bool = False, load: Sequence[Any] = ()
) -> Individual:
    """``load``: loader options for what the caller reads next (the person's page reads the
    verification, its organization and schema: one joined read instead of three lazy ones)."""
    if lock:
        query = select(Individual).where(Individual.id == individual_id).options(*load)
        individual = db.session.scalar(query.with_for_update(of=Individual))
    else:  # a get by primary key is the cheapest read the ORM has
        individual = db.session.get(Individual, individual_id, options=load)
    if individual is None:
        raise NotFound()
    return individual


def erase_individual(
    organization: Organization, verification_id: uuid.UUID, customer_id: str
) -> None:
    """Erase a person's record on request: the individual, its links and its attempts.

    Unlike the retention job, which keeps the outcome and the audit trail, nothing of the
    person stays, nor the webhook events about them; the customer_id may be opened again as
    a new individual.
    """
    individual = db.session.execute(
        _INDIVIDUAL_OF_ORGANIZATION,
        {
            "organization_id": organization.id,
            "verification_id": verification_id,
            "customer_id": customer_id,
        },
    ).first()
    if individual is None:
        raise NotFound()
    # Events about the person leave the outbox too (their deliveries and attempts with them,
    # ON DELETE CASCADE): what is still undelivered is not sent.
    db.session.execute(
        delete(WebhookEvent)
        .where(WebhookEvent.subject_id == individual.id)
        .execution_options(synchronize_session=False)
    )
    # The database removes the individual's presentation requests and their attempts
    # (ON DELETE CASCADE on both foreign keys).
    db.session.execute(
        delete(Individual)
        .where(Individual.id == individual.id)
        .execution_options(synchronize_session=False)
    )
    audit.note_deleted("individual", individual.id, organization.id)


# The hot reads, built once: Core statements with bound parameters, whose rows carry the
# individual's columns by name (what the JSON renderings read), with no ORM object.
_INDIVIDUAL = Individual.__table__
_INDIVIDUAL_BY_ID = select(_INDIVIDUAL).where(_INDIVIDUAL.c.id == bindparam("id"))
_INDIVIDUAL_OF_ORGANIZATION = (
    # With the organization's answer shape, so the lookup knows it without a query more.
    select(_INDIVIDUAL, Organization.__table__.c.api_compatibility)
    .join(Verification.__table__, _INDIVIDUAL.c.verification_id == Verification.__table__.c.id)
    .join(
        Organization.__table__,
        Organization.__table__.c.id == Verification.__table__.c.organization_id,
    )
    .where(
        _INDIVIDUAL.c.verification_id == bindparam("verification_id"),
        _INDIVIDUAL.c.customer_id == bindparam("customer_id"),
        Verification.__table__.c.organization_id == bindparam("organization_id"),
    )
)


_VERIFICATION = Verification.__table__
_OPENING_OF_PAIR = (
    select(
        _VERIFICATION.c.organization_id.label("owner_id"),
        _VERIFICATION.c.anonymous_open,
        _VERIFICATION.c.sealed_link_secret,
        *_INDIVIDUAL.c,
    )
    .select_from(
        _VERIFICATION.outerjoin(
            _INDIVIDUAL,
            and_(
                _INDIVIDUAL.c.verification_id == _VERIFICATION.c.id,
                _INDIVIDUAL.c.customer_id == bindparam("customer_id"),
            ),
        )
    )
    .where(_VERIFICATION.c.id == bindparam("verification_id"), _VERIFICATION.c.deleted_at.is_(None))
)


def individual_row(individual_id: uuid.UUID) -> Row:
    """An individual's columns, read outside the session (the status poll)."""
    row = read_row(db.engine, _INDIVIDUAL_BY_ID, {"id": individual_id})
    if row is None:
        raise NotFound()
    return row


def lookup_individual_row(
    organization_id: uuid.UUID, verification_id: uuid.UUID, customer_id: str
) -> Row:
    """The authenticated lookup as one Core read: another organization's verification reads
    as missing."""
    row = read_row(
        db.engine,
        _INDIVIDUAL_OF_ORGANIZATION,
        {
            "organization_id": organization_id,
            "verification_id": verification_id,
            "customer_id": customer_id,
        },
    )
    if row is None:
        raise NotFound()
    return row


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
