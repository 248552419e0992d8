"""Issuing credentials: what the staff do (issue, list, revoke, resend) and the offer's secrets.

Each operation validates, changes state and flushes; the caller commits. An issued credential
starts as an OpenID4VCI 1.0 Credential Offer (pre-authorized code flow, §3.5): the wallet
redeems the code at the issuer's token endpoint (``app.issuance.wallet.token``) and the
credential is signed only then, bound to the wallet's key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.errors import ApiError, Conflict, InvalidRequest, NotFound
from app.extensions import db
from app.issuance import didcomm, settings
from app.issuance.claims import check_claims
from app.issuance.didcomm import WALLET_KYC_TYPE
from app.issuance.links import IssuerLinks
from app.issuance.models import (
    DIDCOMM,
    OPENID4VCI,
    TX_CODE_LENGTH,
    AccessToken,
    Credential,
    CredentialCopy,
    CredentialStatus,
)
from app.organizations.models import Organization
from app.organizations.operations import require_paid_plan
from app.recipients.models import Recipient
from app.schemas.models import Schema
from app.schemas.operations import require_schema_entitlement
from app.tokens import hash_secret
from app.webhooks import outbox

ALLOCATION_ATTEMPTS = 40
MAX_CLAIMS = 200


class ClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    value: str | bool | int | float


class IssueCredential(BaseModel):
    """``POST /credentials``; ``tx_code`` asks for a transaction
    code the wallet must send with the pre-authorized code (OpenID4VCI 1.0 §3.5)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=5000)
    schema_id: uuid.UUID
    recipient_id: uuid.UUID
    claims: list[ClaimIn] = Field(max_length=MAX_CLAIMS)
    tx_code: bool = False
    protocol: Literal["openid4vci", "didcomm"] = Field(
        default=OPENID4VCI,
        description="How the person's wallet takes the credential: OpenID4VCI 1.0, or DIDComm "
        "(issue-credential 3.0, what the Socious Wallet and other Hyperledger Identus wallets "
        "speak; needs a jwt_vc_json schema, no tx_code, and none of the issuing rules it "
        "cannot honour: the schema's authorization_code_by_mail or key_attestations_required, "
        "the organization's wallet_attestation required; 400 PROTOCOL_NOT_AVAILABLE naming "
        "the rule otherwise).",
    )


@dataclass(frozen=True)
class IssuedOffer:
    """A credential and, when one was asked for, its transaction code in clear (shown once)."""

    credential: Credential
    tx_code: str | None = None


# -- issuing ----------------------------------------------------------------------------------


def issue_credential(
    organization: Organization, body: IssueCredential, links: IssuerLinks
) -> IssuedOffer:
    """Offer a credential to one of the organization's recipients (tier-gated)."""
    require_paid_plan(organization, "Issuing a credential")
    schema = _checked(organization, body)
    return _offer(organization, body, schema)


def issue_many(
    organization: Organization, rows: list[IssueCredential], links: IssuerLinks
) -> list[IssuedOffer]:
    """All or nothing: every row is checked first, and the refusal names each bad row
    (numbered from 1)."""
    schemas = check_many(organization, rows)
    return [_offer(organization, body, schema) for body, schema in zip(rows, schemas, strict=True)]


def check_many(organization: Organization, rows: list[IssueCredential]) -> list[Schema]:
    """Every check ``issue_many`` makes, writing nothing: the schema of each row, or a
    refusal naming each bad row (numbered from 1)."""
    require_paid_plan(organization, "Issuing a credential")
    schemas: list[Schema] = []
    problems: list[str] = []
    for number, body in enumerate(rows, start=1):
        try:
            schemas.append(_checked(organization, body))
        except ApiError as exc:
            problems.append(f"row {number}: {exc.message}")
    if problems:
        raise InvalidRequest("; ".join(problems))
    return schemas


