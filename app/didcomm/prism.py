"""Long-form did:prism: read, resolve and make, and ES256K JWS with its keys.

A long-form did:prism is ``did:prism:<hex sha256(op)>:<base64url-nopad(op)>`` where ``op`` is
the protobuf ``AtalaOperation{create_did=1{did_data=1{public_keys=2, services=3, context=4}}}``
that would create it on the ledger. Wallets built on the Hyperledger Identus SDK make a fresh
one per credential and sign with it, unpublished, so it resolves offline from its own text.
The protobuf is written and read by hand here (varints and length-delimited fields only): the
messages are small and fixed, and a generated-code dependency would be larger than this file.

Field numbers (``node_models.proto``): ``PublicKey{id=1, usage=2, ec_key_data=8{curve=1, x=2,
y=3}, compressed_ec_key_data=9{curve=1, data=2}}``, ``Service{id=1, type=2,
service_endpoint=3}``. Usages: 1 master, 2 issuing (assertionMethod), 3 key agreement, 4
authentication, 5 revocation, 6/7 capability invocation/delegation, 8 VDR; master, revocation
and VDR keys manage the DID and are not in its document.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from app.didcomm.encoding import b64url, b64url_decode, read_json
from app.didcomm.errors import PrismDidError

PREFIX = "did:prism:"
SECP256K1 = "secp256k1"
# Order of the secp256k1 group: signatures are written with s <= N/2 ("low-S").
_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

MASTER, ISSUING, KEY_AGREEMENT, AUTHENTICATION, REVOCATION = 1, 2, 3, 4, 5
CAPABILITY_INVOCATION, CAPABILITY_DELEGATION, VDR = 6, 7, 8
_RELATIONSHIP = {
    ISSUING: "assertionMethod",
    KEY_AGREEMENT: "keyAgreement",
    AUTHENTICATION: "authentication",
    CAPABILITY_INVOCATION: "capabilityInvocation",
    CAPABILITY_DELEGATION: "capabilityDelegation",
}


# --- protobuf wire format (varint = 0, length-delimited = 2) -------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise PrismDidError("The DID's operation is cut short or has a malformed number.")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints, bytes for length-delimited fields."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
            yield number, value
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            if pos + length > len(data):
                raise PrismDidError("The DID's operation is cut short.")
            yield number, data[pos : pos + length]
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
            if pos > len(data):
                raise PrismDidError("The DID's operation is cut short.")
        else:
            raise PrismDidError(
                f"The DID's operation uses an unsupported protobuf wire type {wire}."
            )


def _text(value: int | bytes, what: str) -> str:
    if not isinstance(value, bytes):
        raise PrismDidError(f"The DID's {what} is not a string.")
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise PrismDidError(f"The DID's {what} is not UTF-8 text.") from None


def _bytes(value: int | bytes, what: str) -> bytes:
    if not isinstance(value, bytes):
        raise PrismDidError(f"The DID's {what} is not a byte string.")
    return value


# --- model ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicKey:
    """A key of the DID: either ``x``/``y`` (ec_key_data) or ``compressed`` (compressed_ec_key_data)."""

    id: str
    usage: int
    curve: str
    x: bytes = b""
    y: bytes = b""
    compressed: bytes = b""

    def encode(self) -> bytes:
        if self.compressed:
            key = _field(9, _field(1, self.curve) + _field(2, self.compressed))
        else:
            key = _field(8, _field(1, self.curve) + _field(2, self.x) + _field(3, self.y))
        return _field(1, self.id) + (_field(2, self.usage) if self.usage else b"") + key

    def jwk(self) -> dict[str, str]:
        """The public JWK: EC for secp256k1 (compressed points are expanded), OKP otherwise."""
        if self.curve == SECP256K1:
            x, y = self.x, self.y
            if self.compressed:
                try:
                    point = ec.EllipticCurvePublicKey.from_encoded_point(
                        ec.SECP256K1(), self.compressed
                    )
                except ValueError:
                    raise PrismDidError(f"Key {self.id} is not a point on secp256k1.") from None
                numbers = point.public_numbers()
                x, y = numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")
            if len(x) != 32 or len(y) != 32:
                raise PrismDidError(f"Key {self.id} does not have 32-byte x and y coordinates.")
            return {"kty": "EC", "crv": SECP256K1, "x": b64url(x), "y": b64url(y)}
        if self.curve in ("Ed25519", "X25519") and len(self.compressed) == 32:
            return {"kty": "OKP", "crv": self.curve, "x": b64url(self.compressed)}
        raise PrismDidError(f"Key {self.id} uses curve {self.curve!r}, which is not supported.")


@dataclass(frozen=True)
class Service:
    id: str
    type: str
    endpoints: list[str] = field(default_factory=list)

    def encode(self) -> bytes:
        return (
            _field(1, self.id)
            + _field(2, self.type)
            + b"".join(_field(3, e) for e in self.endpoints)
        )


@dataclass(frozen=True)
class CreateDid:
    """The create-DID operation a long-form did:prism carries."""

    public_keys: list[PublicKey]
    services: list[Service] = field(default_factory=list)
    context: list[str] = field(default_factory=list)

    def encode(self) -> bytes:
        data = b"".join(_field(2, k.encode()) for k in self.public_keys)
        data += b"".join(_field(3, s.encode()) for s in self.services)
        data += b"".join(_field(4, c) for c in self.context)
        return _field(1, _field(1, data))

    def long_form(self) -> str:
        op = self.encode()
        return f"{PREFIX}{hashlib.sha256(op).hexdigest()}:{b64url(op)}"


def _decode_key(data: bytes) -> PublicKey:
    values: dict[str, Any] = {"id": "", "usage": 0, "curve": ""}
    for number, value in _fields(data):
        if number == 1:
            values["id"] = _text(value, "key id")
        elif number == 2:
            if not isinstance(value, int):
                raise PrismDidError("A key's usage is not a number.")
            values["usage"] = value
        elif number in (8, 9):
            for sub, item in _fields(_bytes(value, "key data")):
                if sub == 1:
                    values["curve"] = _text(item, "key curve")
                elif number == 8 and sub in (2, 3):
                    values["x" if sub == 2 else "y"] = _bytes(item, "key coordinate")
                elif number == 9 and sub == 2:
                    values["compressed"] = _bytes(item, "compressed key")
    if not values["id"]:
        raise PrismDidError("A key of the DID has no id.")
    if not (values.get("compressed") or values.get("x")):
        raise PrismDidError(f"Key {values['id']} has no key data.")
    return PublicKey(**values)


def _decode_service(data: bytes) -> Service:
    service_id, service_type, endpoints = "", "", []
    for number, value in _fields(data):
        if number == 1:
            service_id = _text(value, "service id")
        elif number == 2:
            service_type = _text(value, "service type")
        elif number == 3:
            endpoints.append(_text(value, "service endpoint"))
    return Service(service_id, service_type, endpoints)


def decode_operation(op: bytes) -> CreateDid:
    """Read an ``AtalaOperation`` that creates a DID; anything else is refused."""
    create = b""
    for number, value in _fields(op):
        if number == 1:
            create = _bytes(value, "create operation")
    if not create:
        raise PrismDidError("The DID's operation is not a create-DID operation.")
    did_data = b""
    for number, value in _fields(create):
        if number == 1:
            did_data = _bytes(value, "DID data")
    keys, services, context = [], [], []
    for number, value in _fields(did_data):
        if number == 2:
            keys.append(_decode_key(_bytes(value, "public key")))
        elif number == 3:
            services.append(_decode_service(_bytes(value, "service")))
        elif number == 4:
            context.append(_text(value, "context"))
    if not any(k.usage == MASTER for k in keys):
        raise PrismDidError("The DID has no master key.")
    return CreateDid(keys, services, context)


@dataclass(frozen=True)
class PrismDid:
    """A parsed long-form did:prism: its short (canonical) form and its creation operation."""

    did: str
    canonical: str
    operation: CreateDid

    def document(self) -> dict[str, Any]:
        """The DID document: JsonWebKey2020 methods ``<did>#<key id>`` under their usages."""
        methods, relationships = [], {name: [] for name in _RELATIONSHIP.values()}
        for key in self.operation.public_keys:
            relationship = _RELATIONSHIP.get(key.usage)
            if relationship is None:
                continue
            kid = f"{self.did}#{key.id}"
            methods.append(
                {
                    "id": kid,
                    "type": "JsonWebKey2020",
                    "controller": self.did,
                    "publicKeyJwk": key.jwk(),
                }
            )
            relationships[relationship].append(kid)
        services = [
            {
                "id": f"{self.did}#{s.id}",
                "type": s.type,
                "serviceEndpoint": s.endpoints[0] if len(s.endpoints) == 1 else s.endpoints,
            }
            for s in self.operation.services
        ]
        return {
            "@context": ["https://www.w3.org/ns/did/v1", *self.operation.context],
            "id": self.did,
            "alsoKnownAs": [self.canonical],
            "verificationMethod": methods,
            **relationships,
            "service": services,
        }


