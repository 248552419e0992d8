"""DIDComm Messaging v2: pack, unpack, and route messages to a holder through its mediator.

- :func:`pack` encrypts a plaintext message (DIDComm v2 §2.3, a JSON object) to every X25519
  ``keyAgreement`` key of the recipient's DID: authcrypt when a sender is given (how the
  Identus SDK talks, and how a holder knows the message is ours), anoncrypt otherwise (§5.1).
- :func:`unpack` is the single door for anything arriving from outside: a size limit, then
  JWE checks (``jwe.read``), then decryption with one of our keys, then the plaintext rules:
  for authcrypt the ``from`` must be the DID of ``skid`` (§5.1.3, sender authentication),
  and ``to`` must name us when present (§2.3). Plaintext and signed-only messages are refused.
- :func:`for_holder` delivers to a holder whose DID names a mediator (the Socious Wallet always
  does): the message is encrypted to the holder, wrapped in a Routing 2.0 forward (§9.5.2) and
  anoncrypted to the mediator, as the Routing protocol's sender process asks (the SDK itself
  authcrypts its forwards, ``src/mercury/Mercury.ts``; every mediator must accept anoncrypt,
  since a stranger's forward carries no sender). A holder with an http(s) endpoint is sent to
  directly.

DIDs are resolved by a ``resolve`` callable (DID -> DID document); the default resolves
did:peer:2 only, the method the SDK uses for messaging and the one mediators publish.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from app.didcomm import jwe, peer_did
from app.didcomm.encoding import b64url_decode, read_json
from app.didcomm.errors import (
    DidcommError,
    Malformed,
    MessageError,
    NoService,
    SenderMismatch,
    TooLarge,
    UnknownRecipient,
    UnknownSender,
)

MAX_MESSAGE_BYTES = 256 * 1024
_URI = re.compile(r"[\x21-\x7e]+")
CONTENT_TYPE = "application/didcomm-encrypted+json"
PLAINTEXT_TYP = "application/didcomm-plain+json"
FORWARD = "https://didcomm.org/routing/2.0/forward"

Resolver = Callable[[str], dict[str, Any]]
PrivateKeys = Callable[[str], X25519PrivateKey | None]


def resolve_peer(did: str) -> dict[str, Any]:
    """The default resolver: did:peer:2 only; any other method is an unknown sender."""
    if not did.startswith(peer_did.PREFIX + "."):
        method = ":".join(did.split(":")[:2]) if did.startswith("did:") else did[:40]
        raise UnknownSender(f"The DID method of {method!r} is not resolved here (did:peer:2 only).")
    return peer_did.resolve(did)


def _did_of(kid: str) -> str:
    return kid.split("#", 1)[0]


def _x25519_keys(document: dict[str, Any]) -> list[tuple[str, bytes]]:
    """``(kid, raw public key)`` for each X25519 keyAgreement method, in document order."""
    methods = {m.get("id"): m for m in document.get("verificationMethod", [])}
    keys = []
    for ref in document.get("keyAgreement", []):
        method = ref if isinstance(ref, dict) else methods.get(ref)
        if not method:
            continue
        jwk = method.get("publicKeyJwk") or {}
        if jwk.get("kty") == "OKP" and jwk.get("crv") == "X25519" and "x" in jwk:
            keys.append((method["id"], b64url_decode(jwk["x"])))
    return keys


def _private_x25519(jwk: dict[str, str]) -> X25519PrivateKey:
    return X25519PrivateKey.from_private_bytes(b64url_decode(jwk["d"]))


def _sender_key(sender: peer_did.NewPeerDid) -> tuple[str, X25519PrivateKey]:
    for kid, jwk in sender.secrets.items():
        if jwk.get("crv") == "X25519" and "d" in jwk:
            return kid, _private_x25519(jwk)
    raise MessageError("The sender has no X25519 private key to authcrypt with.")


def private_keys(*dids: peer_did.NewPeerDid) -> PrivateKeys:
    """A ``private_keys`` lookup for :func:`unpack` over DIDs made by :func:`peer_did.make`."""
    table = {
        kid: _private_x25519(jwk)
        for did in dids
        for kid, jwk in did.secrets.items()
        if jwk.get("crv") == "X25519" and "d" in jwk
    }
    return table.get


def message(type_: str, body: dict[str, Any], **headers: Any) -> dict[str, Any]:
    """A plaintext message (§2.3): a fresh ``id``, ``type``, ``body``, ``created_time`` in
    seconds, and any other headers given (``thid``, ``attachments``...)."""
    return {
        "id": str(uuid.uuid4()),
        "type": type_,
        "body": body,
        "created_time": int(time.time()),
        **headers,
    }


def pack(
    msg: dict[str, Any],
    *,
    to_did: str,
    sender: peer_did.NewPeerDid | None,
    resolve: Resolver = resolve_peer,
) -> bytes:
    """The encrypted message for ``to_did``: authcrypt from ``sender``, or anoncrypt if None.

    Sets ``from`` (authcrypt) and ``to`` when absent, refuses a ``from`` that is not the
    sender, and encrypts to every X25519 keyAgreement key of ``to_did``'s document.
    """
    if not isinstance(msg.get("id"), str) or not isinstance(msg.get("type"), str):
        raise MessageError("A DIDComm message needs a string id and type (§2.3).")
    plaintext = {"typ": PLAINTEXT_TYP, **msg}
    plaintext.setdefault("to", [to_did])
    sender_key = None
    if sender is not None:
        if plaintext.setdefault("from", sender.did) != sender.did:
            raise SenderMismatch("The message's from is not the sending DID.")
        sender_key = _sender_key(sender)
    elif "from" in plaintext:
        raise SenderMismatch("An anoncrypted message must not name a sender in from.")
    recipients = _x25519_keys(resolve(to_did))
    envelope = jwe.encrypt(json.dumps(plaintext).encode(), recipients, sender=sender_key)
    return json.dumps(envelope).encode()


@dataclass(frozen=True)
class Unpacked:
    """A message that passed :func:`unpack`.

    ``sender_kid`` is the key that authenticated it (authcrypt) or None (anoncrypt): only then
    is ``message["from"]`` proven. ``recipient_kid`` is our key it was decrypted with.
    """

    message: dict[str, Any]
    sender_kid: str | None
    recipient_kid: str

    @property
    def sender(self) -> str | None:
        """The authenticated sender's DID, or None for an anonymous message."""
        return _did_of(self.sender_kid) if self.sender_kid else None


