"""Verity's DIDComm v2 agent: the door, the dispatch, and sending.

``open_message`` runs in the web request (``POST /didcomm``) and refuses at once (400) what is
not an authcrypted message to one of our DIDs; ``handle`` runs on the job queue and hands each
message to the part whose thread it is: a connection request to the part whose invitation it
names (``handles_invitations``: the presentations' requests in ``app.presentations.didcomm``,
the issuance's offers in ``app.issuance.didcomm``), other messages by type (``handles``).
Trust pings are answered here, and anything unknown gets a problem report (both to DIDs we
know only, below). ``send`` encrypts to the holder and wraps for its mediator; the DIDComm
queue sends it (``jobs.deliver``).

**Nothing goes to strangers.** Anyone can make a DID naming any endpoint (a tarpit, someone
else's server) and send us a message from it, so only a DID that holds an exchange of ours
(it connected on one of our invitations) is answered beyond what the protocol needs: a trust
ping is answered only then (Trust Ping 2.0 lets ``response_requested`` go unanswered), and a
problem report is sent only then, or to a connection request on an invitation we did make
(expired, used, withdrawn: the wallet showing why is worth it, and only a holder of the
invitation can ask). A connection request naming no invitation of ours, or any other
message from a stranger, is logged and dropped.

``check_capacity`` is the door's bound on queued work: past ``queue_limit`` DIDComm jobs
waiting, a message is refused (503 ``DIDCOMM_BUSY`` with ``Retry-After``) rather than queued.

``claim_invitation`` is the one rule every thread shares: the first connection request on an
invitation makes its exchange, and any later one (the Socious Wallet retries up to three
times, each from a new DID; a flood does the same) meets it and is dropped.

Whatever a sender wrote (a thread id, a problem report's body, a refusal's reason quoting its
message, an address from its DID) is logged quoted (``%r``), so a newline in it cannot start
a log line of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import jobs
from app.didcomm import messaging, protocols
from app.didcomm.encoding import b64url_decode
from app.didcomm.errors import DidcommError
from app.didcomm_agent import settings
from app.didcomm_agent.identities import open_keys, sender_of
from app.didcomm_agent.models import DidcommExchange, DidcommIdentity
from app.errors import ApiError, InvalidRequest
from app.extensions import db

log = logging.getLogger(__name__)

DELIVER_JOB = "didcomm.deliver"
HANDLE_JOB = "didcomm.handle"
MEDIA_TYPE = "application/didcomm-encrypted+json"


class MessageRefused(InvalidRequest):
    """A message refused before anything is kept: 400 with a stable code."""


class DidcommBusy(ApiError):
    """More DIDComm work is waiting than the worker should be handed: come back later."""

    status = 503
    code = "DIDCOMM_BUSY"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(retry_after)}


# -- receiving -------------------------------------------------------------------------------


def check_capacity() -> None:
    """Refuse (``DidcommBusy``) while the DIDComm queue holds ``queue_limit`` jobs or more;
    a message that would be handled long after it was sent is better sent again later."""
    config = settings.current()
    if jobs.waiting(jobs.DIDCOMM) >= config.queue_limit:
        log.warning("didcomm message refused: %d jobs already waiting", config.queue_limit)
        raise DidcommBusy(
            "Too many DIDComm messages are waiting to be handled; try again later",
            retry_after=settings.BUSY_RETRY_AFTER,
        )


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


# The threads are the parts' that run them over this agent (the presentations' requests, the
# issuance's offers): they register here, and this part imports none of them.
InvitationHandler = Callable[[Opened, str], bool]
InvitationLink = Callable[[DidcommIdentity, str], str | None]
_invitation_handlers: list[InvitationHandler] = []
_invitation_links: list[InvitationLink] = []
_message_handlers: dict[str, Callable[[Opened], None]] = {}


def handles_invitations(handler: InvitationHandler) -> None:
    """``handler(opened, invitation_id)`` answers a connection request on an invitation that
    is not a presentation request's, returning whether the invitation was its own."""
    if handler not in _invitation_handlers:
        _invitation_handlers.append(handler)


def links_invitations(link: InvitationLink) -> None:
    """``link(identity, invitation_id)`` is the invitation link the part makes for a live
    exchange of ``identity``'s organization with that id, or None."""
    if link not in _invitation_links:
        _invitation_links.append(link)


