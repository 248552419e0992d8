"""The holder's key: the DID that signs the presentation holds the key.

Three DID methods that resolve without fetching anything: did:jwk (the method-specific id is a
base64url JWK), did:key (a multibase base58btc multicodec public key; Ed25519, P-256 and
P-384 keys), and the long form of did:prism (the DID carries the operation that creates it,
hash-checked by ``app.didcomm.prism``), which Hyperledger Identus wallets make afresh for each
credential. A holder is a wallet, not a published organization, so DID methods that need a
registry or a web server (did:web, a short-form did:prism, and others) are not followed for
holders: fetching a document a presentation names, on every presentation, buys nothing a
key-in-the-DID method does not give.

For did:jwk and did:key ``kid``, when present, must name the DID's one verification method. A
did:prism has several keys, so ``kid`` is required and must name one its document lists under
``authentication`` (DID Core 5.3.1), ``<did>#authentication-0`` as the Identus SDK writes it
(or relative, ``#authentication-0``): secp256k1 (ES256K), Ed25519 or P-256. An embedded ``jwk``
header is never used as a key, only compared with the DID's.
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from app.didcomm import prism
from app.didcomm.errors import PrismDidError
from app.sdjwt import PublicKey, SdJwtError, jwk_to_public_key
from app.sdjwt.encoding import decode_json_object
from app.trust import TrustError, did_prism
from app.vcjwt.errors import VcJwtError

DID_JWK = "did:jwk:"
DID_KEY = "did:key:"
DID_PRISM = did_prism.PREFIX
LABEL = "Presentation holder"
BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
# A did:key is one key: a few dozen bytes. Bounding the text bounds the base58 arithmetic.
MAX_DID_KEY = 200
# did:key (W3C CCG did:key v0.7 §2.1, §3.1.2): the multicodec varint prefix of each key type,
# and how many key bytes follow it (an EC key is a compressed SEC1 point).
ED25519 = bytes([0xED, 0x01])
P256 = bytes([0x80, 0x24])
P384 = bytes([0x81, 0x24])
KEY_LENGTHS = {ED25519: 32, P256: 33, P384: 49}
CURVES = {P256: ec.SECP256R1(), P384: ec.SECP384R1()}


def holder_key(holder: str, header: dict[str, Any]) -> PublicKey:
    """The public key ``holder`` (a DID) names, checked against the header's ``kid``/``jwk``."""
    if not holder.startswith((DID_JWK, DID_KEY, DID_PRISM)):
        raise VcJwtError(
            f"{LABEL} is not a did:jwk, did:key or did:prism DID, so its key cannot be found"
        )
    if any(mark in holder for mark in "#?/"):
        raise VcJwtError(f"{LABEL} is a DID URL, not a DID")
    if holder.startswith(DID_PRISM):
        key = _did_prism(holder, header.get("kid"))
        if "jwk" in header:
            _check_embedded(header["jwk"], key)
        return key
    if holder.startswith(DID_JWK):
        key, fragment = _did_jwk(holder), "0"
    else:
        key, fragment = _did_key(holder), holder[len(DID_KEY) :]
    _check_kid(header.get("kid"), holder, fragment)
    if "jwk" in header:
        _check_embedded(header["jwk"], key)
    return key


def _did_jwk(did: str) -> PublicKey:
    """did:jwk Read: base64url-decode the method-specific id into a public JWK."""
    try:
        return jwk_to_public_key(decode_json_object(did[len(DID_JWK) :], "did:jwk"))
    except SdJwtError as exc:
        raise VcJwtError(f"{LABEL} did:jwk does not hold a usable public key") from exc


def _did_prism(did: str, kid: Any) -> PublicKey:
    """Long-form did:prism: the ``authentication`` key ``kid`` names in the document the DID
    resolves to from its own text."""
    if did_prism.SHORT_FORM.match(did):
        raise VcJwtError(
            f"{LABEL} is a short-form did:prism, whose keys only a PRISM node knows; a wallet "
            "signs presentations with the long form"
        )
    if kid is None:
        raise VcJwtError(
            "Presentation header names no key (kid), which a did:prism holder with several "
            "keys must"
        )
    try:
        parsed = prism.parse(did)
        document = parsed.document()
    except PrismDidError as exc:
        raise VcJwtError(f"{LABEL} did:prism cannot be read: {exc.reason}") from exc
    try:
        return did_prism.key_of(
            document, {did, parsed.canonical}, kid, did_prism.AUTHENTICATION, parsed.canonical
        )
    except TrustError as exc:
        raise VcJwtError(f"{LABEL} key: {exc.reason}") from exc


def _did_key(did: str) -> PublicKey:
    """did:key Read (§3.1.2 decode): ``z`` + base58btc of the multicodec prefix and key bytes."""
    value = did[len(DID_KEY) :]
    if len(did) > MAX_DID_KEY or not value.startswith("z"):
        raise VcJwtError(f"{LABEL} did:key is not a base58btc multibase key")
    raw = _base58_decode(value[1:])
    prefix, key_bytes = raw[:2], raw[2:]
    if prefix not in KEY_LENGTHS:
        raise VcJwtError(f"{LABEL} did:key is not an Ed25519, P-256 or P-384 key")
    if len(key_bytes) != KEY_LENGTHS[prefix]:
        raise VcJwtError(f"{LABEL} did:key has the wrong length for its key type")
    try:
        if prefix == ED25519:
            return ed25519.Ed25519PublicKey.from_public_bytes(key_bytes)
        return ec.EllipticCurvePublicKey.from_encoded_point(CURVES[prefix], key_bytes)
    except ValueError as exc:
        raise VcJwtError(f"{LABEL} did:key is not a valid public key") from exc


def _base58_decode(text: str) -> bytes:
    if not text or any(char not in BASE58_ALPHABET for char in text):
        raise VcJwtError(f"{LABEL} did:key is not a base58btc multibase key")
    number = 0
    for char in text:
        number = number * 58 + BASE58_ALPHABET.index(char)
    leading_zeros = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\x00" * leading_zeros + body


def _check_kid(kid: Any, did: str, fragment: str) -> None:
    # did:jwk's one verification method is #0; did:key's is #<method-specific id>.
    if kid is not None and kid not in (f"#{fragment}", f"{did}#{fragment}"):
        raise VcJwtError("Presentation key id (kid) does not name the holder's key")


def _check_embedded(jwk: Any, key: PublicKey) -> None:
    try:
        embedded = jwk_to_public_key(jwk)
    except SdJwtError as exc:
        raise VcJwtError("Presentation header jwk is not a usable public key") from exc
    if _spki(embedded) != _spki(key):
        raise VcJwtError("Presentation header jwk is not the holder's key")


def _spki(key: PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
