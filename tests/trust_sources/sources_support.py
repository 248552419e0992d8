"""Trust lists the tests publish and sign themselves, and credentials chained to the CAs they
list. ETSI lists are signed by Debian's ``xmlsec1`` (libxmlsec1, not the signxml the service
verifies with); VICALs are COSE_Sign1 written out here with cbor2 and cryptography; SD-JWT VCs
come from PyPI ``sd-jwt`` with an ``x5c`` header."""

from __future__ import annotations

import base64
import json
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from trust.lists.lists_support import (  # the signing helpers both kinds of list tests share
    GRANTED,
    QC,
    WITHDRAWN,  # noqa: F401  (the list tests import it from here)
    _b64,
    _when,
    vical_sign1,
    xades_signature,
    xmlsec1_sign,
)

PKC = "http://uri.etsi.org/TrstSvc/Svctype/CA/PKC"
NOW = datetime.now(UTC).replace(microsecond=0)


@dataclass(frozen=True)
class Party:
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @property
    def pem(self) -> str:
        return self.certificate.public_bytes(serialization.Encoding.PEM).decode()

    @property
    def b64(self) -> str:
        return base64.b64encode(self.certificate.public_bytes(serialization.Encoding.DER)).decode()


def make_party(
    name: str,
    *,
    issuer: Party | None = None,
    ca: bool = False,
    rsa_key: bool = False,
    dns: tuple[str, ...] = (),
    country: str | None = None,
) -> Party:
    key = (
        rsa.generate_private_key(65537, 2048)
        if rsa_key
        else ec.generate_private_key(ec.SECP256R1())
    )
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, name)]
    if country:
        attributes.insert(0, x509.NameAttribute(NameOID.COUNTRY_NAME, country))
    subject = x509.Name(attributes)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.certificate.subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - timedelta(days=400))
        .not_valid_after(NOW + timedelta(days=400))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if issuer is not None:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()),
            critical=False,
        )
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
    return Party(key, builder.sign(issuer.key if issuer else key, hashes.SHA256()))


def aki_of_a_leaf_under(authority: Party) -> str:
    """The ``aki`` value (OpenID4VP 1.0 §6.1.1.1) for ``authority``, as a wallet reads it: the
    authorityKeyIdentifier of a certificate ``authority`` issues, base64url without padding.
    Taken from a leaf the ``cryptography`` library issued, not from the service's own code."""
    leaf = make_party("A leaf", issuer=authority)
    named = leaf.certificate.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    return base64.urlsafe_b64encode(named.value.key_identifier).rstrip(b"=").decode()


@dataclass(frozen=True)
class Service:
    provider: str
    certificate: x509.Certificate
    status: str = GRANTED
    service_type: str = QC
    starting: datetime = NOW - timedelta(days=30)


@dataclass(frozen=True)
class Pointer:
    location: str
    territory: str
    signer: x509.Certificate
    mime_type: str = "application/vnd.etsi.tsl+xml"


def etsi_xml(
    signer: Party,
    services: list[Service] = (),  # type: ignore[assignment]
    *,
    territory: str = "DE",
    sequence: int = 123,
    issued: datetime = NOW - timedelta(days=1),
    next_update: datetime = NOW + timedelta(days=180),
    pointers: list[Pointer] = (),  # type: ignore[assignment]
) -> bytes:
    """A TS 119 612 list (a List of Trusted Lists when it has pointers), signed by xmlsec1."""
    tsl_type = "EUlistofthelists" if pointers else "EUgeneric"
    providers = "".join(
        f"""<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang="en">{escape(s.provider)}</Name></TSPName></TSPInformation>
<TSPServices><TSPService><ServiceInformation>
<ServiceTypeIdentifier>{s.service_type}</ServiceTypeIdentifier>
<ServiceName><Name xml:lang="en">{escape(s.provider)} CA</Name></ServiceName>
<ServiceDigitalIdentity><DigitalId><X509Certificate>{_b64(s.certificate)}</X509Certificate></DigitalId></ServiceDigitalIdentity>
<ServiceStatus>{s.status}</ServiceStatus><StatusStartingTime>{_when(s.starting)}</StatusStartingTime>
</ServiceInformation></TSPService></TSPServices></TrustServiceProvider>"""
        for s in services
    )
    pointer_xml = "".join(
        f"""<OtherTSLPointer><ServiceDigitalIdentities><ServiceDigitalIdentity><DigitalId><X509Certificate>{_b64(p.signer)}</X509Certificate></DigitalId></ServiceDigitalIdentity></ServiceDigitalIdentities>
<TSLLocation>{escape(p.location)}</TSLLocation>
<AdditionalInformation><OtherInformation><SchemeTerritory>{p.territory}</SchemeTerritory></OtherInformation>
<OtherInformation><tslx:MimeType xmlns:tslx="http://uri.etsi.org/02231/v2/additionaltypes#">{p.mime_type}</tslx:MimeType></OtherInformation></AdditionalInformation></OtherTSLPointer>"""
        for p in pointers
    )
    template = f"""<?xml version="1.0" encoding="UTF-8"?>
<TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#" Id="tsl" TSLTag="http://uri.etsi.org/19612/TSLTag">
<SchemeInformation>
<TSLVersionIdentifier>5</TSLVersionIdentifier><TSLSequenceNumber>{sequence}</TSLSequenceNumber>
<TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/{tsl_type}</TSLType>
<SchemeOperatorName><Name xml:lang="en">Test operator of {territory}</Name></SchemeOperatorName>
<SchemeTerritory>{territory}</SchemeTerritory>
{f"<PointersToOtherTSL>{pointer_xml}</PointersToOtherTSL>" if pointers else ""}
<ListIssueDateTime>{_when(issued)}</ListIssueDateTime>
<NextUpdate><dateTime>{_when(next_update)}</dateTime></NextUpdate>
</SchemeInformation>
{f"<TrustServiceProviderList>{providers}</TrustServiceProviderList>" if services else ""}
{xades_signature(signer.certificate, issued)}
</TrustServiceStatusList>
"""
    return _xmlsec1_sign(template, signer)