@functools.lru_cache(maxsize=512)
def parse(did: str) -> PrismDid:
    """Read a long-form did:prism, checking that its hash is the SHA-256 of its operation.

    Kept per process for the last 512 DIDs: an issuer's DID comes back with every credential
    it issued (the result is immutable; a DID that fails to parse is not kept)."""
    if not isinstance(did, str) or not did.startswith(PREFIX):
        raise PrismDidError("The DID is not a did:prism.")
    parts = did[len(PREFIX) :].split(":")
    if len(parts) == 1:
        raise PrismDidError("The did:prism is in short form; only a PRISM node can resolve it.")
    if len(parts) != 2:
        raise PrismDidError("The did:prism has more parts than <hash>:<operation>.")
    digest, encoded = parts
    try:
        op = b64url_decode(encoded)
    except ValueError:
        raise PrismDidError("The did:prism operation is not base64url.") from None
    if "=" in encoded:
        raise PrismDidError("The did:prism operation must be base64url without padding.")
    if hashlib.sha256(op).hexdigest() != digest:
        raise PrismDidError("The did:prism hash is not the SHA-256 of its operation.")
    return PrismDid(did, f"{PREFIX}{digest}", decode_operation(op))


def resolve(did: str) -> dict[str, Any]:
    """The DID document of a long-form did:prism (see :meth:`PrismDid.document`)."""
    return parse(did).document()