def _checked(organization: Organization, body: IssueCredential) -> Schema:
    """The schema to issue, after every check of the request.

    Every format a schema can have is issued, so there is no format check (the
    ``FORMAT_NOT_ISSUABLE`` refusal of earlier versions is retired, as the README says)."""
    schema = db.session.get(Schema, body.schema_id)
    if schema is None or not (
        schema.organization_id == organization.id or (schema.public and schema.published)
    ):
        raise NotFound()
    require_schema_entitlement(organization, schema)
    if not schema.published:
        raise InvalidRequest(
            f"Schema {schema.name} is a draft; publish it before issuing",
            code="SCHEMA_NOT_PUBLISHED",
        )
    recipient = db.session.get(Recipient, body.recipient_id)
    if recipient is None or recipient.organization_id != organization.id:
        raise NotFound()
    problems = check_claims(schema, [claim.model_dump() for claim in body.claims])
    if problems:
        raise InvalidRequest("; ".join(problems))
    if body.protocol == DIDCOMM:
        _check_didcomm(organization, schema, body)
    return schema


def _check_didcomm(organization: Organization, schema: Schema, body: IssueCredential) -> None:
    """What a DIDComm offer cannot carry: an issuing rule the protocol cannot honour
    (``didcomm.unhonoured_rules``: the format, a transaction code, a code by mail, a key or
    wallet attestation), or a credential the Socious Wallet would drop on receipt."""
    problems = didcomm.unhonoured_rules(schema, organization, tx_code=body.tx_code)
    if problems:
        raise InvalidRequest("; ".join(problems), code="PROTOCOL_NOT_AVAILABLE")
    if any(c.name == "type" and c.value == WALLET_KYC_TYPE for c in body.claims):
        raise InvalidRequest(
            f'claims: type "{WALLET_KYC_TYPE}" is the Socious Wallet\'s identity check: it keeps '
            "one such credential and drops any other, so this one would be dropped on receipt",
            code="WALLET_WOULD_DROP",
        )


def _offer(organization: Organization, body: IssueCredential, schema: Schema) -> IssuedOffer:
    credential = Credential(
        organization_id=organization.id,
        schema_id=schema.id,
        recipient_id=body.recipient_id,
        name=body.name,
        description=body.description,
        claims=[claim.model_dump() for claim in body.claims],
        vct=schema.vct,
        recorded_status=CredentialStatus.OFFERED,
        protocol=body.protocol,
    )
    tx_code = _new_offer(credential, with_tx_code=body.tx_code)
    _store_with_status_entry(credential)
    if credential.protocol == DIDCOMM:
        didcomm.prepare_offer(credential)
    outbox.emit("credential.offered", credential, organization.id, credential.id)
    return IssuedOffer(credential, tx_code)


def _store_with_status_entry(credential: Credential) -> None:
    """Insert with copy 0 holding a random free entry of the organization's current status
    list (Token Status List §13.2: random indices keep one credential's bit from telling its
    issuance order). The unique constraints decide a race for the same index; the loser draws
    again."""
    credential.id = credential.id or uuid.uuid4()
    for _ in range(ALLOCATION_ATTEMPTS):
        copy = _draw_entry(credential.organization_id, credential.id, 0)
        credential.status_list = copy.status_list
        credential.status_index = copy.status_index
        try:
            with db.session.begin_nested():
                db.session.add(credential)
                db.session.flush()
                db.session.add(copy)
                db.session.flush()
            return
        except IntegrityError:
            continue
    raise Conflict("No free status list entry was found; try again")


def new_copy(credential: Credential, number: int) -> CredentialCopy:
    """Copy ``number`` of an issued credential, stored with a status list entry of its own
    (a batch, or a later request on the access token: OpenID4VCI 1.0 §8)."""
    for _ in range(ALLOCATION_ATTEMPTS):
        copy = _draw_entry(credential.organization_id, credential.id, number)
        try:
            with db.session.begin_nested():
                db.session.add(copy)
                db.session.flush()
            return copy
        except IntegrityError:
            continue
    raise Conflict("No free status list entry was found; try again")


