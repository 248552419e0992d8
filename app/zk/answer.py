"""Decide a zero-knowledge answer (a ``DeviceResponse`` holding ``zkDocuments``) strictly.

The wire form is the one Google Wallet sends and Google's reference verifier reads
(``google/longfellow-zk`` ``reference/verifier-service/server/zk/cbor.go``, "ISO 18013-5
Second Edition ZKDocument")::

    DeviceResponse = {"version": "1.0", "status": 0, "zkDocuments": [ZkDocument]}
    ZkDocument     = {"proof": bstr, "documentData": #6.24(bstr .cbor ZkDocumentData)}
    ZkDocumentData = {"docType": tstr, "zkSystemId": tstr, "timestamp": tdate,
                      "issuerSigned": {namespace: [{"elementIdentifier", "elementValue"}]},
                      "msoX5chain": bstr / [+ bstr], ? "deviceSigned": {}}

The proof shows that an mdoc signed by the key of ``msoX5chain``'s first certificate, valid at
``timestamp``, holds the ``issuerSigned`` claims, and that its device key signed this session's
transcript; everything else about the licence stays with the holder. What the proof is checked
against is Verity's, never the answer's: the circuit is one Verity pins and the request offered
(``app.zk.circuits``); the transcript is the one Verity rebuilt for its request; the claim's
value is the one the verification expects (a wallet that says ``false`` is refused, whatever
its proof shows); the document signer's certificate must chain to a trusted IACA at Verity's
clock. Every check that needs no proof comes first, so a refusal costs no CPU. No database,
no Flask: the proof check itself is passed in (``verify``), run in ``app.zk.pool``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from app.cose import CoseError, loads
from app.mdoc.device_response import MDOC_DS_EKU
from app.trust import ResolvedIssuer, TrustError
from app.trust.x5c import MAX_CHAIN_LENGTH, bind_identity, leaf_key, validate_chain
from app.zk.backend import ProofCheck
from app.zk.circuits import pinned
from app.zk.errors import ZkBusy, ZkError

# An isrg-rust v7 proof is 831 KB; base64url inside a JWE makes its answer about 1.5 MB. The
# answer endpoint of a ZK request reads up to 2 MiB (``ZK_MAX_ANSWER_BYTES``), so does this.
MAX_ENTRY_BYTES = 2 * 1024 * 1024
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
DATA_ITEM = 24
# Google Wallet proves at the end of the current day (UTC), ``23:59:59Z``: up to a day ahead
# of the verifier's clock. Behind it only by clock skew: a proof for yesterday is refused.
TIMESTAMP_AHEAD = timedelta(hours=24, minutes=5)
TIMESTAMP_BEHIND = timedelta(minutes=5)
# A claim's element identifier and CBOR value fit the circuit's fixed fields (32 and 64 bytes).
MAX_ID_BYTES = 32
MAX_VALUE_BYTES = 64


@dataclass(frozen=True)
class ZkRequest:
    """What the verification asked: the document type, the one claim and the value it must
    have, and the circuits the request offered (by ``zkSystemId``)."""

    doctype: str
    namespace: str
    element: str
    expected: Any
    offered: tuple[str, ...]


@dataclass(frozen=True)
class ZkVerified:
    """A proof that held: who issued the document, and the claim as the verification set it."""

    issuer: ResolvedIssuer
    doctype: str
    claims: dict[str, Any]
    zk_system_id: str


def check_answer(
    entry: str | bytes,
    request: ZkRequest,
    *,
    transcript: bytes,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    verify: Callable[[ProofCheck], str | None],
) -> ZkVerified:
    """Decide one vp_token entry (base64url text, or the CBOR bytes) or raise ``ZkError``;
    ``ZkBusy`` from ``verify`` (the proof could not be checked now) is no refusal and goes up."""
    try:
        document, proof = _zk_document(_decode(entry))
        return _decide(document, proof, request, transcript, anchors, now, verify)
    except (ZkError, ZkBusy):
        raise
    except CoseError as exc:
        raise ZkError(exc.reason) from None
    except Exception as exc:
        # Hostile CBOR can put any type anywhere: an unforeseen shape is a refusal.
        raise ZkError("Zero-knowledge device response is malformed") from exc


def _decode(entry: str | bytes) -> Mapping[Any, Any]:
    if isinstance(entry, str):
        if len(entry) > MAX_ENTRY_BYTES * 4 // 3 + 4:
            raise ZkError("Zero-knowledge device response is too large")
        stripped = entry.rstrip("=")
        if not stripped or not BASE64URL.fullmatch(stripped) or len(stripped) % 4 == 1:
            raise ZkError("Zero-knowledge device response is not base64url")
        entry = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    if not isinstance(entry, bytes) or not entry:
        raise ZkError("Zero-knowledge device response is not base64url")
    if len(entry) > MAX_ENTRY_BYTES:
        raise ZkError("Zero-knowledge device response is too large")
    return _map(loads(entry, "Zero-knowledge device response"), "Zero-knowledge device response")


def _zk_document(response: dict[Any, Any]) -> tuple[Mapping[Any, Any], bytes]:
    """One zkDocument and nothing else (OpenID4VP 1.0 B.2.3: one response per credential)."""
    if response.get("version") != "1.0":
        raise ZkError("Device response version is not 1.0")
    if response.get("status") != 0 or isinstance(response.get("status"), bool):
        raise ZkError("Device response status is not OK")
    if response.get("documents"):
        raise ZkError("Device response holds a document where a zero-knowledge proof was asked")
    documents = response.get("zkDocuments")
    if not isinstance(documents, list | tuple) or not documents:
        raise ZkError("Device response holds no zero-knowledge document")
    if len(documents) != 1:
        raise ZkError("Device response holds more than one zero-knowledge document")
    zk_document = _map(documents[0], "Zero-knowledge document")
    proof = zk_document.get("proof")
    if not isinstance(proof, bytes) or not proof:
        raise ZkError("Zero-knowledge document carries no proof")
    data = zk_document.get("documentData")
    if isinstance(data, cbor2.CBORTag) and data.tag == DATA_ITEM:
        data = data.value
    if not isinstance(data, bytes):
        raise ZkError("Zero-knowledge document data is not an encoded CBOR data item")
    return _map(loads(data, "Zero-knowledge document data"), "Zero-knowledge document data"), proof


def _decide(
    document: Mapping[Any, Any],
    proof: bytes,
    request: ZkRequest,
    transcript: bytes,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    verify: Callable[[ProofCheck], str | None],
) -> ZkVerified:
    if document.get("docType") != request.doctype:
        raise ZkError("Credential type presented is not the type this verification asks for")
    system_id = document.get("zkSystemId")
    circuit = pinned(system_id) if isinstance(system_id, str) else None
    if circuit is None or system_id not in request.offered:
        raise ZkError("Zero-knowledge proof uses a circuit this request did not offer")
    if document.get("deviceSigned"):
        # The proof does not cover device-signed elements (google-cpp ignores them): none is
        # accepted, so nothing unproven is ever read as the holder's.
        raise ZkError("Zero-knowledge document carries device-signed elements")
    timestamp = _timestamp(document.get("timestamp"), now)
    _check_claims(document.get("issuerSigned"), request, circuit.num_attributes)
    issuer = _document_signer(document.get("msoX5chain"), anchors, now)
    numbers = issuer.key.public_numbers()
    reason = verify(
        ProofCheck(
            circuit_hash=circuit.circuit_hash,
            issuer_x=numbers.x,
            issuer_y=numbers.y,
            transcript=transcript,
            claims=((request.namespace, request.element, cbor2.dumps(request.expected)),),
            timestamp=timestamp,
            proof=proof,
            doctype=request.doctype,
        )
    )
    if reason is not None:
        raise ZkError(reason)
    return ZkVerified(
        issuer=issuer,
        doctype=request.doctype,
        claims={request.element: request.expected},
        zk_system_id=circuit.zk_system_id,
    )


def _timestamp(value: Any, now: datetime) -> datetime:
    """The time the proof speaks for: a whole-second tdate near Verity's clock."""
    if not isinstance(value, datetime) or value.tzinfo is None or value.microsecond:
        raise ZkError("Zero-knowledge proof timestamp is not a date-time in whole seconds")
    if value < now - TIMESTAMP_BEHIND:
        raise ZkError("Zero-knowledge proof timestamp is in the past")
    if value > now + TIMESTAMP_AHEAD:
        raise ZkError("Zero-knowledge proof timestamp is too far in the future")
    return value


