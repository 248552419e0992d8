"""Presentation requests answered over DIDComm: the verifier's side of Verity's agent.

The exchange, as the Socious Wallet (Identus SDK 7.0.0) runs it:

1. The person's connection link is an out-of-band 2.0 invitation from the organization's
   did:peer:2, whose id is the presentation request's id.
2. The wallet sends an Identus connection request on that thread, from a new did:peer:2; it
   may send up to three, each from yet another DID, and never calls back. The first one makes
   the exchange (``claim_invitation``), the rest meet it and are dropped: the invitation is
   answered once.
3. Verity answers with a connection response and a present-proof 3.0 request whose challenge
   is the presentation request's nonce (fresh, random, single-use) and whose domain is the
   organization's DID, both sent through the holder's mediator.
4. The presentation comes back on the request's thread from the same DID, and is decided like
   any other ``jwt_vc_json`` presentation: the nonce is consumed with the request, so a replay
   or an answer to another request is refused.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app import clock
from app.didcomm import invitation as oob
from app.didcomm import protocols
from app.didcomm.errors import Malformed
from app.didcomm_agent import operations as agent
from app.didcomm_agent import settings
from app.didcomm_agent.identities import existing_identity
from app.didcomm_agent.models import DidcommExchange, DidcommIdentity
from app.errors import InvalidRequest
from app.extensions import db
from app.presentations import operations as presentations
from app.verifications.models import DIDCOMM, PresentationRequest, Verification


def invitation_url(request: PresentationRequest, verification: Verification) -> str | None:
    """The out-of-band invitation for a presentation request, as a link; None before the
    organization has a DID (``identities.identity_of`` makes it when the request is minted)."""
    identity = existing_identity(verification.organization_id)
    if identity is None:
        return None
    invitation = oob.make(
        identity.did,
        invitation_id=str(request.id),
        goal=f"{verification.organization.name}: {verification.name}",
        expires_time=int(request.expires_at.timestamp()),
    )
    return oob.oob_url(
        f"{settings.current().base_url}/didcomm/invitation", invitation, max_length=oob.QR_CAPACITY
    )


def live_invitation(identity: DidcommIdentity, invitation_id: str) -> str | None:
    """The link of a presentation request of ``identity``'s organization that can still be
    answered over DIDComm (the invitation page shows only these), else None."""
    request = _invited_request(invitation_id)
    if request is None or request.consumed_at is not None or request.expires_at <= clock.now():
        return None
    _, verification = presentations.verification_of(request.id)
    if verification.organization_id != identity.organization_id:
        return None
    if DIDCOMM not in verification.protocols():
        return None
    return invitation_url(request, verification)


def on_invitation(opened: agent.Opened, invitation_id: str) -> bool:
    """A connection request on a presentation request's invitation: answered with the
    present-proof request, once."""
    request = _invited_request(invitation_id)
    if request is None:
        return False
    if request.consumed_at is not None or request.expires_at <= clock.now():
        agent.report(opened, "e.p.req.expired", "This invitation has expired or was already used.")
        return True
    exchange = DidcommExchange(
        invitation_id=str(request.id),
        presentation_request_id=request.id,
        identity_id=opened.identity.id,
        holder_did=opened.sender,
        request_message_id="",
    )
    _, verification = presentations.verification_of(request.id)
    if verification.organization_id != opened.identity.organization_id:
        agent.report(opened, "e.p.req.unknown", "This invitation is not from this organization.")
        return True
    if DIDCOMM not in verification.protocols():
        # Its ID is in its OpenID4VP link, so anyone holding that link could name it here.
        agent.report(opened, "e.p.req.unknown", "This request is not answered over DIDComm.")
        return True
    asking = protocols.request_presentation(
        opened.identity.did,
        opened.sender,
        challenge=request.nonce,
        domain=opened.identity.did,
        name=verification.name,
    )
    exchange.request_message_id = asking["id"]
    if agent.claim_invitation(exchange):
        agent.send(
            opened.identity, protocols.connection_response(opened.message, opened.identity.did)
        )
        agent.send(opened.identity, asking)
    return True


def _invited_request(thread: Any) -> PresentationRequest | None:
    try:
        request_id = uuid.UUID(str(thread))
    except ValueError:
        return None
    return db.session.get(PresentationRequest, request_id)


def on_presentation(opened: agent.Opened) -> None:
    """The presentation, on our request's thread from the DID that connected: decided."""
    thread = protocols.thread_of(opened.message)
    exchange = (
        db.session.scalar(
            select(DidcommExchange).where(DidcommExchange.request_message_id == thread)
        )
        if thread
        else None
    )
    if (
        exchange is None
        or exchange.identity_id != opened.identity.id
        or exchange.presentation_request_id is None
    ):
        agent.report(
            opened, "e.p.msg.unknown-thread", "This presentation answers no request of ours."
        )
        return
    if exchange.holder_did != opened.sender:
        agent.report(opened, "e.p.msg.unknown-sender", "This presentation comes from another DID.")
        return
    try:
        presentation = protocols.presented_jwt(opened.message)
        pending = presentations.read_pending(
            exchange.presentation_request_id, None, lambda _request: opened.identity.did
        )
        context = settings.context()(pending.audience, pending.nonce)
        presentations.decide_and_record(pending, presentation, context)
    except Malformed as exc:
        agent.report(opened, "e.p.msg.invalid", exc.reason)
        return
    except InvalidRequest as exc:
        agent.report(opened, "e.p.req.answered", exc.message)
        return
    exchange.presented_at = clock.now()


def register() -> None:
    """Hand the agent this part's threads (called by the application factory)."""
    agent.handles_invitations(on_invitation)
    agent.links_invitations(live_invitation)
    agent.handles(protocols.PRESENTATION, on_presentation)