def unpack(
    raw: bytes | str,
    *,
    private_keys: PrivateKeys,
    resolve: Resolver = resolve_peer,
) -> Unpacked:
    """Decrypt and check a message from outside, or raise a :class:`MessageError` subclass
    whose ``reason`` says why it was refused."""
    if isinstance(raw, str):
        raw = raw.encode()
    if len(raw) > MAX_MESSAGE_BYTES:
        raise TooLarge(f"The message is larger than {MAX_MESSAGE_BYTES} bytes.")
    parsed = read_json(raw, Malformed, "The message")
    envelope = jwe.read(parsed)
    found = next(((kid, key) for kid in envelope.kids if (key := private_keys(kid))), None)
    if found is None:
        raise UnknownRecipient("The message is not encrypted to any key of ours.")
    kid, private = found
    skid = envelope.skid if envelope.alg == jwe.AUTHCRYPT else None
    sender_public = _sender_public(skid, resolve) if skid is not None else None
    plaintext = jwe.decrypt(envelope, kid, private, sender_public)
    msg = read_json(plaintext, Malformed, "The decrypted message")
    if not isinstance(msg, dict):
        raise Malformed("The decrypted message is not a JSON object.")
    if "signatures" in msg or "ciphertext" in msg:
        raise Malformed("Nested signed or encrypted messages are not accepted here.")
    if not isinstance(msg.get("id"), str) or not isinstance(msg.get("type"), str):
        raise Malformed("The decrypted message has no string id and type (§2.3).")
    if skid is not None and msg.get("from") != _did_of(skid):
        raise SenderMismatch("The message's from is not the DID whose key encrypted it (§5.1.3).")
    to = msg.get("to")
    if to is not None and (not isinstance(to, list) or _did_of(kid) not in to):
        raise SenderMismatch("The message's to does not name the DID it was encrypted to.")
    return Unpacked(msg, skid, kid)


