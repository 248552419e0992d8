"""did:peer:2 (numalgo 2): encode, resolve and make the DIDs DIDComm v2 agents talk with.

Written here rather than taken from PyPI because the Hyperledger Identus SDK (what the Socious
Wallet runs) names keys ``#key-1``, ``#key-2``... in order of appearance, while ``peerdid``
emits the legacy ``#6Mk...`` ids and ``did-peer-2`` fails on the SDK's DIDs. The DID is
``did:peer:2`` followed by ``.``-separated elements: ``E`` + multibase X25519 key (keyAgreement),
``V`` + multibase Ed25519 key (authentication), ``S`` + base64url JSON service with
abbreviated names. A service is an object or a list; its ``s`` is either the new-style
``{"uri": ..., "a": [...], "r": [...]}`` or an old-style bare URL string (read, never written).
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from app.didcomm.encoding import b58decode, b58encode, b64url, b64url_decode, read_json
from app.didcomm.errors import PeerDidError

PREFIX = "did:peer:2"
X25519_CODEC = b"\xec\x01"
ED25519_CODEC = b"\xed\x01"
DIDCOMM_V2 = "didcomm/v2"

_ABBREVIATIONS = {
    "t": "type",
    "s": "serviceEndpoint",
    "a": "accept",
    "r": "routingKeys",
}
_VALUE_ABBREVIATIONS = {"dm": "DIDCommMessaging"}


def _multibase_key(codec: bytes, raw: bytes) -> str:
    return "z" + b58encode(codec + raw)


def _read_multibase_key(value: str, codec: bytes, what: str) -> bytes:
    if not value.startswith("z"):
        raise PeerDidError(f"The {what} key is not multibase base58btc (it must start with z).")
    try:
        decoded = b58decode(value[1:])
    except ValueError as exc:
        raise PeerDidError(f"The {what} key is not valid base58: {exc}.") from None
    if not decoded.startswith(codec) or len(decoded) != len(codec) + 32:
        raise PeerDidError(f"The {what} key is not a 32-byte {what} public key.")
    return decoded[len(codec) :]


def _jwk(crv: str, raw: bytes) -> dict[str, str]:
    return {"kty": "OKP", "crv": crv, "x": b64url(raw)}


def encode_service(service: dict[str, Any]) -> str:
    """The ``S`` element's value for a service given in full names (compact JSON, no padding)."""
    abbreviated: dict[str, Any] = {}
    reverse = {v: k for k, v in _ABBREVIATIONS.items()}
    for name, value in service.items():
        if name == "id":
            continue
        if name == "type" and value == "DIDCommMessaging":
            value = "dm"
        if name == "serviceEndpoint" and isinstance(value, dict):
            value = {reverse.get(k, k): v for k, v in value.items()}
        abbreviated[reverse.get(name, name)] = value
    return b64url(json.dumps(abbreviated, separators=(",", ":")).encode())


def _expand(value: Any) -> Any:
    if isinstance(value, dict):
        return {_ABBREVIATIONS.get(k, k): _expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v) for v in value]
    return _VALUE_ABBREVIATIONS.get(value, value) if isinstance(value, str) else value


def _decode_services(value: str) -> list[dict[str, Any]]:
    try:
        raw = b64url_decode(value)
    except ValueError:
        raise PeerDidError("A service element is not base64url-encoded JSON.") from None
    decoded = read_json(raw, PeerDidError, "A service element")
    items = decoded if isinstance(decoded, list) else [decoded]
    services = []
    for item in items:
        if not isinstance(item, dict):
            raise PeerDidError("A service element holds something other than a JSON object.")
        expanded = _expand(item)
        endpoint = expanded.get("serviceEndpoint")
        if isinstance(endpoint, str):
            # Old style: the URL itself, with accept and routingKeys beside it.
            endpoint = {
                "uri": endpoint,
                "accept": expanded.pop("accept", [DIDCOMM_V2]),
                "routingKeys": expanded.pop("routingKeys", []),
            }
        elif isinstance(endpoint, dict) and isinstance(endpoint.get("uri"), str):
            endpoint.setdefault("accept", [])
            endpoint.setdefault("routingKeys", [])
        else:
            raise PeerDidError("A service has no serviceEndpoint URI.")
        expanded["serviceEndpoint"] = endpoint
        services.append(expanded)
    return services


