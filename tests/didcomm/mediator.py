"""A DIDComm v2 mediator on loopback, just what the Identus SDK 7 (the Socious Wallet) needs
from one, so the tests can run the SDK's own Agent with no network.

- Coordinate Mediation 2.0: ``mediate-request`` is granted with a *string* ``routing_did``
  (the SDK reads ``body.routing_did`` as one DID, ``MediateGrant.ts``); ``keylist-update``
  adds or removes the holder's DIDs (``keylist-update-response``).
- Routing 2.0: a ``forward`` whose ``next`` is on some holder's keylist is queued for it;
  any other is recorded in :attr:`Mediator.unroutable` and dropped.
- Pickup 3.0: ``delivery-request`` (the SDK's every-5-s poll, ``{"limit": 10}``) answers a
  ``delivery`` whose attachments carry the queued JWEs as ``data.json`` (what
  ``PickupDelivery.ts`` unpacks), or a ``status`` when the queue is empty;
  ``status-request`` answers ``status``; ``messages-received`` removes what was delivered.

Replies go back in the HTTP response only when the message asks ``return_route: "all"``
(the SDK does for mediate-request, delivery-request and messages-received), authcrypted to
the sender; anything else is answered ``202`` with no body. Every answer is 2xx unless the
request cannot be read: the SDK's polling loop stops for good after one failed request
(``CancellableTask.loopOnTaskEvery``), so a 5xx here means a bug to look at in
:attr:`Mediator.errors`.

All crypto is ``app.didcomm.messaging``: this mediator is also a check that Verity's
pack/unpack interoperate with the SDK in both directions.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from app.didcomm import messaging, peer_did
from app.didcomm.encoding import b64url_decode
from app.didcomm.errors import DidcommError

COORDINATE = "https://didcomm.org/coordinate-mediation/2.0/"
PICKUP = "https://didcomm.org/messagepickup/3.0/"
FORWARD = "https://didcomm.org/routing/2.0/forward"


def _did_of(did_or_kid: str) -> str:
    return did_or_kid.split("#", 1)[0]


@dataclass(frozen=True)
class Passed:
    """One message the mediator unpacked, and the type of what it answered (None: nothing)."""

    type: str
    id: str
    sender: str | None  # authenticated sender DID, None for anoncrypt
    thid: str | None
    body: dict[str, Any]
    next: str | None = None  # a forward's body.next
    answer: str | None = None


@dataclass
class _Queued:
    id: str
    jwe: dict[str, Any]


@dataclass
class _State:
    keylists: dict[str, set[str]] = field(default_factory=dict)  # host DID -> recipient DIDs
    queues: dict[str, list[_Queued]] = field(default_factory=dict)  # recipient DID -> JWEs


class Mediator:
    """Start with :meth:`start` (or ``with``), stop with :meth:`close`.

    :attr:`did` is its did:peer:2 (new-style service whose ``uri`` is :attr:`url`), the value
    to start an SDK agent with. :attr:`passed` lists what it unpacked, in order;
    :meth:`wait_for` waits for a message there.
    """

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.identity = peer_did.make(self.url)
        self.did = self.identity.did
        self._private_keys = messaging.private_keys(self.identity)
        self._state = _State()
        self._changed = threading.Condition()
        self.passed: list[Passed] = []
        self.unroutable: list[str] = []  # forward next DIDs no holder registered
        self.errors: list[str] = []
        self._thread: threading.Thread | None = None

    def start(self) -> Mediator:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Mediator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # What the tests read.

    def wait_for(
        self,
        type_: str,
        *,
        timeout: float = 30,
        where: Callable[[Passed], bool] = lambda _: True,
    ) -> Passed:
        """The first message of ``type_`` that passed (and satisfies ``where``), waiting up to
        ``timeout`` seconds for it; AssertionError if none came."""
        found: list[Passed] = []

        def seen() -> bool:
            found[:] = [p for p in self.passed if p.type == type_ and where(p)]
            return bool(found)

        with self._changed:
            if not self._changed.wait_for(seen, timeout):
                types = [p.type.rsplit("/", 1)[-1] for p in self.passed]
                raise AssertionError(f"no {type_} reached the mediator; it saw {types}")
        return found[0]

    def keylist(self, host: str) -> set[str]:
        """The recipient DIDs a mediated host registered."""
        with self._changed:
            return set(self._state.keylists.get(host, ()))

    def queued(self, recipient: str) -> int:
        """How many messages wait for ``recipient`` (not yet acknowledged)."""
        with self._changed:
            return len(self._state.queues.get(_did_of(recipient), ()))

    # The protocol.

    def handle(self, raw: bytes) -> bytes | None:
        """The packed answer to return in the HTTP response, or None for a bare 202."""
        unpacked = messaging.unpack(raw, private_keys=self._private_keys)
        msg = unpacked.message
        sender = unpacked.sender
        handler = self._handlers.get(msg["type"])
        answer = handler(self, msg, sender) if handler else None
        with self._changed:
            self.passed.append(
                Passed(
                    type=msg["type"],
                    id=msg["id"],
                    sender=sender,
                    thid=msg.get("thid"),
                    body=msg.get("body") or {},
                    next=(msg.get("body") or {}).get("next") if msg["type"] == FORWARD else None,
                    answer=answer["type"] if answer else None,
                )
            )
            self._changed.notify_all()
        if answer is None or msg.get("return_route") != "all" or sender is None:
            return None
        reply = {**answer, "to": [sender]}
        return messaging.pack(reply, to_did=sender, sender=self.identity)

    def _reply(self, msg: dict[str, Any], type_: str, body: dict[str, Any], **headers: Any):
        return messaging.message(type_, body, thid=msg.get("thid") or msg["id"], **headers)

    def _mediate_request(self, msg, sender):
        if sender is None:
            return None
        with self._changed:
            self._state.keylists.setdefault(sender, set())
        # routing_did: one DID, a string (the SDK does Domain.DID.from(routing_did)).
        return self._reply(msg, COORDINATE + "mediate-grant", {"routing_did": self.did})

    def _keylist_update(self, msg, sender):
        updated = []
        with self._changed:
            keys = self._state.keylists.get(sender) if sender else None
            for update in (msg.get("body") or {}).get("updates", []):
                did, action = update.get("recipient_did"), update.get("action")
                if keys is None or not isinstance(did, str) or action not in ("add", "remove"):
                    result = "client_error"
                elif action == "add":
                    keys.add(_did_of(did))
                    result = "success"
                else:
                    keys.discard(_did_of(did))
                    result = "success"
                updated.append({"recipient_did": did, "action": action, "result": result})
        return self._reply(msg, COORDINATE + "keylist-update-response", {"updated": updated})

    def _forward(self, msg, sender):
        next_did = (msg.get("body") or {}).get("next")
        attachments = msg.get("attachments") or []
        with self._changed:
            known = any(
                isinstance(next_did, str) and _did_of(next_did) in keys
                for keys in self._state.keylists.values()
            )
            if not known or not attachments:
                self.unroutable.append(str(next_did))
                return None
            queue = self._state.queues.setdefault(_did_of(next_did), [])
            for attachment in attachments:
                queue.append(_Queued(str(uuid.uuid4()), _attached_jwe(attachment)))
        return None

    def _recipients(self, host: str | None, body: dict[str, Any]) -> list[str]:
        keys = self._state.keylists.get(host or "", set())
        wanted = body.get("recipient_did")
        return (
            [_did_of(wanted)]
            if isinstance(wanted, str) and _did_of(wanted) in keys
            else sorted(keys)
        )

    def _status(self, msg, sender):
        body = msg.get("body") or {}
        with self._changed:
            count = sum(len(self._state.queues.get(r, ())) for r in self._recipients(sender, body))
        status = {"message_count": count, "live_delivery": False}
        if isinstance(body.get("recipient_did"), str):
            status["recipient_did"] = body["recipient_did"]
        return self._reply(msg, PICKUP + "status", status)

    def _delivery_request(self, msg, sender):
        body = msg.get("body") or {}
        limit = body.get("limit") if isinstance(body.get("limit"), int) else 10
        with self._changed:
            waiting = [
                q for r in self._recipients(sender, body) for q in self._state.queues.get(r, ())
            ]
        if not waiting:
            return self._status(msg, sender)
        attachments = [
            {"id": q.id, "media_type": "application/json", "data": {"json": q.jwe}}
            for q in waiting[: max(limit, 1)]
        ]
        delivery_body = {}
        if isinstance(body.get("recipient_did"), str):
            delivery_body["recipient_did"] = body["recipient_did"]
        return self._reply(msg, PICKUP + "delivery", delivery_body, attachments=attachments)

    def _messages_received(self, msg, sender):
        ids = set((msg.get("body") or {}).get("message_id_list") or [])
        with self._changed:
            for recipient in self._recipients(sender, {}):
                queue = self._state.queues.get(recipient, [])
                queue[:] = [q for q in queue if q.id not in ids]
        return self._status(msg, sender)

    _handlers: ClassVar[dict[str, Callable[..., dict[str, Any] | None]]] = {
        COORDINATE + "mediate-request": _mediate_request,
        COORDINATE + "keylist-update": _keylist_update,
        FORWARD: _forward,
        PICKUP + "status-request": _status,
        PICKUP + "delivery-request": _delivery_request,
        PICKUP + "messages-received": _messages_received,
    }


def _attached_jwe(attachment: dict[str, Any]) -> dict[str, Any]:
    """The JWE a forward carries: ``data.json`` (an object, or a JSON string) or ``data.base64``."""
    data = attachment.get("data") or {}
    if "json" in data:
        value = data["json"]
        return json.loads(value) if isinstance(value, str) else value
    if "base64" in data:
        return json.loads(b64url_decode(data["base64"]))
    raise ValueError("The forwarded attachment has neither data.json nor data.base64.")


def _handler_for(mediator: Mediator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                answer = mediator.handle(raw)
            except DidcommError as exc:
                mediator.errors.append(f"refused: {exc.reason}")
                self._send(400, exc.reason.encode(), "text/plain")
                return
            except Exception as exc:  # a bug here: show it to the test, not a silent SDK stall
                mediator.errors.append(f"{type(exc).__name__}: {exc}")
                self._send(500, str(exc).encode(), "text/plain")
                return
            if answer is None:
                self._send(202, b"", None)
            else:
                self._send(200, answer, messaging.CONTENT_TYPE)

        def _send(self, status: int, body: bytes, content_type: str | None) -> None:
            self.send_response(status)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
