"""A DIDComm holder written on the messaging layer, for the agent's own tests: its did:peer:2
names a loopback inbox, so Verity's messages reach it directly (no mediator), and it signs
with joserfc keys (did:jwk), not with Verity's code."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from joserfc.jwk import ECKey
from trust.trust_support import LocalServer
from werkzeug.wrappers import Response

from app.didcomm import messaging, peer_did


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def did_jwk(key: ECKey) -> str:
    public = {k: v for k, v in key.as_dict(private=False).items() if k in ("kty", "crv", "x", "y")}
    return "did:jwk:" + b64u(json.dumps(public, separators=(",", ":")).encode())


@dataclass
class Holder:
    """A wallet on the messaging layer: its did:peer:2 names a loopback inbox."""

    server: LocalServer
    peer: peer_did.NewPeerDid
    key: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256"))
    inbox: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(cls) -> Holder:
        server = LocalServer()
        holder = cls(server, peer_did.make(server.url("/inbox")))

        def receive(request) -> Response:
            opened = messaging.unpack(
                request.get_data(), private_keys=messaging.private_keys(holder.peer)
            )
            holder.inbox.append(opened.message)
            return Response("", status=202)

        server.add("/inbox", receive)
        return holder

    @property
    def did(self) -> str:
        return did_jwk(self.key)

    def pack(self, message: dict[str, Any], to: str) -> bytes:
        return messaging.pack(message, to_did=to, sender=self.peer)

    def received(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.inbox if m["type"] == kind]
