"""ETSI TS 119 602 Lists of Trusted Entities: JSON (the Annex A JSON binding,
``{"LoTE": {"ListAndSchemeInformation": ..., "TrustedEntitiesList": [...]}}``) signed with
JAdES (ETSI TS 119 182-1), that is a JWS whose protected header carries the signing
certificate in ``x5c``.

The signature is checked by the one JWS verifier of the project (``app.sdjwt.jws``: asymmetric
algorithms only, the algorithm fitted to the key). The JAdES header parameters that only add
signed information about the signature (signing time, certificate references, commitments)
may be marked critical; a detached payload (``sigD``, ``b64`` false) is refused, since the
list must be in the signature. The signing certificate, or its key, must be one of the signers
the staff give.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from app.sdjwt.encoding import b64url_decode, decode_json_object, parse_json
from app.sdjwt.errors import SdJwtError
from app.sdjwt.jws import verify_jws
from app.trust.lists.model import (
    ETSI_LOTE,
    MAX_LIST_BYTES,
    ListedService,
    ListPointer,
    TrustList,
    TrustListError,
    parse_datetime,
)

# ETSI TS 119 182-1 §5.2 and §5.3: header parameters that a JAdES signature lists in "crit"
# and that add signed facts about the signature without changing what is signed.
JADES_UNDERSTOOD = frozenset(
    {"sigT", "x5t#o", "sigX5ts", "srCms", "sigPl", "srAts", "adoTst", "sigPId"}
)
# Where a service gives no status, being on the list is the grant: the EU profiles of
# TS 119 602 (PID providers, wallet providers, access and registration certificate providers)
# carry no ServiceStatus.
LISTED = "granted"


def read_lote(document: bytes, signer_certificates: Sequence[x509.Certificate]) -> TrustList:
    """Verify the JWS (compact or JSON serialization; the first ``x5c`` certificate, or its
    key, must be one of ``signer_certificates``) and read the list. Raises TrustListError."""
    if not signer_certificates:
        raise TrustListError("No signer certificates are given, so the list cannot be trusted")
    if len(document) > MAX_LIST_BYTES:
        raise TrustListError("The list is larger than a list of trusted entities can be")
    try:
        text = document.decode("ascii").strip()
    except UnicodeDecodeError:
        raise TrustListError("The list is not a JAdES signature (JWS)") from None
    errors = []
    for compact in _compact_forms(text):
        try:
            return _read(_verified_payload(compact, signer_certificates))
        except TrustListError as exc:
            errors.append(exc)
    raise errors[0]


def _compact_forms(text: str) -> list[str]:
    """The signatures of a compact or JSON serialized JWS (RFC 7515 §7), each spelled in the
    compact form that has the same signing input."""
    if not text.startswith("{"):
        return [text]
    try:
        jws = parse_json(text.encode("ascii"), "The list")
    except SdJwtError:
        raise TrustListError("The list is not a JAdES signature (JWS)") from None
    if not isinstance(jws, dict) or not isinstance(jws.get("payload"), str):
        raise TrustListError("The list is not a JAdES signature (JWS) with its payload")
    signatures = jws.get("signatures", [jws])
    if not isinstance(signatures, list) or not signatures:
        raise TrustListError("The list's JWS carries no signature")
    forms = []
    for signature in signatures:
        if not isinstance(signature, dict):
            raise TrustListError("The list's JWS signature is malformed")
        protected, value = signature.get("protected"), signature.get("signature")
        if not isinstance(protected, str) or not isinstance(value, str):
            raise TrustListError("The list's JWS signature has no protected header")
        forms.append(f"{protected}.{jws['payload']}.{value}")
    return forms


def _verified_payload(compact: str, signers: Sequence[x509.Certificate]) -> Any:
    try:
        header_b64 = compact.split(".", 1)[0]
        header = decode_json_object(header_b64, "The list's signature header")
        if "sigD" in header or header.get("b64") is False:
            raise TrustListError("The list's signature is detached from the list")
        signing_cert = _signing_certificate(header)
        if not any(_same_signer(signing_cert, signer) for signer in signers):
            raise TrustListError("The list is not signed by any of the given signer certificates")
        _, payload_b64, _ = compact.split(".")
        verify_jws(
            compact,
            signing_cert.public_key(),
            label="The list",
            decoded=(header, {}),
            understood=JADES_UNDERSTOOD,
        )
        return parse_json(b64url_decode(payload_b64, "The list"), "The list")
    except SdJwtError as exc:
        raise TrustListError(exc.reason) from None
    except ValueError:
        raise TrustListError("The list is not a JAdES signature (JWS)") from None


def _signing_certificate(header: dict[str, Any]) -> x509.Certificate:
    chain = header.get("x5c")
    if not isinstance(chain, list) or not chain or not isinstance(chain[0], str):
        raise TrustListError("The list's signature names no signing certificate (x5c)")
    try:
        return x509.load_der_x509_certificate(base64.b64decode(chain[0], validate=True))
    except (ValueError, binascii.Error):
        raise TrustListError("The list's signing certificate cannot be read") from None


def _same_signer(signing: x509.Certificate, given: x509.Certificate) -> bool:
    return signing == given or _spki(signing) == _spki(given)


def _spki(cert: x509.Certificate) -> bytes:
    return cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)


def _read(document: Any) -> TrustList:
    lote = document.get("LoTE", document) if isinstance(document, dict) else None
    scheme = lote.get("ListAndSchemeInformation") if isinstance(lote, dict) else None
    if not isinstance(scheme, dict):
        raise TrustListError("The list has no scheme information (ListAndSchemeInformation)")
    issued = _datetime(scheme.get("ListIssueDateTime"))
    if issued is None:
        raise TrustListError("The list gives no valid issue date")
    territory = _string(scheme.get("SchemeTerritory"))
    sequence = scheme.get("LoTESequenceNumber")
    return TrustList(
        kind=ETSI_LOTE,
        territory=territory,
        operator=_name(scheme.get("SchemeOperatorName")),
        sequence_number=sequence if isinstance(sequence, int) else None,
        issued_at=issued,
        next_update=_datetime(scheme.get("NextUpdate")),
        services=tuple(_services(lote.get("TrustedEntitiesList"), territory)),
        pointers=tuple(_pointers(scheme.get("PointersToOtherLoTE"))),
    )


def _services(entities: Any, territory: str | None) -> list[ListedService]:
    services = []
    for entity in _objects(entities):
        info = entity.get("TrustedEntityInformation")
        name = _name(info.get("TEName")) if isinstance(info, dict) else ""
        for service in _objects(entity.get("TrustedEntityServices")):
            details = service.get("ServiceInformation")
            if not isinstance(details, dict):
                continue
            service_type = _string(details.get("ServiceTypeIdentifier")) or ""
            status = _string(details.get("ServiceStatus")) or LISTED
            starting = _datetime(details.get("StatusStartingTime"))
            for cert in _certificates(details.get("ServiceDigitalIdentity")):
                services.append(
                    ListedService(cert, service_type, status, starting, name, territory)
                )
    return services


def _pointers(pointers: Any) -> list[ListPointer]:
    found = []
    for pointer in _objects(pointers):
        location = _string(pointer.get("LoTELocation"))
        if not location:
            continue
        qualifiers = _objects(pointer.get("LoTEQualifiers"))
        first = qualifiers[0] if qualifiers else {}
        certs = [
            cert
            for identity in _objects(pointer.get("ServiceDigitalIdentities"))
            for cert in _certificates(identity)
        ]
        found.append(
            ListPointer(
                location=location,
                territory=_string(first.get("SchemeTerritory")) or "",
                mime_type=_string(first.get("MimeType")),
                signer_certificates=tuple(certs),
            )
        )
    return found


def _certificates(identity: Any) -> list[x509.Certificate]:
    """ServiceDigitalIdentity.X509Certificates: ``{"val": base64 DER}`` objects (Annex A's
    ``pkiOb``). Subject names, SKIs and bare keys identify no certificate and are skipped."""
    if not isinstance(identity, dict):
        return []
    certs = []
    for item in _objects(identity.get("X509Certificates")):
        value = item.get("val")
        if not isinstance(value, str):
            continue
        try:
            certs.append(x509.load_der_x509_certificate(base64.b64decode(value, validate=True)))
        except (ValueError, binascii.Error):
            continue
    return certs


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _string(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _name(names: Any) -> str:
    """A multilingual string list (``[{"lang": "en", "value": ...}]``): English, else first."""
    values = [(str(n.get("lang", "")).lower(), _string(n.get("value"))) for n in _objects(names)]
    english = [v for lang, v in values if v and lang.split("-")[0] == "en"]
    others = [v for _, v in values if v]
    return (english or others or [""])[0]


def _datetime(value: Any) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else None
