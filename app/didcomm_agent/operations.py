"""Verity as a DIDComm v2 verifier: identities, invitations, and the messages wallets send.

The exchange, as the Socious Wallet (Identus SDK 7.0.0) runs it:

1. The person's connection link is an out-of-band 2.0 invitation from the organization's
   did:peer:2, whose id is the presentation request's id.
2. The wallet sends an Identus connection request on that thread, from a new did:peer:2; it
   may send up to three, each from yet another DID, and never calls back. The first one makes
   the exchange (``DidcommExchange``, unique per presentation request), the rest meet it and
   are dropped: the invitation is answered once.
3. Verity answers with a connection response and a present-proof 3.0 request whose challenge
   is the presentation request's nonce (fresh, random, single-use) and whose domain is the
   organization's DID, both sent through the holder's mediator.
4. The presentation comes back on the request's thread from the same DID, and is decided like
   any other ``jwt_vc_json`` presentation (``app.presentations``): the nonce is consumed with
   the request, so a replay or an answer to another request is refused.

Handling runs on the job queue; ``open_message`` alone runs in the web request, to refuse at
once (400) what is not an encrypted message from a known kind of sender to one of our DIDs.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock, jobs
from app.didcomm import invitation as oob
from app.didcomm import messaging, protocols
from app.didcomm.encoding import b64url_decode
from app.didcomm.errors import DidcommError, Malformed
from app.didcomm_agent import settings
from app.didcomm_agent.identities import existing_identity, open_keys, sender_of
from app.didcomm_agent.models import DidcommExchange, DidcommIdentity
from app.errors import InvalidRequest
from app.extensions import db
from app.presentations import operations as presentations
from app.presentations.decide import Context
from app.verifications.models import PresentationRequest, Verification

log = logging.getLogger(__name__)

DELIVER_JOB = "didcomm.deliver"
HANDLE_JOB = "didcomm.handle"
MEDIA_TYPE = "application/didcomm-encrypted+json"


class MessageRefused(InvalidRequest):
    """A message refused before anything is kept: 400 with a stable code."""


# -- invitations -----------------------------------------------------------------------------


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
    return oob.oob_url(f"{settings.current().base_url}/didcomm/invitation", invitation)


# -- receiving -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Opened:
    identity: DidcommIdentity
    message: dict[str, Any]
    sender: str  # the sender's DID (authcrypt)


def open_message(raw: bytes) -> Opened:
    """Decrypt ``raw`` with the key of one of our DIDs, or refuse it (``MessageRefused``).

    Only authenticated encryption is taken: every message of these protocols comes from the
    holder's DID, and an anonymous one could not be answered or tied to an exchange.
    """
    kek = settings.current().kek
    identities: dict[str, DidcommIdentity] = {}

    def private_key(kid: str) -> X25519PrivateKey | None:
        did = kid.split("#", 1)[0]
        identity = identities.get(did) or db.session.scalar(
            select(DidcommIdentity).where(DidcommIdentity.did == did)
        )
        if identity is None:
            return None
        identities[did] = identity
        jwk = open_keys(identity.sealed_keys, kek).get(kid)
        if jwk is None or jwk.get("crv") != "X25519":
            return None
        return X25519PrivateKey.from_private_bytes(b64url_decode(jwk["d"]))

    try:
        unpacked = messaging.unpack(raw, private_keys=private_key)
    except DidcommError as exc:
        raise MessageRefused(exc.reason, code="INVALID_DIDCOMM_MESSAGE") from None
    if unpacked.sender_kid is None:
        raise MessageRefused(
            "Messages must be encrypted to and from a DID (authcrypt); this one names no sender",
            code="UNKNOWN_SENDER",
        )
    recipient = unpacked.recipient_kid.split("#", 1)[0]
    return Opened(identities[recipient], unpacked.message, unpacked.sender_kid.split("#", 1)[0])


# Threads other parts run over the same agent (the issuance's credential offers) are theirs:
# they register here, and this part imports none of them.
InvitationHandler = Callable[[Opened, str], bool]
_invitation_handlers: list[InvitationHandler] = []
_message_handlers: dict[str, Callable[[Opened], None]] = {}


def handles_invitations(handler: InvitationHandler) -> None:
    """``handler(opened, invitation_id)`` answers a connection request on an invitation that
    is not a presentation request's, returning whether the invitation was its own."""
    if handler not in _invitation_handlers:
        _invitation_handlers.append(handler)


def handles(kind: str, handler: Callable[[Opened], None]) -> None:
    """``handler(opened)`` acts on messages of type ``kind``."""
    _message_handlers[kind] = handler