def _xmlsec1_sign(template: str, signer: Party) -> bytes:
    with tempfile.TemporaryDirectory() as directory:
        return xmlsec1_sign(template, signer, Path(directory))


def tampered(document: bytes) -> bytes:
    """The signed list with one character of its content changed after signing."""
    return document.replace(b"Test operator", b"Test 0perator", 1)


def vical(
    signer: Party,
    chain: list[x509.Certificate],
    iacas: list[tuple[x509.Certificate, list[str]]],
    *,
    issue_id: int = 5,
    next_update: datetime = NOW + timedelta(days=30),
) -> bytes:
    """An ISO/IEC 18013-5 VICAL: COSE_Sign1 (ES256, x5chain unprotected) over its CBOR map."""
    content = {
        "version": "1.0",
        "vicalProvider": "Test VICAL provider",
        "date": cbor2.CBORTag(0, _when(NOW - timedelta(days=1))),
        "vicalIssueID": issue_id,
        "nextUpdate": cbor2.CBORTag(0, _when(next_update)),
        "certificateInfos": [
            {
                "certificate": cert.public_bytes(serialization.Encoding.DER),
                "serialNumber": cert.serial_number,
                "ski": x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest,
                "docType": doctypes,
                "issuingCountry": "UT",
            }
            for cert, doctypes in iacas
        ],
    }
    return vical_sign1(content, signer, chain, tagged=True)


def x5c_presentation(request, issuer: Party, chain: list[Party], *, iss: str) -> str:
    """An SD-JWT VC (PyPI sd-jwt, ES256) whose header carries ``x5c`` (leaf first), presented
    with a key binding for ``request``."""
    from jwcrypto import jwk
    from sd_jwt.common import SDObj
    from sd_jwt.holder import SDJWTHolder
    from sd_jwt.issuer import SDJWTIssuer

    now = int(time.time())
    pem = issuer.key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    issuer_key = jwk.JWK.from_pem(pem)
    holder_key = jwk.JWK.generate(kty="EC", crv="P-256")
    payload = {
        "iss": iss,
        "vct": "urn:eudi:pid:1",
        "iat": now - 60,
        "exp": now + 3600,
        SDObj("given_name"): "Erika",
        SDObj("family_name"): "Mustermann",
        SDObj("birthdate"): "1984-01-26",
    }
    issued = SDJWTIssuer(
        payload,
        issuer_key,
        holder_key,
        sign_alg="ES256",
        extra_header_parameters={"typ": "dc+sd-jwt", "x5c": [p.b64 for p in chain]},
    )
    holder = SDJWTHolder(issued.sd_jwt_issuance)
    holder.create_presentation(
        {"given_name": True, "family_name": True},
        request.nonce,
        request.client_id,
        holder_key,
        "ES256",
    )
    return holder.sd_jwt_presentation


def dumps(value: object) -> str:
    return json.dumps(value)


PID_PROVIDERS_LIST = "http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList"


def lote_jws(
    signer: Party,
    entities: list[tuple[str, str, x509.Certificate]],
    *,
    sequence: int = 4,
    list_type: str = PID_PROVIDERS_LIST,
    statuses: dict[str, str] | None = None,
) -> bytes:
    """An ETSI TS 119 602 List of Trusted Entities (JSON binding) as a compact JWS signed by
    joserfc, the signing certificate in ``x5c``. ``entities``: (name, service type, CA);
    ``statuses``: a ServiceStatus (since a week ago) for the entities it names, the others
    carrying none (the EU profiles list no status: being listed is the grant)."""
    statuses = statuses or {}

    def status_of(name: str) -> dict[str, str]:
        if name not in statuses:
            return {}
        return {
            "ServiceStatus": statuses[name],
            "StatusStartingTime": _when(NOW - timedelta(days=7)),
        }

    from joserfc import jws
    from joserfc.jwk import ECKey

    content = {
        "LoTE": {
            "ListAndSchemeInformation": {
                "LoTEVersionIdentifier": 1,
                "LoTESequenceNumber": sequence,
                "LoTEType": list_type,
                "SchemeOperatorName": [{"lang": "en", "value": "Test PID list operator"}],
                "SchemeTerritory": "EU",
                "ListIssueDateTime": _when(NOW - timedelta(days=1)),
                "NextUpdate": _when(NOW + timedelta(days=30)),
            },
            "TrustedEntitiesList": [
                {
                    "TrustedEntityInformation": {"TEName": [{"lang": "en", "value": name}]},
                    "TrustedEntityServices": [
                        {
                            "ServiceInformation": {
                                "ServiceTypeIdentifier": service_type,
                                "ServiceName": [{"lang": "en", "value": f"{name} issuance"}],
                                "ServiceDigitalIdentity": {
                                    "X509Certificates": [{"val": _b64(cert)}]
                                },
                                **status_of(name),
                            }
                        }
                    ],
                }
                for name, service_type, cert in entities
            ],
        }
    }
    pem = signer.key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key = ECKey.import_key(pem)
    header = {"alg": "ES256", "typ": "JOSE", "x5c": [signer.b64]}
    return jws.serialize_compact(header, json.dumps(content), key).encode()