def live_invitation_url(invitation: dict[str, Any]) -> str | None:
    """The link of an invitation from one of this deployment's DIDs that names a live
    exchange (a presentation request still open, an offer still offered), made anew from
    the exchange's own record; None for any other invitation.

    Only this link is ever shown under our origin: never the goal text, nor any field, of an
    invitation someone else wrote, even one naming our DID and a live exchange."""
    identity = db.session.scalar(
        select(DidcommIdentity).where(DidcommIdentity.did == invitation.get("from"))
    )
    invitation_id = invitation.get("id")
    if identity is None or not isinstance(invitation_id, str):
        return None
    return next((url for link in _invitation_links if (url := link(identity, invitation_id))), None)


def handles(kind: str, handler: Callable[[Opened], None]) -> None:
    """``handler(opened)`` acts on messages of type ``kind``."""
    _message_handlers[kind] = handler


def handle(raw: bytes) -> None:
    """Act on one message that ``open_message`` accepted: the job queue's side."""
    try:
        opened = open_message(raw)
    except MessageRefused as exc:
        log.warning("didcomm message dropped: %r", exc.message)
        return
    kind = opened.message.get("type")
    if kind == protocols.CONNECTION_REQUEST:
        _on_connection_request(opened)
    elif kind == protocols.PING:
        if not opened.message.get("body", {}).get("response_requested", True):
            return
        if not known_sender(opened):
            log.info("didcomm trust ping from a DID with no exchange of ours: not answered")
            return
        send(opened.identity, protocols.ping_response(opened.message, opened.identity.did))
    elif kind in _message_handlers:
        _message_handlers[kind](opened)
    elif kind == protocols.PROBLEM_REPORT:
        log.info("didcomm problem report from a wallet: %r", opened.message.get("body"))
    else:
        report(opened, "e.p.msg.unsupported", f"Verity does not handle {kind!r} messages.")


def _on_connection_request(opened: Opened) -> None:
    """Each invitation is some part's (a presentation request's, an offer's): the first
    handler that knows the invitation answers."""
    thread = opened.message.get("thid") or opened.message.get("pthid")
    if isinstance(thread, str) and any(h(opened, thread) for h in _invitation_handlers):
        return
    # Not one of our invitations: whoever sent it gets nothing (see the module's doc).
    log.info("didcomm connection request naming no invitation of ours dropped")


def known_sender(opened: Opened) -> bool:
    """Whether the sender's DID connected on one of this DID's invitations (any exchange,
    finished or not)."""
    return (
        db.session.scalar(
            select(DidcommExchange.id)
            .where(
                DidcommExchange.identity_id == opened.identity.id,
                DidcommExchange.holder_did == opened.sender,
            )
            .limit(1)
        )
        is not None
    )


def claim_invitation(exchange: DidcommExchange) -> bool:
    """Keep the exchange of the first connection request on its invitation; False for any
    later one (a retry from a new DID, or a flood): it was answered once, which is all it
    gets. The unique invitation decides concurrent requests."""
    try:
        with db.session.begin_nested():
            db.session.add(exchange)
    except IntegrityError:
        log.info(
            "didcomm connection request on answered invitation %r dropped", exchange.invitation_id
        )
        return False
    return True


def report(opened: Opened, code: str, comment: str) -> None:
    """Tell the wallet why nothing came of its message (it may show it), and log it."""
    log.info("didcomm problem report %s: %r", code, comment)
    kind = opened.message.get("type")
    if kind == protocols.PROBLEM_REPORT:
        return  # never answer a problem report with another
    # A connection request reaches here only from the part whose invitation it names.
    if kind != protocols.CONNECTION_REQUEST and not known_sender(opened):
        log.info("didcomm problem report %s not sent: the sender has no exchange of ours", code)
        return
    send(
        opened.identity,
        protocols.problem_report(opened.message, opened.identity.did, code, comment),
    )


# -- sending ---------------------------------------------------------------------------------


def send(identity: DidcommIdentity, message: dict[str, Any]) -> None:
    """Encrypt ``message`` to its recipient, wrapped for the recipient's mediator, and hand
    it to the DIDComm queue (``jobs.deliver`` sends it, retrying with backoff)."""
    recipient = message["to"][0]
    try:
        outbound = messaging.for_holder(message, sender=sender_of(identity), to_did=recipient)
    except DidcommError as exc:
        log.warning("didcomm message to %r not sent: %r", recipient[:60], exc.reason)
        return
    jobs.enqueue(DELIVER_JOB, outbound.url, outbound.body.decode("utf-8"), 0)


def retry_delay(attempt: int) -> float:
    """Seconds before attempt ``attempt`` (1-based): 5, 10, 20, 40..."""
    return 5.0 * 2 ** (attempt - 1)