def _draw_entry(
    organization_id: uuid.UUID, credential_id: uuid.UUID, number: int
) -> CredentialCopy:
    """A random index of the organization's current list: a new list is started once the
    entries handed out fill half of one (``settings.STATUS_LIST_FILL``)."""
    used = db.session.scalar(
        select(func.count())
        .select_from(CredentialCopy)
        .where(CredentialCopy.organization_id == organization_id)
    )
    return CredentialCopy(
        credential_id=credential_id,
        organization_id=organization_id,
        number=number,
        status_list=(used or 0) // settings.STATUS_LIST_FILL,
        status_index=secrets.randbelow(settings.STATUS_LIST_SIZE),
    )


def _new_offer(credential: Credential, *, with_tx_code: bool) -> str | None:
    """A fresh offer: token, pre-authorized code (derived, stored hashed), optional
    transaction code (stored as an HMAC), expiry. Whatever the previous offer was stops
    working, since its code's hash is gone."""
    now = clock.now()
    current = settings.current()
    credential.offer_token = secrets.token_urlsafe(32)
    credential.pre_authorized_code_hash = hash_secret(pre_authorized_code(credential.offer_token))
    credential.issuer_state_hash = hash_secret(issuer_state(credential.offer_token))
    if credential.protocol == DIDCOMM:
        # Taken over DIDComm only: no OpenID4VCI grant can redeem this offer.
        credential.pre_authorized_code_hash = credential.issuer_state_hash = None
    credential.code_used_at = None
    credential.tx_code_failures = 0
    credential.offer_expires_at = now + timedelta(seconds=current.offer_seconds)
    tx_code = None
    if with_tx_code:
        tx_code = "".join(secrets.choice("0123456789") for _ in range(TX_CODE_LENGTH))
        credential.tx_code_hash = tx_code_hash(credential.offer_token, tx_code)
    else:
        credential.tx_code_hash = None
    return tx_code


def pre_authorized_code(offer_token: str) -> str:
    """The offer's pre-authorized code, an HMAC of its token under a server key.

    The Credential Offer is fetched by reference (§4.1.3), maybe more than once, so its code
    must be reproducible; deriving it keeps it out of the database, which holds only its hash.
    """
    mac = hmac.new(settings.current().code_key, offer_token.encode(), hashlib.sha256)
    return "pc_" + mac.hexdigest()


def issuer_state(offer_token: str) -> str:
    """The offer's ``issuer_state`` for the authorization code grant (§4.1.1), derived like
    the pre-authorized code: it names the offer in the wallet's authorization request."""
    mac = hmac.new(settings.current().code_key, f"issuer_state:{offer_token}".encode(), "sha256")
    return "is_" + mac.hexdigest()


def tx_code_hash(offer_token: str, tx_code: str) -> str:
    """A keyed hash: six digits hashed plainly would fall to a table of a million entries."""
    message = f"tx_code:{offer_token}:{tx_code}".encode()
    return hmac.new(settings.current().code_key, message, hashlib.sha256).hexdigest()


# -- reading ----------------------------------------------------------------------------------


def status_is(status: CredentialStatus, now: datetime):
    """SQL for "``Credential.status`` is ``status``", the expiry of untaken offers included."""
    offered = Credential.recorded_status == CredentialStatus.OFFERED
    expired = and_(offered, Credential.offer_expires_at <= now)
    if status is CredentialStatus.OFFERED:
        return and_(offered, or_(Credential.offer_expires_at.is_(None), ~expired))
    if status is CredentialStatus.EXPIRED:
        return or_(Credential.recorded_status == CredentialStatus.EXPIRED, expired)
    return Credential.recorded_status == status