# --- keys and the maker --------------------------------------------------------------------


def sdk_accepts(key: ec.EllipticCurvePublicKey) -> bool:
    """Whether the Identus SDK 7.0.0 reads this secp256k1 key: neither coordinate may begin
    with a zero byte (it rejects such keys as having a wrong length)."""
    numbers = key.public_numbers()
    return numbers.x.bit_length() > 248 and numbers.y.bit_length() > 248


def _coordinates(key: ec.EllipticCurvePublicKey) -> tuple[bytes, bytes]:
    numbers = key.public_numbers()
    return numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")


@dataclass(frozen=True)
class NewPrismDid:
    """A long-form did:prism made here, with its private keys by key id."""

    did: str
    keys: dict[str, ec.EllipticCurvePrivateKey]


def _new_secp256k1() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256K1())


def make(
    key_ids: dict[str, int] | None = None,
    new_key: Callable[[], ec.EllipticCurvePrivateKey] = _new_secp256k1,
    given: Mapping[str, ec.EllipticCurvePrivateKey] | None = None,
) -> NewPrismDid:
    """A new long-form did:prism with secp256k1 keys, ``master-0`` and ``issuing-0`` by default.

    Only keys the SDK accepts are used (see :func:`sdk_accepts`); others are drawn again.
    ``given`` names keys made elsewhere (in a PKCS#11 token) to use for some key ids; each must
    be one the SDK accepts.
    """
    usages = key_ids or {"master-0": MASTER, "issuing-0": ISSUING}
    given = given or {}
    if MASTER not in usages.values():
        raise PrismDidError("A did:prism needs a master key.")
    if set(given) - set(usages):
        raise PrismDidError(
            f"Keys given for ids the DID does not have: {sorted(set(given) - set(usages))}"
        )
    private: dict[str, ec.EllipticCurvePrivateKey] = {}
    public: list[PublicKey] = []
    for key_id, usage in usages.items():
        if key_id in given:
            key = given[key_id]
            if not isinstance(key.curve, ec.SECP256K1) or not sdk_accepts(key.public_key()):
                raise PrismDidError(f"Key {key_id} is not a secp256k1 key the SDK accepts.")
        else:
            key = new_key()
            while not sdk_accepts(key.public_key()):
                key = new_key()
        x, y = _coordinates(key.public_key())
        private[key_id] = key
        public.append(PublicKey(key_id, usage, SECP256K1, x=x, y=y))
    return NewPrismDid(CreateDid(public).long_form(), private)


