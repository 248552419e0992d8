"""The DIDComm v2 messages Verity exchanges with Identus wallets, as the wallets speak them.

Message types are Identus's where Identus has its own: the connection protocol
(``https://atalaprism.io/mercury/connections/1.0``, not DID Exchange) and present-proof 3.0 in
Identus's namespace (``https://didcomm.atalaprism.io/present-proof/3.0``). Shapes follow the
Identus cloud agent, which the Socious Wallet was built against (``ConnectionResponse.scala``,
``PresentationServiceImpl.scala``), and what the SDK 7.0.0 reads and writes
(``CreatePresentation.ts``, ``MessageAttachment.ts``). Trust ping and problem reports are the
DIDComm v2 ones (DIDComm Messaging v2 §10 "Problem Reports", Trust Ping 2.0).

Builders return plaintext messages as dicts; ``app.didcomm.messaging`` encrypts them.
"""

from __future__ import annotations

import base64
import binascii
import time
import uuid
from typing import Any

from app.didcomm.errors import Malformed

CONNECTION_REQUEST = "https://atalaprism.io/mercury/connections/1.0/request"
CONNECTION_RESPONSE = "https://atalaprism.io/mercury/connections/1.0/response"
PRESENT_PROOF = "https://didcomm.atalaprism.io/present-proof/3.0"
REQUEST_PRESENTATION = f"{PRESENT_PROOF}/request-presentation"
PRESENTATION = f"{PRESENT_PROOF}/presentation"
PING = "https://didcomm.org/trust-ping/2.0/ping"
PING_RESPONSE = "https://didcomm.org/trust-ping/2.0/ping-response"
PROBLEM_REPORT = "https://didcomm.org/report-problem/2.0/problem-report"
# The attachment format Identus uses for a JWT presentation or credential (its "prism/jwt").
PRISM_JWT = "prism/jwt"
# A VP JWT holding one credential is a few kilobytes; far more is not one.
MAX_PRESENTATION = 64 * 1024


def _new_id() -> str:
    return str(uuid.uuid4())


def _envelope(kind: str, sender: str, recipient: str, body: dict[str, Any], **more: Any) -> dict:
    message = {
        "id": _new_id(),
        "type": kind,
        "from": sender,
        "to": [recipient],
        "created_time": int(time.time()),
        "body": body,
    }
    message.update({name: value for name, value in more.items() if value is not None})
    return message


def thread_of(message: dict[str, Any]) -> str | None:
    """The thread a message belongs to (DIDComm Messaging v2 §4.2 "thid"); a first message
    starts its own thread, named by its id."""
    thid = message.get("thid")
    return thid if isinstance(thid, str) and thid else None


def connection_response(request: dict[str, Any], sender: str) -> dict[str, Any]:
    """The answer to an Identus connection request: same thread, the invitation's body echoed
    (the cloud agent's ``ConnectionResponse.makeResponseFromRequest``). The SDK 7.0.0 has no
    handler for it, yet a wallet built against the cloud agent may wait for one."""
    body = request.get("body") if isinstance(request.get("body"), dict) else {}
    return _envelope(
        CONNECTION_RESPONSE,
        sender,
        request["from"],
        {name: body[name] for name in ("goal_code", "goal", "accept") if name in body},
        thid=thread_of(request) or request.get("id"),
    )


def request_presentation(
    sender: str, recipient: str, *, challenge: str, domain: str, name: str
) -> dict[str, Any]:
    """A present-proof 3.0 request for one JWT credential, as the Identus cloud agent writes it
    (``createDidCommRequestPresentation``): the ``prism/jwt`` attachment carries the challenge
    (the presentation's ``nonce``) and the domain (its ``aud``)."""
    return _envelope(
        REQUEST_PRESENTATION,
        sender,
        recipient,
        {"goal_code": "Request Proof Presentation", "will_confirm": False, "proof_types": []},
        attachments=[
            {
                "id": _new_id(),
                "media_type": "application/json",
                "format": PRISM_JWT,
                "data": {
                    "json": {
                        "options": {"challenge": challenge, "domain": domain},
                        "presentation_definition": {
                            "id": _new_id(),
                            "name": name,
                            "input_descriptors": [],
                        },
                    }
                },
            }
        ],
    )