def _sender_public(skid: str, resolve: Resolver) -> bytes:
    try:
        document = resolve(_did_of(skid))
    except UnknownSender:
        raise
    except DidcommError as exc:
        raise UnknownSender(f"The sender's DID cannot be resolved: {exc.reason}") from None
    for kid, public in _x25519_keys(document):
        if kid == skid:
            return public
    raise UnknownSender("The sender's DID has no X25519 key agreement key named by skid.")


@dataclass(frozen=True)
class Outbound:
    """What to POST, and where, with ``Content-Type:`` :data:`CONTENT_TYPE`."""

    url: str
    body: bytes
    content_type: str = CONTENT_TYPE


def _didcomm_uri(did: str, document: dict[str, Any]) -> str:
    for service in document.get("service", []):
        if service.get("type") != "DIDCommMessaging":
            continue
        endpoint = service.get("serviceEndpoint")
        uri = endpoint.get("uri") if isinstance(endpoint, dict) else endpoint
        accept = endpoint.get("accept") if isinstance(endpoint, dict) else None
        # The SDK's peer DIDs say accept ["didcomm/v2"]; an empty list means no restriction.
        if isinstance(uri, str) and (not accept or peer_did.DIDCOMM_V2 in accept):
            if isinstance(endpoint, dict) and endpoint.get("routingKeys"):
                raise NoService(f"{did} asks for routing keys, which are not supported.")
            return uri
    raise NoService(f"{did} has no DIDCommMessaging service for didcomm/v2.")


def _http(uri: str, did: str) -> str:
    if not uri.startswith(("https://", "http://")):
        raise NoService(f"The DIDComm endpoint of {did} is neither a DID nor an http(s) URL.")
    if not _URI.fullmatch(uri):
        # RFC 3986 §2: a URI is printable ASCII without spaces; anything else (a newline
        # above all) is the sender's text, never an address to post to or to log.
        raise NoService(f"The DIDComm endpoint of {did} is not a valid URI.")
    return uri


def for_holder(
    msg: dict[str, Any],
    *,
    sender: peer_did.NewPeerDid,
    to_did: str,
    resolve: Resolver = resolve_peer,
) -> Outbound:
    """The request that delivers ``msg`` (authcrypted by ``sender``) to the holder ``to_did``.

    If the holder's service URI is a DID (its mediator), the packed message travels as the
    ``data.json`` attachment of a ``routing/2.0/forward`` whose ``body.next`` is the holder,
    anoncrypted to the mediator and POSTed to the mediator's own http(s) endpoint.
    """
    inner = pack(msg, to_did=to_did, sender=sender, resolve=resolve)
    uri = _didcomm_uri(to_did, resolve(to_did))
    if not uri.startswith("did:"):
        return Outbound(_http(uri, to_did), inner)
    mediator = uri
    forward = message(
        FORWARD,
        {"next": to_did},
        to=[mediator],
        attachments=[
            {
                "id": str(uuid.uuid4()),
                "media_type": "application/json",
                "data": {"json": json.loads(inner)},
            }
        ],
    )
    outer = pack(forward, to_did=mediator, sender=None, resolve=resolve)
    return Outbound(_http(_didcomm_uri(mediator, resolve(mediator)), mediator), outer)