# --- ES256K JWS ----------------------------------------------------------------------------


def sign_es256k(
    payload: dict[str, Any], key: ec.EllipticCurvePrivateKey, kid: str, typ: str = "JWT"
) -> str:
    """A compact JWS, ``alg`` ES256K, signature raw ``r||s`` with low S (as secp256k1 verifiers
    such as the SDK's require)."""
    header = {"alg": "ES256K", "typ": typ, "kid": kid}
    signing_input = (
        b64url(json.dumps(header, separators=(",", ":")).encode())
        + "."
        + b64url(json.dumps(payload, separators=(",", ":")).encode())
    )
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    if s > _N // 2:
        s = _N - s
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def secp256k1_public_key(jwk: Any) -> ec.EllipticCurvePublicKey:
    """The key of a secp256k1 JWK. Coordinates may be padded base64url and shorter than 32
    bytes (the Identus cloud agent strips a leading zero byte and pads, Proof.scala)."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != SECP256K1:
        raise PrismDidError("The signing key is not a secp256k1 key.")
    x, y = jwk.get("x"), jwk.get("y")
    try:
        if not isinstance(x, str) or not isinstance(y, str):
            raise ValueError("no coordinates")
        numbers = (int.from_bytes(b64url_decode(x), "big"), int.from_bytes(b64url_decode(y), "big"))
        return ec.EllipticCurvePublicNumbers(*numbers, ec.SECP256K1()).public_key()
    except ValueError:
        raise PrismDidError("The signing key is not a point on secp256k1.") from None


def es256k_holds(key: ec.EllipticCurvePublicKey, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` (JWS ``r||s``, 64 bytes) is ES256K over ``data`` by ``key``. A high
    S is accepted, as the cloud agent's signer (Nimbus JOSE) does not normalize it."""
    if len(signature) != 64 or not isinstance(key.curve, ec.SECP256K1):
        return False
    der = encode_dss_signature(
        int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    )
    try:
        key.verify(der, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def verify_es256k(token: str, document: dict[str, Any], relationship: str) -> tuple[dict, dict]:
    """Check a compact ES256K JWS against the key its ``kid`` names in ``document``, which must
    be listed under ``relationship`` (``authentication`` for a holder, ``assertionMethod`` for
    an issuer). Returns (header, payload)."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise PrismDidError("The JWS is not three dot-separated parts.")
    try:
        encoded = [b64url_decode(part) for part in parts]
    except ValueError:
        raise PrismDidError("The JWS is not base64url-encoded JSON.") from None
    header = read_json(encoded[0], PrismDidError, "The JWS header")
    payload = read_json(encoded[1], PrismDidError, "The JWS payload")
    signature = encoded[2]
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise PrismDidError("The JWS header and payload must be JSON objects.")
    if header.get("alg") != "ES256K":
        raise PrismDidError(f"The JWS is signed with {header.get('alg')!r}, not ES256K.")
    kid = header.get("kid")
    if not isinstance(kid, str) or kid not in document.get(relationship, []):
        raise PrismDidError(
            f"The JWS key {kid!r} is not an {relationship} key of {document.get('id')}."
        )
    method = next((m for m in document.get("verificationMethod", []) if m.get("id") == kid), None)
    if method is None:
        raise PrismDidError(f"The DID document has no key {kid}.")
    if len(signature) != 64:
        raise PrismDidError("The ES256K signature is not 64 bytes (r||s).")
    key = secp256k1_public_key(method.get("publicKeyJwk"))
    if not es256k_holds(key, f"{parts[0]}.{parts[1]}".encode(), signature):
        raise PrismDidError("The JWS signature does not verify with the DID's key.")
    return header, payload