def handle(raw: bytes, context: Callable[[str, str], Context]) -> None:
    """Act on one message that ``open_message`` accepted: the job queue's side."""
    try:
        opened = open_message(raw)
    except MessageRefused as exc:
        log.warning("didcomm message dropped: %s", exc.message)
        return
    kind = opened.message.get("type")
    if kind == protocols.CONNECTION_REQUEST:
        _on_connection_request(opened)
    elif kind == protocols.PRESENTATION:
        _on_presentation(opened, context)
    elif kind == protocols.PING:
        if opened.message.get("body", {}).get("response_requested", True):
            send(opened.identity, protocols.ping_response(opened.message, opened.identity.did))
    elif kind in _message_handlers:
        _message_handlers[kind](opened)
    elif kind == protocols.PROBLEM_REPORT:
        log.info("didcomm problem report from a wallet: %s", opened.message.get("body"))
    else:
        report(opened, "e.p.msg.unsupported", f"Verity does not handle {kind!r} messages.")


def _on_connection_request(opened: Opened) -> None:
    thread = opened.message.get("thid") or opened.message.get("pthid")
    request = _invited_request(thread)
    theirs = request is None and isinstance(thread, str)
    if theirs and any(handler(opened, thread) for handler in _invitation_handlers):
        return
    if request is None or request.consumed_at is not None or request.expires_at <= clock.now():
        report(opened, "e.p.req.expired", "This invitation has expired or was already used.")
        return
    exchange = DidcommExchange(
        invitation_id=str(request.id),
        presentation_request_id=request.id,
        identity_id=opened.identity.id,
        holder_did=opened.sender,
        request_message_id="",
    )
    _, verification = presentations.verification_of(request.id)
    if verification.organization_id != opened.identity.organization_id:
        report(opened, "e.p.req.unknown", "This invitation is not from this organization.")
        return
    asking = protocols.request_presentation(
        opened.identity.did,
        opened.sender,
        challenge=request.nonce,
        domain=opened.identity.did,
        name=verification.name,
    )
    exchange.request_message_id = asking["id"]
    if not claim_invitation(exchange):
        return
    send(opened.identity, protocols.connection_response(opened.message, opened.identity.did))
    send(opened.identity, asking)


def claim_invitation(exchange: DidcommExchange) -> bool:
    """Keep the exchange of the first connection request on its invitation; False for any
    later one (a retry from a new DID, or a flood): it was answered once, which is all it
    gets. The unique invitation decides concurrent requests."""
    try:
        with db.session.begin_nested():
            db.session.add(exchange)
    except IntegrityError:
        log.info(
            "didcomm connection request on answered invitation %s dropped", exchange.invitation_id
        )
        return False
    return True


def _invited_request(thread: Any) -> PresentationRequest | None:
    try:
        request_id = uuid.UUID(str(thread))
    except ValueError:
        return None
    return db.session.get(PresentationRequest, request_id)


def _on_presentation(opened: Opened, context: Callable[[str, str], Context]) -> None:
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
        report(opened, "e.p.msg.unknown-thread", "This presentation answers no request of ours.")
        return
    if exchange.holder_did != opened.sender:
        report(opened, "e.p.msg.unknown-sender", "This presentation comes from another DID.")
        return
    try:
        presentation = protocols.presented_jwt(opened.message)
        pending = presentations.read_pending(
            exchange.presentation_request_id, None, lambda _request: opened.identity.did
        )
        presentations.decide_and_record(
            pending, presentation, context(pending.audience, pending.nonce)
        )
    except Malformed as exc:
        report(opened, "e.p.msg.invalid", exc.reason)
        return
    except InvalidRequest as exc:
        report(opened, "e.p.req.answered", exc.message)
        return
    exchange.presented_at = clock.now()


def report(opened: Opened, code: str, comment: str) -> None:
    """Tell the wallet why nothing came of its message (it may show it), and log it."""
    log.info("didcomm problem report %s: %s", code, comment)
    if opened.message.get("type") == protocols.PROBLEM_REPORT:
        return  # never answer a problem report with another
    send(
        opened.identity,
        protocols.problem_report(opened.message, opened.identity.did, code, comment),
    )


# -- sending ---------------------------------------------------------------------------------


def send(identity: DidcommIdentity, message: dict[str, Any]) -> None:
    """Encrypt ``message`` to its recipient, wrapped for the recipient's mediator, and hand
    it to the deliveries queue (``jobs.deliver`` sends it, retrying with backoff)."""
    recipient = message["to"][0]
    try:
        outbound = messaging.for_holder(message, sender=sender_of(identity), to_did=recipient)
    except DidcommError as exc:
        log.warning("didcomm message to %s not sent: %s", recipient[:60], exc.reason)
        return
    jobs.enqueue(DELIVER_JOB, outbound.url, outbound.body.decode("utf-8"), 0)


def retry_delay(attempt: int) -> float:
    """Seconds before attempt ``attempt`` (1-based): 5, 10, 20, 40..."""
    return 5.0 * 2 ** (attempt - 1)