def _check_claims(issuer_signed: Any, request: ZkRequest, num_attributes: int) -> None:
    """Exactly the circuit's number of claims, in the namespace asked, each one asked, with the
    value the verification sets: a proof of any other value is no proof of this one."""
    spaces = _map(issuer_signed, "Zero-knowledge issuerSigned")
    if list(spaces) != [request.namespace]:
        raise ZkError("Zero-knowledge proof is not over the namespace this verification asks")
    items = spaces[request.namespace]
    if not isinstance(items, list | tuple) or len(items) != num_attributes:
        raise ZkError("Zero-knowledge proof does not prove as many claims as its circuit")
    for item in items:
        item = _map(item, "Zero-knowledge issuer-signed item")
        identifier = item.get("elementIdentifier")
        if identifier != request.element:
            raise ZkError("Zero-knowledge proof is of a claim this verification did not ask for")
        if "elementValue" not in item:
            raise ZkError("Zero-knowledge issuer-signed item has no elementValue")
        value = item["elementValue"]
        if type(value) is not type(request.expected) or value != request.expected:
            raise ZkError(
                f"Attribute {request.element} does not satisfy EQUAL {_shown(request.expected)}"
            )
    if len(request.element.encode()) > MAX_ID_BYTES or (
        len(cbor2.dumps(request.expected)) > MAX_VALUE_BYTES
    ):
        raise ZkError("Zero-knowledge claim is longer than a circuit can prove")