def list_credentials(
    organization: Organization,
    *,
    status: CredentialStatus | str | None = None,
    recipient_id: uuid.UUID | None = None,
    page: int = 1,
    limit: int = 20,
) -> tuple[list[Credential], int]:
    """Newest first, optionally of one status or one recipient."""
    query = select(Credential).where(Credential.organization_id == organization.id)
    if status is not None:
        query = query.where(status_is(CredentialStatus(status), clock.now()))
    if recipient_id is not None:
        query = query.where(Credential.recipient_id == recipient_id)
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(Credential.created_at.desc(), Credential.id)
        .offset((page - 1) * limit)
        .limit(limit)
    )
    return list(rows), total


def get_credential(organization: Organization, credential_id: uuid.UUID) -> Credential:
    """Another organization's credential reads as missing."""
    credential = db.session.get(Credential, credential_id)
    if credential is None or credential.organization_id != organization.id:
        raise NotFound()
    return credential


def offer_by_token(token: str) -> Credential | None:
    """The credential behind an offer link (the person's page); None when unknown or
    replaced by a resend."""
    if not token or len(token) > 100:
        return None
    return db.session.scalar(select(Credential).where(Credential.offer_token == token))


# -- changing ---------------------------------------------------------------------------------


def revoke_credential(organization: Organization, credential_id: uuid.UUID) -> Credential:
    """Idempotent. An issued credential's status list bit is set; an offer not yet taken is
    withdrawn (its code stops working). An expired offer has nothing left to revoke."""
    credential = get_credential(organization, credential_id)
    if credential.status in (CredentialStatus.REVOKED, CredentialStatus.EXPIRED):
        return credential
    db.session.refresh(credential, with_for_update=True)
    if credential.status in (CredentialStatus.OFFERED, CredentialStatus.ISSUED):
        credential.recorded_status = CredentialStatus.REVOKED
        credential.revoked_at = clock.now()
        credential.pre_authorized_code_hash = None
        credential.issuer_state_hash = None
        db.session.execute(delete(AccessToken).where(AccessToken.credential_id == credential.id))
        didcomm.close_exchanges(credential)
        db.session.flush()
        outbox.emit("credential.revoked", credential, organization.id, credential.id)
    return credential


def resend_offer(
    organization: Organization, credential_id: uuid.UUID, links: IssuerLinks
) -> IssuedOffer:
    """A fresh offer (new link, new code, new expiry, a new transaction code if the first
    had one) for a credential not taken yet; the previous link and code stop working, and so
    does every DIDComm exchange made on the previous invitation. A DIDComm offer is checked
    against the issuing rules again, which may have changed since it was made."""
    credential = get_credential(organization, credential_id)
    db.session.refresh(credential, with_for_update=True)
    if credential.status not in (CredentialStatus.OFFERED, CredentialStatus.EXPIRED):
        raise Conflict(
            f"Credential {credential.id} is {credential.status.value}; only an offer not yet "
            "taken can be sent again",
            code="NOT_OFFERED",
        )
    if credential.protocol == DIDCOMM:
        problems = didcomm.unhonoured_rules(
            credential.schema, organization, tx_code=credential.tx_code_hash is not None
        )
        if problems:
            raise InvalidRequest("; ".join(problems), code="PROTOCOL_NOT_AVAILABLE")
    db.session.execute(delete(AccessToken).where(AccessToken.credential_id == credential.id))
    didcomm.close_exchanges(credential)
    tx_code = _new_offer(credential, with_tx_code=credential.tx_code_hash is not None)
    credential.recorded_status = CredentialStatus.OFFERED
    db.session.flush()
    outbox.emit("credential.offered", credential, organization.id, credential.id)
    return IssuedOffer(credential, tx_code)


def claims_of(credential: Credential) -> dict[str, Any]:
    """The claims as the credential carries them (names may be dotted paths)."""
    return {claim["name"]: claim["value"] for claim in credential.claims}
