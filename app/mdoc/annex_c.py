"""The Digital Credentials API's ``org-iso-mdoc`` protocol (ISO/IEC 18013-7 Annex C).

The verifier hands the browser a CBOR DeviceRequest (ISO 18013-5 8.3.2.1.2.1) and an
EncryptionInfo naming a recipient key; the wallet answers with a DeviceResponse sealed to that
key with HPKE (RFC 9180 base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, info =
the SessionTranscript's plain CBOR, empty aad). Both sides build the SessionTranscript from the
request itself and the page's origin:
``[null, null, ["dcapi", sha256(cbor([encryptionInfoB64, origin]))]]``, so a response opened
here was sealed for this request on this origin, and the device signature inside covers it.

HPKE comes from PyPI ``pyhpke`` (measured against RFC 9180 A.3.1 and faster than the same
steps written on ``cryptography``). Protocol code: no database, no Flask; the caller derives
the recipient key and passes the reader certificate.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey
from pyhpke.exceptions import PyHPKEError

from app.cose import CoseError, byte_string, loads, text_string
from app.mdoc.errors import MdocError

PROTOCOL = "org-iso-mdoc"
HANDOVER = "dcapi"
DEVICE_REQUEST_VERSION = "1.0"
DATA_ITEM = 24
# A sealed DeviceResponse with a portrait is tens of kilobytes; far more is refused unread.
MAX_RESPONSE_CHARS = 1_400_000
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
SUITE = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
# RFC 9053 2.1 and 7.1: ES256, an EC2 key on P-256; RFC 9360: x5chain.
ES256, KTY_EC2, CRV_P256, ALG, X5CHAIN = -7, 2, 1, 1, 33


@dataclass(frozen=True)
class ReaderIdentity:
    """The certificate chain (leaf first) and key that sign ``readerAuth``; platforms name the
    verifier to the person by it (Apple issues one to registered verifiers)."""

    chain: tuple[x509.Certificate, ...]
    key: ec.EllipticCurvePrivateKey = field(repr=False)


@dataclass(frozen=True)
class Element:
    """One data element asked for, and whether the verifier keeps its value."""

    namespace: str
    identifier: str
    intent_to_retain: bool


@dataclass(frozen=True)
class AnnexCRequest:
    """The ``data`` of the ``org-iso-mdoc`` request and the SessionTranscript it implies."""

    device_request: str
    encryption_info: str
    session_transcript: bytes

    def as_data(self) -> dict[str, str]:
        return {"deviceRequest": self.device_request, "encryptionInfo": self.encryption_info}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def cose_key(public_key: ec.EllipticCurvePublicKey) -> dict[int, Any]:
    """An EC2 COSE_Key (RFC 9053 7.1.1) with its x and y coordinates."""
    numbers = public_key.public_numbers()
    return {
        1: KTY_EC2,
        -1: CRV_P256,
        -2: numbers.x.to_bytes(32, "big"),
        -3: numbers.y.to_bytes(32, "big"),
    }


def encryption_info(nonce: bytes, recipient: ec.EllipticCurvePublicKey) -> str:
    """EncryptionInfo = ["dcapi", {"nonce", "recipientPublicKey"}], base64url CBOR."""
    return b64url(
        cbor2.dumps([HANDOVER, {"nonce": nonce, "recipientPublicKey": cose_key(recipient)}])
    )


def session_transcript(encryption_info_b64: str, origin: str) -> bytes:
    """Annex C: the dcapi handover hashes the exact EncryptionInfo string sent and the origin
    the browser asserted; no device engagement and no reader key (both null)."""
    # Written out (an array of two texts; [null, null, ["dcapi", bstr]]): the same bytes
    # cbor2 gives, built for every response opened without setting up two encoders.
    info_hash = hashlib.sha256(
        b"\x82" + text_string(encryption_info_b64) + text_string(origin)
    ).digest()
    return b"\x83\xf6\xf6\x82" + text_string(HANDOVER) + byte_string(info_hash)


def build_request(
    doctype: str,
    elements: list[Element],
    *,
    nonce: bytes,
    recipient: ec.EllipticCurvePublicKey,
    origin: str,
    reader: ReaderIdentity | None = None,
) -> AnnexCRequest:
    """The DeviceRequest (version 1.0, one DocRequest for ``doctype`` naming exactly
    ``elements``) and its EncryptionInfo; signed with ``readerAuth`` when ``reader`` is set."""
    info = encryption_info(nonce, recipient)
    transcript = session_transcript(info, origin)
    namespaces: dict[str, dict[str, bool]] = {}
    for element in elements:
        namespaces.setdefault(element.namespace, {})[element.identifier] = element.intent_to_retain
    items_request = cbor2.CBORTag(
        DATA_ITEM, cbor2.dumps({"docType": doctype, "nameSpaces": namespaces})
    )
    doc_request: dict[str, Any] = {"itemsRequest": items_request}
    if reader is not None:
        doc_request["readerAuth"] = reader_auth(reader, transcript, items_request)
    device_request = {"version": DEVICE_REQUEST_VERSION, "docRequests": [doc_request]}
    return AnnexCRequest(b64url(cbor2.dumps(device_request)), info, transcript)


def reader_auth(
    reader: ReaderIdentity, transcript: bytes, items_request: cbor2.CBORTag
) -> list[Any]:
    """ISO 18013-5 9.1.4: a COSE_Sign1 with a detached payload, ReaderAuthenticationBytes =
    #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes]), the
    transcript spliced in as the exact bytes the wallet will rebuild."""
    authentication = (
        b"\x83" + cbor2.dumps("ReaderAuthentication") + transcript + cbor2.dumps(items_request)
    )
    payload = cbor2.dumps(cbor2.CBORTag(DATA_ITEM, authentication))
    protected = cbor2.dumps({ALG: ES256})
    to_be_signed = cbor2.dumps(["Signature1", protected, b"", payload])
    r, s = decode_dss_signature(reader.key.sign(to_be_signed, ec.ECDSA(hashes.SHA256())))
    der = [cert.public_bytes(serialization.Encoding.DER) for cert in reader.chain]
    chain: bytes | list[bytes] = der[0] if len(der) == 1 else der
    return [protected, {X5CHAIN: chain}, None, r.to_bytes(32, "big") + s.to_bytes(32, "big")]


def open_response(response: Any, recipient: ec.EllipticCurvePrivateKey, transcript: bytes) -> bytes:
    """The DeviceResponse CBOR inside ``{"response": b64url(cbor(["dcapi", {"enc",
    "cipherText"}]))}``'s value, or MdocError: any change to the ciphertext, the key it was
    sealed to or the transcript (origin, EncryptionInfo) fails the AEAD tag."""
    if not isinstance(response, str) or not response:
        raise MdocError("org-iso-mdoc response is not a base64url string")
    if len(response) > MAX_RESPONSE_CHARS:
        raise MdocError("org-iso-mdoc response is too large")
    stripped = response.rstrip("=")
    if not BASE64URL.fullmatch(stripped) or len(stripped) % 4 == 1:
        raise MdocError("org-iso-mdoc response is not base64url")
    raw = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    try:
        envelope = loads(raw, "org-iso-mdoc response")
    except CoseError as exc:
        raise MdocError(exc.reason) from None
    if not (isinstance(envelope, list) and len(envelope) == 2 and envelope[0] == HANDOVER):
        raise MdocError('org-iso-mdoc response is not ["dcapi", {enc, cipherText}]')
    sealed = envelope[1]
    enc = sealed.get("enc") if isinstance(sealed, dict) else None
    cipher_text = sealed.get("cipherText") if isinstance(sealed, dict) else None
    if not isinstance(enc, bytes) or not isinstance(cipher_text, bytes):
        raise MdocError("org-iso-mdoc response enc and cipherText must be byte strings")
    try:
        context = SUITE.create_recipient_context(
            enc, KEMKey.from_pyca_cryptography_key(recipient), info=transcript
        )
        return context.open(cipher_text, aad=b"")
    except (PyHPKEError, ValueError, TypeError):
        raise MdocError(
            "org-iso-mdoc response cannot be opened: it was not sealed to this request's key "
            "for this page's origin, or it was changed"
        ) from None
