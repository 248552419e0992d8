"""A verification's ``org-iso-mdoc`` request and the opening of its answer (ISO/IEC 18013-7
Annex C), between the protocol code (``app.mdoc.annex_c``) and the channel that carries it.

The recipient key is derived, never stored: HKDF from the deployment's secret and the
presentation request's ID (``derive_p256_key``), so each request has its own key that any
instance can rebuild and a database dump holds nothing that opens a response. A response is
opened only for a request that is still pending (``read_pending`` refuses an answered or
expired one first), so once the request is answered or expired its key is never made again.
The EncryptionInfo is rebuilt from the same inputs (the request's nonce and that key) and so
is byte for byte the string the browser was given, which the SessionTranscript hashes.
"""

from __future__ import annotations

import uuid

from cryptography.hazmat.primitives.asymmetric import ec

from app.mdoc.annex_c import (
    AnnexCRequest,
    Element,
    ReaderIdentity,
    build_request,
    encryption_info,
    open_response,
    session_transcript,
)
from app.oid4vp.encryption import derive_p256_key
from app.presentations.presented import Rules

RECIPIENT_KEY_INFO = b"verity org-iso-mdoc recipient key v1:"


def recipient_key(secret: bytes, request_id: uuid.UUID) -> ec.EllipticCurvePrivateKey:
    """The presentation request's own HPKE recipient key."""
    return derive_p256_key(secret, RECIPIENT_KEY_INFO + str(request_id).encode("ascii"))


def asked_elements(rules: Rules, retained: bool) -> list[Element]:
    """Exactly what the decision reads: the requested claims and the elements conditions read,
    each in its namespace. ``intentToRetain`` is true only where the value is kept (the
    decision keeps the requested claims when the verification keeps any claims at all)."""
    names = list(rules.requested_claims)
    for condition in rules.conditions:
        name = condition.get("name") or condition.get("attribute_id")
        if name and name not in names:
            names.append(name)
    kept = set(rules.requested_claims) if retained else set()
    return [Element(rules.credential.namespace_of(name), name, name in kept) for name in names]


def annex_c_request(
    request_id: uuid.UUID,
    nonce: str,
    rules: Rules,
    *,
    retained: bool,
    origin: str,
    secret: bytes,
    reader: ReaderIdentity | None,
) -> AnnexCRequest:
    """The ``org-iso-mdoc`` request for one presentation request."""
    return build_request(
        rules.credential.doctype,
        asked_elements(rules, retained),
        nonce=nonce.encode("ascii"),
        recipient=recipient_key(secret, request_id).public_key(),
        origin=origin,
        reader=reader,
    )


def opened_presentation(
    request_id: uuid.UUID, nonce: str, response: object, *, origin: str, secret: bytes
) -> tuple[bytes, bytes]:
    """The DeviceResponse inside ``response`` (its CBOR, which the mdoc reader takes as is)
    and the SessionTranscript its device signature must cover; raises ``MdocError``."""
    key = recipient_key(secret, request_id)
    info = encryption_info(nonce.encode("ascii"), key.public_key())
    transcript = session_transcript(info, origin)
    return open_response(response, key, transcript), transcript


def element_pairs(rules: Rules) -> frozenset[tuple[str, str]]:
    """The (namespace, element) pairs the DeviceRequest named."""
    return frozenset((e.namespace, e.identifier) for e in asked_elements(rules, False))
