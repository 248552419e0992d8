"""Verify an ISO 18013-5 DeviceResponse presented as an OpenID4VP ``mso_mdoc`` vp_token entry.

The checks follow ISO 18013-5 9.3.1 (mdoc authentication) in order:

1. the entry is base64url CBOR, a DeviceResponse with status 0 holding exactly one document,
   of the requested docType (OpenID4VP 1.0 B.2.3);
2. IssuerAuth is a COSE_Sign1 (ES256/384/512) whose x5chain (label 33) validates to a
   configured IACA anchor at ``now``; the document signer certificate may sign
   (keyUsage digitalSignature; extendedKeyUsage, when present, names mdoc DS
   1.0.18013.5.1.2);
3. its payload, the MobileSecurityObject (tag 24), is version 1.0, uses SHA-256/384/512, names
   the same docType, was signed while the document signer certificate was valid, and its
   validityInfo holds ``now``;
4. every disclosed IssuerSignedItemBytes (tag 24, hashed as received) digests to
   valueDigests[namespace][digestID], with no digest ID or element given twice;
5. DeviceAuth is a deviceSignature by the MSO's deviceKey over DeviceAuthenticationBytes built
   with the verifier's own SessionTranscript (a deviceMac needs a reader key agreement this
   flow does not have, so it is refused).

Only issuer-signed elements are returned: device-signed elements carry no issuer attestation.
No COSE library is used: both signatures are COSE_Sign1 read by ``app.cose``, whose few checks
(algorithm from the protected header, ES256/384/512 only, raw r || s over the Sig_structure)
are explicit, and the device key is one EC2 COSE_Key (``device_key``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from app.cose import CoseError, Sign1, data_item, loads, read_sign1, text_string, x5chain
from app.mdoc.device_key import ec2_public_key
from app.mdoc.errors import MdocError, refusing
from app.recently_used import RecentlyUsed
from app.trust import ResolvedIssuer, TrustError
from app.trust.x5c import bind_identity, leaf_key, validate_chain

# A DeviceResponse with a portrait is tens of kilobytes; far more is refused before decoding.
MAX_ENTRY_CHARS = 1_000_000
BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
MSO_VERSION = "1.0"
DIGESTS = {"SHA-256": hashlib.sha256, "SHA-384": hashlib.sha384, "SHA-512": hashlib.sha512}
# ISO 18013-5 Annex B.1.4: the document signer's extendedKeyUsage.
MDOC_DS_EKU = x509.ObjectIdentifier("1.0.18013.5.1.2")
DATA_ITEM = 24  # RFC 8949 3.4.5.1: encoded CBOR data item
DEVICE_AUTHENTICATION = b"\x84" + cbor2.dumps("DeviceAuthentication")


@dataclass(frozen=True)
class VerifiedDocument:
    """What a verified mdoc attests: who signed it, its type, its elements, its status entry.

    ``namespaces`` maps each namespace to its disclosed elements, values made JSON-able
    (full-date "YYYY-MM-DD", tdate ISO 8601 with Z, bytes base64url). ``status`` is the MSO
    ``status`` entry (Token Status List), or None when the issuer gave none.
    """

    issuer: ResolvedIssuer
    doctype: str
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: dict[str, Any] | None = None


@refusing("Device response is malformed")
def verify_device_response(
    vp_token_entry: str | bytes,
    *,
    doctype: str,
    transcript: bytes,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> VerifiedDocument:
    """Verify the entry (base64url text, or the DeviceResponse's CBOR bytes) and return its
    issuer-signed elements, or raise MdocError."""
    try:
        return _verify(vp_token_entry, doctype, transcript, anchors, now)
    except CoseError as exc:
        raise MdocError(exc.reason) from None


def _verify(
    vp_token_entry: str | bytes,
    doctype: str,
    transcript: bytes,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> VerifiedDocument:
    document = _single_document(_decode_entry(vp_token_entry), doctype)
    issuer_signed = _map(document.get("issuerSigned"), "Document issuerSigned")
    issuer_auth = read_sign1(issuer_signed.get("issuerAuth"), "IssuerAuth")
    issuer = _document_signer(issuer_auth, anchors, now)
    issuer_auth.verify(issuer.key)
    mso = _mobile_security_object(issuer_auth)
    _check_mso(mso, doctype, now, issuer.certificates[0])
    namespaces = _disclosed(issuer_signed.get("nameSpaces", {}), mso)
    _check_device_auth(document, mso, doctype, transcript)
    status = mso.get("status")
    if status is not None and not isinstance(status, dict):
        raise MdocError("Mobile security object status is malformed")
    return VerifiedDocument(
        issuer=issuer,
        doctype=doctype,
        namespaces=namespaces,
        status=_json_value(status) if status is not None else None,
    )


# --------------------------------------------------------------------------- the envelope


def _decode_entry(entry: str | bytes) -> dict[str, Any]:
    if isinstance(entry, bytes):
        # Annex C (org-iso-mdoc) carries the DeviceResponse as CBOR, opened from its HPKE seal.
        if len(entry) > MAX_ENTRY_CHARS:
            raise MdocError("Device response is too large")
        return _map(loads(entry, "Device response"), "Device response")
    if not isinstance(entry, str) or not entry:
        raise MdocError("Device response is not a base64url string")
    if len(entry) > MAX_ENTRY_CHARS:
        raise MdocError("Device response is too large")
    stripped = entry.rstrip("=")
    # b64decode skips characters outside the alphabet unless told not to: check them first.
    if not BASE64URL.fullmatch(stripped) or len(stripped) % 4 == 1:
        raise MdocError("Device response is not base64url")
    raw = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    response = loads(raw, "Device response")
    return _map(response, "Device response")


def _single_document(response: dict[str, Any], doctype: str) -> dict[str, Any]:
    """OpenID4VP 1.0 B.2.3: one DeviceResponse per credential, so exactly one document."""
    if response.get("version") != "1.0":
        raise MdocError("Device response version is not 1.0")
    if response.get("status") != 0 or isinstance(response.get("status"), bool):
        raise MdocError("Device response status is not OK")
    documents = response.get("documents")
    if not isinstance(documents, list) or not documents:
        raise MdocError("Device response holds no document")
    if len(documents) != 1:
        raise MdocError("Device response holds more than one document")
    document = _map(documents[0], "Document")
    if document.get("docType") != doctype:
        raise MdocError("Credential type presented is not the type this verification asks for")
    return document


# --------------------------------------------------------------------------- the issuer


@dataclass(frozen=True)
class _Signer:
    """What a document signer certificate says that does not change with time."""

    key: ec.EllipticCurvePublicKey
    identifier: str


# A document signer certificate signs thousands of mdocs: its key, the issuer it names and
# that it may sign mdocs are read once per certificate (only certificates that passed are
# kept), while its chain is validated for every presentation (``validate_chain``: its dates).
KNOWN_SIGNERS: RecentlyUsed[x509.Certificate, _Signer] = RecentlyUsed(size=256)


def _document_signer(
    issuer_auth: Sign1, anchors: Sequence[x509.Certificate], now: datetime
) -> ResolvedIssuer:
    """ISO 18013-5 9.3.3: the x5chain leads from the document signer to an IACA anchor."""
    chain = x5chain(issuer_auth)
    if chain is None:
        raise MdocError("IssuerAuth carries no certificate chain (x5chain)")
    try:
        path = validate_chain(chain, anchors, now)
    except TrustError as exc:
        raise MdocError(exc.reason) from None
    signer = KNOWN_SIGNERS.get(path[0])
    if signer is None:
        signer = _read_signer(path[0])
        KNOWN_SIGNERS.put(path[0], signer)
    return ResolvedIssuer(
        identifier=signer.identifier, key=signer.key, method="x5c", certificates=path
    )


def _read_signer(leaf: x509.Certificate) -> _Signer:
    try:
        key = leaf_key(leaf)
        identifier = bind_identity(leaf, None)
    except TrustError as exc:
        raise MdocError(exc.reason) from None
    _check_ds_usage(leaf)
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise MdocError("Issuer certificate key is not an elliptic curve key")
    return _Signer(key, identifier)


def _check_ds_usage(leaf: x509.Certificate) -> None:
    """ISO 18013-5 B.1.4: a document signer certificate is for signing mdocs."""
    try:
        usage = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return
    if MDOC_DS_EKU not in usage:
        raise MdocError("Issuer certificate is not a document signer (extendedKeyUsage)")


# --------------------------------------------------------------------------- the MSO


def _mobile_security_object(issuer_auth: Sign1) -> dict[str, Any]:
    """ISO 18013-5 9.1.2.4: the payload is MobileSecurityObjectBytes, #6.24(bstr .cbor MSO)."""
    payload = loads(issuer_auth.payload or b"", "Mobile security object")
    inner = _data_item(payload, "Mobile security object")
    return _map(loads(inner, "Mobile security object"), "Mobile security object")


def _check_mso(mso: dict[str, Any], doctype: str, now: datetime, signer: x509.Certificate) -> None:
    if mso.get("version") != MSO_VERSION:
        raise MdocError("Mobile security object version is not 1.0")
    if mso.get("digestAlgorithm") not in DIGESTS:
        raise MdocError(
            "Mobile security object digest algorithm is not SHA-256, SHA-384 or SHA-512"
        )
    if mso.get("docType") != doctype:
        raise MdocError("Mobile security object docType does not match the document")
    validity = _map(mso.get("validityInfo"), "Mobile security object validityInfo")
    signed = _tdate(validity.get("signed"), "signed")
    # ISO 18013-5 9.3.1: the MSO was signed while its document signer certificate was valid.
    if not signer.not_valid_before_utc <= signed <= signer.not_valid_after_utc:
        raise MdocError(
            "Mobile security object was signed outside its document signer certificate's validity"
        )
    valid_from = _tdate(validity.get("validFrom"), "validFrom")
    valid_until = _tdate(validity.get("validUntil"), "validUntil")
    if now < valid_from:
        raise MdocError("Credential is not valid yet")
    if now > valid_until:
        raise MdocError("Credential has expired")


def _tdate(value: Any, name: str) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise MdocError(f"Mobile security object {name} is not a date-time")
    return value


def _disclosed(namespaces: Any, mso: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """ISO 18013-5 9.3.1 step 4: each IssuerSignedItemBytes, hashed exactly as received,
    equals the digest the issuer signed for its digest ID."""
    namespaces = _map(namespaces, "Document nameSpaces")
    value_digests = _map(mso.get("valueDigests"), "Mobile security object valueDigests")
    digest = DIGESTS[mso["digestAlgorithm"]]
    disclosed: dict[str, dict[str, Any]] = {}
    for namespace, items in namespaces.items():
        if not isinstance(namespace, str) or not isinstance(items, list):
            raise MdocError("Document nameSpaces is malformed")
        signed = value_digests.get(namespace)
        if not isinstance(signed, dict):
            raise MdocError("Mobile security object has no digests for a disclosed namespace")
        disclosed[namespace] = _namespace_elements(items, signed, digest)
    return disclosed


def _namespace_elements(items: list[Any], signed: dict[Any, Any], digest: Any) -> dict[str, Any]:
    elements: dict[str, Any] = {}
    seen_ids: set[int] = set()
    for item in items:
        if not isinstance(item, cbor2.CBORTag) or item.tag != DATA_ITEM:
            raise MdocError("Issuer-signed item is not an encoded CBOR data item")
        decoded = _map(
            loads(_data_item(item, "Issuer-signed item"), "Issuer-signed item"),
            "Issuer-signed item",
        )
        digest_id = decoded.get("digestID")
        identifier = decoded.get("elementIdentifier")
        if not isinstance(digest_id, int) or isinstance(digest_id, bool) or digest_id < 0:
            raise MdocError("Issuer-signed item digestID is malformed")
        if not isinstance(identifier, str) or not isinstance(decoded.get("random"), bytes):
            raise MdocError("Issuer-signed item is malformed")
        if "elementValue" not in decoded:
            raise MdocError("Issuer-signed item has no elementValue")
        if digest_id in seen_ids:
            raise MdocError("Issuer-signed items repeat a digest ID")
        if identifier in elements:
            raise MdocError("Issuer-signed items repeat an element")
        seen_ids.add(digest_id)
        expected = signed.get(digest_id)
        # The item as received is #6.24(bstr): re-encoded in its shortest form, as cbor2 would.
        if not isinstance(expected, bytes) or digest(data_item(item.value)).digest() != expected:
            raise MdocError(
                "Issuer-signed item does not match its digest in the mobile security object"
            )
        elements[identifier] = _json_value(decoded["elementValue"])
    return elements


# --------------------------------------------------------------------------- the device


def _check_device_auth(
    document: dict[str, Any], mso: dict[str, Any], doctype: str, transcript: bytes
) -> None:
    """ISO 18013-5 9.1.3: the device key the issuer certified signs this session's transcript."""
    if not isinstance(transcript, bytes) or not transcript:
        raise MdocError("Session transcript is missing")
    device_signed = _map(document.get("deviceSigned"), "Document deviceSigned")
    device_auth = _map(device_signed.get("deviceAuth"), "Device authentication")
    name_spaces = device_signed.get("nameSpaces")
    if not isinstance(name_spaces, cbor2.CBORTag) or name_spaces.tag != DATA_ITEM:
        raise MdocError("Device-signed nameSpaces is not an encoded CBOR data item")
    if "deviceMac" in device_auth and "deviceSignature" not in device_auth:
        raise MdocError(
            "Device authentication uses a MAC, which needs a reader key this flow does not "
            "have; a device signature is required"
        )
    if "deviceSignature" not in device_auth:
        raise MdocError("Device authentication is missing")
    signature = read_sign1(device_auth["deviceSignature"], "DeviceAuth")
    if signature.payload is not None:
        raise MdocError("DeviceAuth must have a detached payload")
    key_info = _map(mso.get("deviceKeyInfo"), "Mobile security object deviceKeyInfo")
    device_key = ec2_public_key(key_info.get("deviceKey"))
    signature.verify(device_key, _device_authentication_bytes(transcript, doctype, name_spaces))


def _device_authentication_bytes(transcript: bytes, doctype: str, name_spaces: Any) -> bytes:
    """#6.24(bstr .cbor ["DeviceAuthentication", SessionTranscript, DocType,
    DeviceNameSpacesBytes]), the transcript spliced in as the exact bytes the verifier built."""
    spaces = name_spaces.value
    authentication = (
        DEVICE_AUTHENTICATION  # an array of four and its first member
        + transcript
        + text_string(doctype)
        + (data_item(spaces) if isinstance(spaces, bytes) else cbor2.dumps(name_spaces))
    )
    return data_item(authentication)


# --------------------------------------------------------------------------- helpers


def _map(value: Any, what: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise MdocError(f"{what} is not a CBOR map")
    return value


def _data_item(value: Any, what: str) -> bytes:
    if not isinstance(value, cbor2.CBORTag) or value.tag != DATA_ITEM:
        raise MdocError(f"{what} is not an encoded CBOR data item")
    if not isinstance(value.value, bytes):
        raise MdocError(f"{what} is not an encoded CBOR data item")
    return value.value


def _json_value(value: Any) -> Any:
    """Element values as JSON: RFC 8943 full-date "YYYY-MM-DD", tdate ISO 8601 with Z,
    bytes base64url (no padding), maps and arrays converted inside."""
    if isinstance(value, datetime):
        text = value.astimezone(UTC).replace(tzinfo=None).isoformat()
        return text + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.urlsafe_b64encode(value).rstrip(b"=").decode("ascii")
    if isinstance(value, Mapping):  # a frozendict inside a tag cbor2 has no decoder for
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    if isinstance(value, cbor2.CBORTag):
        return _json_value(value.value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise MdocError("Issuer-signed item value is not a finite number")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if value is cbor2.undefined:
        return None
    raise MdocError("Issuer-signed item value cannot be represented")
