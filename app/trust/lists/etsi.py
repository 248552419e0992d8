"""ETSI TS 119 612 trusted lists and the EU List of Trusted Lists: XML with an enveloped
XAdES signature (TS 119 612 §5.7).

The signature is checked by ``signxml`` (XML-DSig and XAdES: canonicalization, references,
the signing certificate digest in the signed properties), with SHA-1 refused. Trust comes
from the signers the staff give: the certificate in the signature's KeyInfo must be one of
them, or carry the same key (a signer re-certified under the same key, as the List of Trusted
Lists announces its signers). The list is then read from what the signature covers, never
from the raw input, so nothing outside the signed tree (a wrapped or appended element) can
add a service.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from datetime import datetime

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from lxml import etree
from signxml import InvalidCertificate, InvalidDigest
from signxml.exceptions import SignXMLException
from signxml.xades import XAdESSignatureConfiguration, XAdESVerifier

from app.trust.lists.model import (
    ETSI_TSL,
    EU_LOTL,
    MAX_LIST_BYTES,
    ListedService,
    ListPointer,
    TrustList,
    TrustListError,
    parse_datetime,
)

TSL = "http://uri.etsi.org/02231/v2#"
TSLX = "http://uri.etsi.org/02231/v2/additionaltypes#"
DS = "http://www.w3.org/2000/09/xmldsig#"
XADES_SIGNED_PROPERTIES = "{http://uri.etsi.org/01903/v1.3.2#}SignedProperties"
NS = {"tsl": TSL, "tslx": TSLX, "ds": DS}
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _parser() -> etree.XMLParser:
    """No DTD, no entity expansion, no network, no "huge tree" escape from libxml2's limits.
    signxml refuses any DTD or entity on top of this."""
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def read_etsi_tsl(xml: bytes, signer_certificates: Sequence[x509.Certificate]) -> TrustList:
    """Verify the list's enveloped signature (its signing certificate, or that certificate's
    key, must be one of ``signer_certificates``) and read it. A List of Trusted Lists comes
    back with kind ``eu_lotl`` and its pointers filled; a member state list with kind
    ``etsi_tsl`` and its services (and its pointers, usually back to the List of Trusted
    Lists). Raises TrustListError."""
    if not signer_certificates:
        raise TrustListError("No signer certificates are given, so the list cannot be trusted")
    if len(xml) > MAX_LIST_BYTES:
        raise TrustListError("The list is larger than a trusted list can be")
    try:
        root = etree.fromstring(xml, _parser())
    except etree.XMLSyntaxError:
        raise TrustListError("The list is not well-formed XML") from None
    if root.getroottree().docinfo.doctype:
        raise TrustListError("The list declares a DTD, which a trusted list never does")
    if root.tag != f"{{{TSL}}}TrustServiceStatusList":
        raise TrustListError("The document is not an ETSI trusted list")
    signed = _verified_list(xml, root, signer_certificates)
    return _read(signed)


def _verified_list(
    xml: bytes, root: etree._Element, signers: Sequence[x509.Certificate]
) -> etree._Element:
    signing_cert = _signing_certificate(root)
    if not any(_same_signer(signing_cert, signer) for signer in signers):
        raise TrustListError("The list is not signed by any of the given signer certificates")
    # The signing certificate's validity is judged when the list says it was issued: a list
    # stays readable after its signer expires (whether it is stale is next_update's business).
    # The date is read before the signature is checked, but is itself covered by it.
    issued = _issue_datetime(root)
    config = XAdESSignatureConfiguration(expect_references=True, verification_time=issued)
    try:
        results = XAdESVerifier().verify(
            xml, x509_cert=signing_cert, expect_config=config, parser=_parser()
        )
    except InvalidCertificate:
        raise TrustListError(
            "The list's signing certificate was not valid when the list was issued"
        ) from None
    except InvalidDigest:
        raise TrustListError("The list's content does not match its signature") from None
    except (SignXMLException, ValueError, etree.LxmlError) as exc:
        raise TrustListError(f"The list's signature does not verify: {_plain(exc)}") from None
    covered = [r.signed_xml for r in results if r.signed_xml is not None]
    lists = [e for e in covered if e.tag == root.tag]
    if len(lists) != 1:
        raise TrustListError("The list's signature does not cover the whole list")
    if not any(e.tag == XADES_SIGNED_PROPERTIES for e in covered):
        raise TrustListError("The list's signature is not a XAdES signature")
    return lists[0]


def _plain(exc: Exception) -> str:
    text = str(exc).strip().rstrip(".")
    return text[:1].lower() + text[1:200] if text else "malformed signature"


def _signing_certificate(root: etree._Element) -> x509.Certificate:
    """TS 119 612 §5.7.1: the signature is a child of the list and its KeyInfo carries the
    signing certificate."""
    signatures = root.findall("ds:Signature", NS)
    if not signatures:
        raise TrustListError("The list is not signed")
    if len(signatures) > 1:
        raise TrustListError("The list carries more than one signature")
    certs = signatures[0].findall("ds:KeyInfo/ds:X509Data/ds:X509Certificate", NS)
    if not certs:
        raise TrustListError("The list's signature names no signing certificate")
    cert = _certificate(certs[0].text)
    if cert is None:
        raise TrustListError("The list's signing certificate cannot be read")
    return cert


def _same_signer(signing: x509.Certificate, given: x509.Certificate) -> bool:
    return signing == given or _spki(signing) == _spki(given)


def _spki(cert: x509.Certificate) -> bytes:
    return cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)


def _issue_datetime(root: etree._Element) -> datetime:
    issued = parse_datetime(_text(root, "tsl:SchemeInformation/tsl:ListIssueDateTime"))
    if issued is None:
        raise TrustListError("The list gives no valid issue date")
    return issued


def _read(root: etree._Element) -> TrustList:
    scheme = root.find("tsl:SchemeInformation", NS)
    if scheme is None:
        raise TrustListError("The list has no scheme information")
    tsl_type = _text(scheme, "tsl:TSLType") or ""
    territory = _text(scheme, "tsl:SchemeTerritory")
    next_update = _text(scheme, "tsl:NextUpdate/tsl:dateTime")
    return TrustList(
        kind=EU_LOTL if tsl_type.lower().endswith("listofthelists") else ETSI_TSL,
        territory=territory,
        operator=_name(scheme.find("tsl:SchemeOperatorName", NS)),
        sequence_number=_integer(_text(scheme, "tsl:TSLSequenceNumber")),
        issued_at=_issue_datetime(root),
        next_update=parse_datetime(next_update) if next_update else None,
        services=tuple(_services(root, territory)),
        pointers=tuple(_pointers(scheme)),
    )


def _services(root: etree._Element, territory: str | None) -> list[ListedService]:
    """Every certificate a service is identified by, with the service's current status. The
    service history is not read: the current status is in ServiceInformation itself."""
    services = []
    for provider in root.iterfind("tsl:TrustServiceProviderList/tsl:TrustServiceProvider", NS):
        entity = _name(provider.find("tsl:TSPInformation/tsl:TSPName", NS))
        for info in provider.iterfind("tsl:TSPServices/tsl:TSPService/tsl:ServiceInformation", NS):
            service_type = _text(info, "tsl:ServiceTypeIdentifier") or ""
            status = _text(info, "tsl:ServiceStatus") or ""
            starting = parse_datetime(_text(info, "tsl:StatusStartingTime"))
            for element in info.iterfind(
                "tsl:ServiceDigitalIdentity/tsl:DigitalId/tsl:X509Certificate", NS
            ):
                cert = _certificate(element.text)
                if cert is None:
                    continue  # one unreadable certificate does not hide the rest of the list
                services.append(
                    ListedService(cert, service_type, status, starting, entity, territory)
                )
    return services


def _pointers(scheme: etree._Element) -> list[ListPointer]:
    pointers = []
    for pointer in scheme.iterfind("tsl:PointersToOtherTSL/tsl:OtherTSLPointer", NS):
        location = _text(pointer, "tsl:TSLLocation")
        if not location:
            continue
        info = "tsl:AdditionalInformation/tsl:OtherInformation"
        certs = (
            _certificate(e.text)
            for e in pointer.iterfind(
                "tsl:ServiceDigitalIdentities/tsl:ServiceDigitalIdentity/tsl:DigitalId"
                "/tsl:X509Certificate",
                NS,
            )
        )
        pointers.append(
            ListPointer(
                location=location,
                territory=_text(pointer, f"{info}/tsl:SchemeTerritory") or "",
                mime_type=_text(pointer, f"{info}/tslx:MimeType"),
                signer_certificates=tuple(c for c in certs if c is not None),
            )
        )
    return pointers


def _text(element: etree._Element, path: str) -> str | None:
    found = element.find(path, NS)
    if found is None or found.text is None:
        return None
    return found.text.strip() or None


def _name(names: etree._Element | None) -> str:
    """A multilingual name (TS 119 612 §5.1.4): the English one, else the first given."""
    if names is None:
        return ""
    values = [(n.get(XML_LANG, "").lower(), (n.text or "").strip()) for n in names]
    english = [text for lang, text in values if lang == "en" and text]
    others = [text for _, text in values if text]
    return (english or others or [""])[0]


def _integer(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _certificate(text: str | None) -> x509.Certificate | None:
    if not text:
        return None
    try:
        return x509.load_der_x509_certificate(base64.b64decode("".join(text.split())))
    except (ValueError, binascii.Error):
        return None