def presented_jwt(message: dict[str, Any]) -> str:
    """The VP JWT a present-proof 3.0 presentation carries: the first ``prism/jwt``
    attachment, its data base64 (the SDK writes base64url without padding) or a JSON string."""
    attachments = message.get("attachments")
    if not isinstance(attachments, list) or not attachments:
        raise Malformed("The presentation carries no attachment.")
    for attachment in attachments:
        if not isinstance(attachment, dict):
            continue
        if attachment.get("format") not in (PRISM_JWT, None):
            continue
        data = attachment.get("data")
        if not isinstance(data, dict):
            continue
        token = _attached_text(data)
        if token is not None:
            return token
    raise Malformed("The presentation carries no prism/jwt presentation.")


def _attached_text(data: dict[str, Any]) -> str | None:
    if isinstance(data.get("base64"), str):
        encoded = data["base64"]
        if len(encoded) > MAX_PRESENTATION * 4 // 3 + 4:
            raise Malformed("The presented JWT is too large.")
        try:
            raw = base64.urlsafe_b64decode(
                encoded.replace("+", "-").replace("/", "_") + "=" * (-len(encoded) % 4)
            )
            return raw.decode("ascii").strip()
        except (binascii.Error, ValueError):
            raise Malformed("The presentation's attachment is not base64.") from None
    if isinstance(data.get("json"), str):
        return data["json"]
    return None


def ping_response(ping: dict[str, Any], sender: str) -> dict[str, Any]:
    return _envelope(PING_RESPONSE, sender, ping["from"], {}, thid=ping.get("id"))


def problem_report(about: dict[str, Any], sender: str, code: str, comment: str) -> dict[str, Any]:
    """DIDComm Messaging v2 §10: ``code`` is ``<sorter>.<scope>.<descriptors>`` ("e.p.xfer"...),
    ``pthid`` the thread the problem is about."""
    return _envelope(
        PROBLEM_REPORT,
        sender,
        about["from"],
        {"code": code, "comment": comment},
        pthid=thread_of(about) or about.get("id"),
    )


# -- issue-credential 3.0 ---------------------------------------------------------------------

ISSUE_CREDENTIAL_3 = "https://didcomm.org/issue-credential/3.0"
OFFER_CREDENTIAL = f"{ISSUE_CREDENTIAL_3}/offer-credential"
REQUEST_CREDENTIAL = f"{ISSUE_CREDENTIAL_3}/request-credential"
ISSUE_CREDENTIAL = f"{ISSUE_CREDENTIAL_3}/issue-credential"
CREDENTIAL_PREVIEW = f"{ISSUE_CREDENTIAL_3}/credential-preview"


def offer_credential(
    sender: str,
    recipient: str,
    *,
    attributes: list[tuple[str, str]],
    challenge: str,
    domain: str,
    thread: str | None = None,
) -> dict[str, Any]:
    """An offer as the Identus cloud agent writes it and the SDK 7.0.0 reads it: a
    ``credential_preview`` whose attributes are non-empty strings (``validateCredentialPreview``),
    and a ``prism/jwt`` attachment whose options the wallet's request JWT must carry (its
    ``nonce`` the challenge, its ``aud`` the domain). The offer starts its thread (``thid`` its
    own id, as the cloud agent writes it): the SDK puts the offer's ``thid`` on its request,
    and nothing else would tie the request to the offer."""
    message = _envelope(
        OFFER_CREDENTIAL,
        sender,
        recipient,
        {
            "goal_code": "Offer Credential",
            "credential_preview": {
                "type": CREDENTIAL_PREVIEW,
                "body": {"attributes": [{"name": n, "value": v} for n, v in attributes]},
            },
        },
        thid=thread,
        attachments=[
            {
                "id": _new_id(),
                "media_type": "application/json",
                "format": PRISM_JWT,
                "data": {"json": {"options": {"challenge": challenge, "domain": domain}}},
            }
        ],
    )
    message.setdefault("thid", message["id"])
    return message


def requested_jwt(message: dict[str, Any]) -> str:
    """The JWT of a request-credential: its ``prism/jwt`` attachment, base64 (the SDK writes
    the standard alphabet without padding)."""
    return presented_jwt(message)


def issue_credential(request: dict[str, Any], sender: str, credential_jwt: str) -> dict[str, Any]:
    """The credential, on the request's thread: a ``prism/jwt`` attachment whose data is the
    VC-JWT in standard base64 without padding (what the SDK's decoder takes)."""
    encoded = base64.b64encode(credential_jwt.encode("ascii")).decode("ascii").rstrip("=")
    return _envelope(
        ISSUE_CREDENTIAL,
        sender,
        request["from"],
        {},
        thid=thread_of(request) or request.get("id"),
        attachments=[
            {
                "id": _new_id(),
                "media_type": PRISM_JWT,
                "format": PRISM_JWT,
                "data": {"base64": encoded},
            }
        ],
    )
