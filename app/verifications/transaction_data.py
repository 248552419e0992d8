"""Transaction data a backend attaches to an individual or a policy request: checked against
what the organization enabled and what the verification's credential can carry, then kept as
the strings every request for the subject sends (``app.oid4vp.transaction_data``)."""

from __future__ import annotations

import uuid
from typing import Any

from app.errors import InvalidRequest, NotFound, Unauthorized
from app.extensions import db
from app.oid4vp import transaction_data as protocol
from app.oid4vp.formats import SD_JWT_VC
from app.oid4vp.request import CREDENTIAL_QUERY_ID
from app.verifications.models import BACKEND, OPENID4VP, Verification
from app.verifications.operations import Opener


def prepared_for(verification: Verification, entries: list[Any]) -> list[str]:
    """The entries as they will be sent, or a 400 saying why they cannot be.

    Only an SD-JWT VC asked for over OpenID4VP can confirm them (OpenID4VP 1.0 §B.3.3); an
    mdoc only where its document type defines a data element for them (§B.2), which none of
    the types this service sends has, and a W3C VC (``jwt_vc_json``) or a DIDComm answer
    never."""
    credential_format = verification.schema.credential_type().format
    if credential_format != SD_JWT_VC:
        raise InvalidRequest(
            f"transaction_data needs a verification whose schema is {SD_JWT_VC}; this one asks "
            f"for {credential_format}, whose presentations cannot confirm transaction data",
            code="TRANSACTION_DATA_FORMAT_UNSUPPORTED",
        )
    if verification.protocols() != [OPENID4VP]:
        raise InvalidRequest(
            "transaction_data needs a verification offered over OpenID4VP only; this one also "
            "offers " + ", ".join(p for p in verification.protocols() if p != OPENID4VP),
            code="TRANSACTION_DATA_FORMAT_UNSUPPORTED",
        )
    try:
        return protocol.prepared(
            entries,
            verification.organization.transaction_data_types or (),
            (CREDENTIAL_QUERY_ID,),
        )
    except protocol.TransactionDataError as exc:
        raise InvalidRequest(exc.reason, code=exc.code) from None


def for_open(opener: Opener, verification_id: uuid.UUID, entries: list[Any]) -> list[str]:
    """Only the organization's backend attaches transaction data to an individual: what a
    person is asked to authorize must come from the organization, never from whoever knows
    the verification's ID (its key was already checked to be the verification's owner's)."""
    if opener.kind != BACKEND:
        raise Unauthorized(
            "transaction_data is attached by the organization's backend: send the 'apikey' header",
            code="APIKEY_REQUIRED",
        )
    verification = db.session.get(Verification, verification_id)
    if verification is None or verification.deleted_at is not None:
        raise NotFound()
    return prepared_for(verification, entries)


def require_same(kept: list[str] | None, sent: list[str]) -> None:
    """An open is idempotent per (customer_id, verification_id): a repeat that asks for other
    transaction data than the individual holds is refused rather than answered as if it
    held them (a new transaction is a new customer_id, or a policy request)."""
    if list(kept or []) != sent:
        raise InvalidRequest(
            "This customer_id is already open against the verification with other "
            "transaction_data (or none); open a new customer_id, or make a policy request, "
            "for another transaction",
            code="TRANSACTION_DATA_MISMATCH",
        )


def confirmed(status: str, kept: list[str] | None) -> list[dict[str, Any]] | None:
    """What the wallet confirmed: every entry of a VERIFIED subject (a VERIFIED answer
    confirmed them all), decoded; None otherwise."""
    if status != "VERIFIED" or not kept:
        return None
    return [protocol.decode(entry) for entry in kept]
