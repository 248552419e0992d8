"""Where Identus wallets reach Verity's DIDComm agent: ``POST /didcomm`` and the invitation.

``POST /didcomm`` takes one encrypted message (``application/didcomm-encrypted+json``), opens
it to refuse at once what is not for us (400 with a code, nothing kept), and answers 202: the
message is handled on the job queue, since handling sends messages to the holder's mediator
and may fetch issuer keys and status lists. The SDK treats any other 2xx the same way.

The door is bounded (``app.throttle``, ``agent.check_capacity``): a budget per client IP
(counted before the message is opened) and per sender DID (once it is), 429 with
``Retry-After`` past either; and 503 ``DIDCOMM_BUSY`` with ``Retry-After`` while the DIDComm
queue already holds ``DIDCOMM_QUEUE_LIMIT`` jobs.

The invitation's address (``GET /didcomm/invitation?_oob=...``) is a page of the person's
pages (``app.pages.views``).
"""

from __future__ import annotations

import base64

from flask import Blueprint, request

from app import jobs, throttle
from app.database import reading
from app.didcomm_agent import operations as agent
from app.errors import ApiError, UnsupportedMediaType

bp = Blueprint("didcomm", __name__)

# DIDComm Messaging v2 §9.3: the media type of an encrypted message. Plain JSON is taken too,
# since some agents label their messages so; a signed or plaintext message is refused when
# opened, whatever its label.
ACCEPTED_TYPES = (agent.MEDIA_TYPE, "application/json")
# A presentation of one credential is a few kilobytes; far more is not a message of ours.
MAX_MESSAGE_BYTES = 256 * 1024


class MessageTooLarge(ApiError):
    """Refused like every other message that is not ours (400), with its own code."""

    status = 400
    code = "MESSAGE_TOO_LARGE"


@bp.post("/didcomm")
def receive():
    """202 once the message is opened and queued; 400 for anything that is not ours (415 for
    a body not labelled as a DIDComm message); 429 or 503 past the door's bounds."""
    media_type = (request.mimetype or "").lower()
    if media_type not in ACCEPTED_TYPES:
        raise UnsupportedMediaType(f"Send DIDComm messages as {agent.MEDIA_TYPE}")
    if (request.content_length or 0) > MAX_MESSAGE_BYTES:
        raise MessageTooLarge(f"A DIDComm message may be at most {MAX_MESSAGE_BYTES} bytes")
    raw = request.stream.read(MAX_MESSAGE_BYTES + 1)
    if len(raw) > MAX_MESSAGE_BYTES:
        raise MessageTooLarge(f"A DIDComm message may be at most {MAX_MESSAGE_BYTES} bytes")
    with reading():  # only reads: no SQLite write lock kept while the limiter counts
        opened = agent.open_message(raw)
    throttle.count_didcomm_sender(opened.sender)  # 429 past the sender DID's budget
    agent.check_capacity()  # 503 past the bound on waiting DIDComm work
    jobs.enqueue(agent.HANDLE_JOB, base64.b64encode(raw).decode("ascii"))
    return "", 202