@dataclass(frozen=True)
class PeerDid:
    """A resolved did:peer:2: raw public keys with their ids, and services."""

    did: str
    key_agreement: list[tuple[str, bytes]]  # (full key id, raw X25519 public key)
    authentication: list[tuple[str, bytes]]  # (full key id, raw Ed25519 public key)
    services: list[dict[str, Any]]

    def document(self) -> dict[str, Any]:
        """The DID document: JsonWebKey2020 methods ``#key-N``, services ``#service``, ``-N``."""
        methods = [
            {
                "id": kid,
                "type": "JsonWebKey2020",
                "controller": self.did,
                "publicKeyJwk": _jwk(crv, raw),
            }
            for kid, raw, crv in sorted(
                [(k, r, "X25519") for k, r in self.key_agreement]
                + [(k, r, "Ed25519") for k, r in self.authentication],
                key=lambda item: int(item[0].rsplit("-", 1)[1]),
            )
        ]
        services = [
            # Copied: a parsed DID is kept per process (``parse``), its document is the caller's.
            {"id": self.did + ("#service" if i == 0 else f"#service-{i}"), **copy.deepcopy(service)}
            for i, service in enumerate(self.services)
        ]
        return {
            "@context": ["https://www.w3.org/ns/did/v1"],
            "id": self.did,
            "verificationMethod": methods,
            "keyAgreement": [kid for kid, _ in self.key_agreement],
            "authentication": [kid for kid, _ in self.authentication],
            "assertionMethod": [kid for kid, _ in self.authentication],
            "service": services,
        }


@functools.lru_cache(maxsize=512)
def parse(did: str) -> PeerDid:
    """Read a did:peer:2, or raise :class:`PeerDidError` saying what is wrong with it.

    Kept per process for the last 512 DIDs: a holder's DID comes back with every message of
    its exchange (a DID that fails to parse is not kept)."""
    if not isinstance(did, str) or not did.startswith(PREFIX + "."):
        raise PeerDidError("The DID is not a did:peer:2.")
    key_agreement: list[tuple[str, bytes]] = []
    authentication: list[tuple[str, bytes]] = []
    services: list[dict[str, Any]] = []
    index = 0
    for element in did[len(PREFIX) + 1 :].split("."):
        if not element:
            raise PeerDidError("The DID has an empty element.")
        purpose, value = element[0], element[1:]
        if purpose == "E":
            index += 1
            raw = _read_multibase_key(value, X25519_CODEC, "X25519")
            key_agreement.append((f"{did}#key-{index}", raw))
        elif purpose == "V":
            index += 1
            raw = _read_multibase_key(value, ED25519_CODEC, "Ed25519")
            authentication.append((f"{did}#key-{index}", raw))
        elif purpose == "S":
            services.extend(_decode_services(value))
        else:
            raise PeerDidError(f"The DID has an element of unknown purpose {purpose!r}.")
    if not key_agreement:
        raise PeerDidError("The DID has no key agreement (E) key to encrypt to.")
    return PeerDid(did, key_agreement, authentication, services)


def resolve(did: str) -> dict[str, Any]:
    """The DID document of a did:peer:2 (see :meth:`PeerDid.document`)."""
    return parse(did).document()


def encode(
    x25519_keys: list[bytes], ed25519_keys: list[bytes], services: list[dict[str, Any]]
) -> str:
    """A did:peer:2 from raw public keys (X25519 first, as ``#key-1``...) and full-name services."""
    elements = [PREFIX]
    elements += ["E" + _multibase_key(X25519_CODEC, raw) for raw in x25519_keys]
    elements += ["V" + _multibase_key(ED25519_CODEC, raw) for raw in ed25519_keys]
    elements += ["S" + encode_service(service) for service in services]
    return ".".join(elements)


@dataclass(frozen=True)
class NewPeerDid:
    """A did:peer:2 made here, with its private keys as JWKs keyed by full key id."""

    did: str
    secrets: dict[str, dict[str, str]]


def make(service_uri: str, routing_keys: list[str] | None = None) -> NewPeerDid:
    """A new did:peer:2 with fresh X25519 (``#key-1``) and Ed25519 (``#key-2``) keys.

    The service is new-style (``{"t":"dm","s":{"uri":...,"a":["didcomm/v2"]}}``): the SDK
    reads only ``s.uri``.
    """
    if not service_uri:
        raise PeerDidError("A DIDComm service needs a URI.")
    x_private = X25519PrivateKey.generate()
    e_private = Ed25519PrivateKey.generate()
    raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
    x_public = x_private.public_key().public_bytes(*raw)
    e_public = e_private.public_key().public_bytes(*raw)
    endpoint: dict[str, Any] = {"uri": service_uri, "accept": [DIDCOMM_V2]}
    if routing_keys:
        endpoint["routingKeys"] = routing_keys
    did = encode(
        [x_public], [e_public], [{"type": "DIDCommMessaging", "serviceEndpoint": endpoint}]
    )
    private = (
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    return NewPeerDid(
        did,
        {
            f"{did}#key-1": {
                **_jwk("X25519", x_public),
                "d": b64url(x_private.private_bytes(*private)),
            },
            f"{did}#key-2": {
                **_jwk("Ed25519", e_public),
                "d": b64url(e_private.private_bytes(*private)),
            },
        },
    )