def _shown(value: Any) -> str:
    return "true" if value is True else "false" if value is False else repr(value)


def _document_signer(
    chain: Any, anchors: Sequence[x509.Certificate], now: datetime
) -> ResolvedIssuer:
    """ISO 18013-5 9.3.3 as for any mdoc: the DS certificate chains to an IACA at ``now``, may
    sign mdocs, and holds the P-256 key the circuits check signatures with."""
    certificates = _certificates(chain)
    try:
        path = validate_chain(certificates, anchors, now)
        leaf = path[0]
        key = leaf_key(leaf)
        identifier = bind_identity(leaf, None)
    except TrustError as exc:
        raise ZkError(exc.reason) from None
    try:
        usage = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        usage = None
    if usage is not None and MDOC_DS_EKU not in usage:
        raise ZkError("Issuer certificate is not a document signer (extendedKeyUsage)")
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ZkError("Issuer certificate key is not a P-256 key, which the circuits check")
    return ResolvedIssuer(identifier=identifier, key=key, method="x5c", certificates=path)


def _certificates(chain: Any) -> list[x509.Certificate]:
    """``msoX5chain``: one bstr (a certificate, or several DER certificates one after the
    other, as Go's ``x509.ParseCertificates`` reads it) or an array of bstr, leaf first."""
    if isinstance(chain, bytes):
        ders = _split_der(chain)
    elif isinstance(chain, list | tuple) and chain and all(isinstance(c, bytes) for c in chain):
        ders = list(chain)
    else:
        raise ZkError("Zero-knowledge document carries no certificate chain (msoX5chain)")
    if not ders or len(ders) > MAX_CHAIN_LENGTH:
        raise ZkError("Zero-knowledge document carries no certificate chain (msoX5chain)")
    try:
        return [x509.load_der_x509_certificate(der) for der in ders]
    except ValueError:
        raise ZkError("Zero-knowledge msoX5chain holds a certificate that cannot be read") from None


def _split_der(data: bytes) -> list[bytes]:
    """Concatenated DER SEQUENCEs, each cut at its own length."""
    ders: list[bytes] = []
    offset = 0
    while offset < len(data):
        if data[offset] != 0x30 or offset + 2 > len(data):
            raise ZkError("Zero-knowledge msoX5chain holds a certificate that cannot be read")
        first = data[offset + 1]
        if first < 0x80:
            header, length = 2, first
        else:
            count = first & 0x7F
            if not 1 <= count <= 4 or offset + 2 + count > len(data):
                raise ZkError("Zero-knowledge msoX5chain holds a certificate that cannot be read")
            header = 2 + count
            length = int.from_bytes(data[offset + 2 : offset + header], "big")
        end = offset + header + length
        if end > len(data):
            raise ZkError("Zero-knowledge msoX5chain holds a certificate that cannot be read")
        ders.append(data[offset:end])
        offset = end
    return ders


def _map(value: Any, what: str) -> Mapping[Any, Any]:
    # cbor2 6 decodes what an unknown tag holds as immutable containers (a frozendict).
    if not isinstance(value, Mapping):
        raise ZkError(f"{what} is not a CBOR map")
    return value
