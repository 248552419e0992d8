"""The staff's JSON API for issuing credentials (session token and acting organization).

Issuing is tier-gated (402 on the Free plan); a Premium+ schema needs a Premium+ organization
(403). Like every staff route, an integration key gets 401 here, and an unknown or another
organization's credential is 400 ``sql: no rows in result set``.
"""

from __future__ import annotations

import uuid

from flask import Blueprint, request

from app import mail
from app.api import render
from app.api.access import acting_organization, require_session, tier_gated
from app.api.common import (
    PAGING_QUERY,
    base_url,
    documented,
    json_response,
    list_args,
    listing,
    parse_body,
    parse_id,
)
from app.errors import InvalidRequest
from app.issuance import operations as issuing
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialStatus
from app.issuance.operations import IssueCredential, IssuedOffer
from app.web.idempotency import idempotent
from app.web.payloads.credentials import CredentialCreated, CredentialList, CredentialOut

bp = Blueprint("credentials", __name__)


def _links() -> IssuerLinks:
    return IssuerLinks(base_url())


def _mail_offer(offer: IssuedOffer, links: IssuerLinks) -> None:
    """The person gets the link to their offer page once the transaction commits; the
    transaction code never travels with it (OpenID4VCI 1.0 §3.5: another channel)."""
    credential: Credential = offer.credential
    recipient = credential.recipient
    if not recipient.email:
        return
    mail.send_offer(
        to=recipient.email,
        recipient_name=f"{recipient.first_name} {recipient.last_name}".strip(),
        organization=credential.organization.name,
        credential=credential.name,
        offer_page=links.offer_page(credential) or "",
        expires_at=credential.offer_expires_at,
        tx_code_required=credential.tx_code_hash is not None,
        reference=str(credential.id),
        invitation=links.offer_url(credential) if credential.protocol == "didcomm" else None,
    )


@bp.post("/credentials")
@require_session
@tier_gated("Issuing a credential")
@idempotent()
@documented(
    "Issue a credential to a recipient: an OpenID4VCI credential offer (tier-gated; "
    "tx_code shown once)",
    body=IssueCredential,
    responses={201: CredentialCreated},
    tags=("credentials",),
)
def issue_credential():
    """The recipient is emailed the offer page; the response carries the offer link too."""
    body = parse_body(IssueCredential)
    links = _links()
    offer = issuing.issue_credential(acting_organization(), body, links)
    _mail_offer(offer, links)
    return json_response(render.credential(offer.credential, links, offer.tx_code), 201)


@bp.get("/credentials")
@require_session
@documented(
    "Credentials of the acting organization, newest first",
    responses={200: CredentialList},
    query={
        **PAGING_QUERY,
        "status": "OFFERED, ISSUED, REVOKED or EXPIRED",
        "recipient_id": "Only this recipient's credentials",
    },
    tags=("credentials",),
)
def list_credentials():
    """Filtered by status and recipient; an unknown status is a 400."""
    offset, limit = list_args("status", "recipient_id")
    status = request.args.get("status") or None
    if status is not None and status not in CredentialStatus.__members__:
        raise InvalidRequest("status must be OFFERED, ISSUED, REVOKED or EXPIRED")
    recipient = request.args.get("recipient_id") or None
    recipient_id = _uuid_filter(recipient) if recipient is not None else None
    rows, total = issuing.list_credentials(
        acting_organization(),
        status=status,
        recipient_id=recipient_id,
        page=offset // limit + 1,
        limit=limit,
    )
    links = _links()
    return json_response(listing(rows, total, lambda row: render.credential(row, links)))


def _uuid_filter(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidRequest("recipient_id must be a UUID") from None


@bp.get("/credentials/<credential_id>")
@require_session
@documented("One credential", responses={200: CredentialOut}, tags=("credentials",))
def get_credential(credential_id: str):
    """Another organization's credential reads as missing."""
    row = issuing.get_credential(acting_organization(), parse_id(credential_id))
    return json_response(render.credential(row, _links()))


@bp.post("/credentials/<credential_id>/revoke")
@require_session
@documented(
    "Revoke a credential (idempotent): an issued one is marked in the status list, an offer "
    "not yet taken is withdrawn",
    responses={200: CredentialOut},
    tags=("credentials",),
)
def revoke_credential(credential_id: str):
    """200 with the credential, whatever its status was; the next status list fetch shows it."""
    row = issuing.revoke_credential(acting_organization(), parse_id(credential_id))
    return json_response(render.credential(row, _links()))


@bp.post("/credentials/<credential_id>/resend")
@require_session
@documented(
    "Send an offer not yet taken again: a new link (and tx_code), the old one stops working "
    "(a DIDComm offer's exchanges on the old invitation are closed; 400 "
    "PROTOCOL_NOT_AVAILABLE under an issuing rule DIDComm cannot honour); 409 once issued or "
    "revoked",
    responses={200: CredentialCreated},
    tags=("credentials",),
)
def resend_offer(credential_id: str):
    """Emailed again when the recipient has an address; the new tx_code is shown once."""
    links = _links()
    offer = issuing.resend_offer(acting_organization(), parse_id(credential_id), links)
    _mail_offer(offer, links)
    return json_response(render.credential(offer.credential, links, offer.tx_code))
