"""Lists the tests make and sign themselves, with signers independent of the readers: ETSI
lists signed by Debian's ``xmlsec1`` (libxmlsec1, not signxml), Lists of Trusted Entities by
``joserfc``, VICALs by ``cbor2`` and ``cryptography`` written out here."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

DATA = Path(__file__).parent / "data"
QC = "http://uri.etsi.org/TrstSvc/Svctype/CA/QC"
GRANTED = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted"
WITHDRAWN = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Signer:
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    certificate: x509.Certificate


def make_signer(
    name: str,
    *,
    ec_key: bool = False,
    issuer: Signer | None = None,
    ca: bool = False,
    not_before: datetime = T0 - timedelta(days=365),
    days: int = 3650,
) -> Signer:
    key = (
        ec.generate_private_key(ec.SECP256R1()) if ec_key else rsa.generate_private_key(65537, 2048)
    )
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.certificate.subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_before + timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    cert = builder.sign(issuer.key if issuer else key, hashes.SHA256())
    return Signer(key, cert)


@dataclass(frozen=True)
class Service:
    provider: str
    name: str
    certificate: x509.Certificate
    status: str = GRANTED
    service_type: str = QC
    starting: datetime = T0 - timedelta(days=30)


def _b64(cert: x509.Certificate) -> str:
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def etsi_list_xml(
    services: list[Service],
    *,
    sequence: int = 7,
    issued: datetime = T0,
    next_update: datetime = T0 + timedelta(days=180),
    signing_cert: x509.Certificate,
) -> str:
    """A TS 119 612 list with a XAdES signature template for xmlsec1 to fill."""
    providers = "".join(
        f"""<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang="en">{escape(s.provider)}</Name></TSPName></TSPInformation>
<TSPServices><TSPService><ServiceInformation>
<ServiceTypeIdentifier>{s.service_type}</ServiceTypeIdentifier>
<ServiceName><Name xml:lang="en">{escape(s.name)}</Name></ServiceName>
<ServiceDigitalIdentity><DigitalId><X509Certificate>{_b64(s.certificate)}</X509Certificate></DigitalId></ServiceDigitalIdentity>
<ServiceStatus>{s.status}</ServiceStatus><StatusStartingTime>{_when(s.starting)}</StatusStartingTime>
</ServiceInformation></TSPService></TSPServices></TrustServiceProvider>"""
        for s in services
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#" Id="tsl" TSLTag="http://uri.etsi.org/19612/TSLTag">
<SchemeInformation>
<TSLVersionIdentifier>5</TSLVersionIdentifier><TSLSequenceNumber>{sequence}</TSLSequenceNumber>
<TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric</TSLType>
<SchemeOperatorName><Name xml:lang="fr">Opérateur d'essai</Name><Name xml:lang="en">Test Scheme Operator</Name></SchemeOperatorName>
<SchemeTerritory>ZZ</SchemeTerritory>
<ListIssueDateTime>{_when(issued)}</ListIssueDateTime>
<NextUpdate><dateTime>{_when(next_update)}</dateTime></NextUpdate>
</SchemeInformation>
<TrustServiceProviderList>{providers}</TrustServiceProviderList>
{xades_signature(signing_cert, issued)}
</TrustServiceStatusList>
"""


def xades_signature(signing_cert: x509.Certificate, issued: datetime) -> str:
    """The enveloped XAdES signature template of an ETSI list, naming its signing certificate
    by digest, for xmlsec1 to fill (``xmlsec1_sign``)."""
    digest = base64.b64encode(
        hashlib.sha256(signing_cert.public_bytes(serialization.Encoding.DER)).digest()
    ).decode()
    return f"""<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="sig">
<ds:SignedInfo>
<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>
<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>
<ds:Reference URI=""><ds:Transforms>
<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>
<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms>
<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference>
<ds:Reference URI="#sp" Type="http://uri.etsi.org/01903#SignedProperties"><ds:Transforms>
<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms>
<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference>
</ds:SignedInfo>
<ds:SignatureValue/>
<ds:KeyInfo><ds:X509Data/></ds:KeyInfo>
<ds:Object><xades:QualifyingProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" Target="#sig">
<xades:SignedProperties Id="sp"><xades:SignedSignatureProperties>
<xades:SigningTime>{_when(issued)}</xades:SigningTime>
<xades:SigningCertificateV2><xades:Cert><xades:CertDigest>
<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>{digest}</ds:DigestValue>
</xades:CertDigest></xades:Cert></xades:SigningCertificateV2>
</xades:SignedSignatureProperties></xades:SignedProperties>
</xades:QualifyingProperties></ds:Object>
</ds:Signature>"""


def xmlsec1_sign(template: str, signer: Signer, workdir: Path) -> bytes:
    """Fill the template's signature with libxmlsec1's command line signer (``signer``: any
    object with the ``key`` and ``certificate`` that sign)."""
    binary = shutil.which("xmlsec1")
    if binary is None:  # `make test` installs it (Makefile target xmlsec1)
        raise RuntimeError("xmlsec1 is not installed: run `make xmlsec1`")
    key, cert, source, out = (workdir / n for n in ("key.pem", "cert.pem", "in.xml", "out.xml"))
    key.write_bytes(
        signer.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    cert.write_bytes(signer.certificate.public_bytes(serialization.Encoding.PEM))
    source.write_text(template, encoding="utf-8")
    subprocess.run(
        [
            binary,
            "--sign",
            "--privkey-pem",
            f"{key},{cert}",
            "--id-attr:Id",
            "http://uri.etsi.org/01903/v1.3.2#:SignedProperties",
            "--output",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return out.read_bytes()


# -- VICAL -----------------------------------------------------------------------------------


def vical_sign1(
    content: dict, signer: Signer, chain: list[x509.Certificate], *, tagged: bool
) -> bytes:
    """A COSE_Sign1 (RFC 9052 §4.2) over ``content``, ES256, x5chain in the unprotected header,
    built from cbor2 and cryptography directly."""
    protected = cbor2.dumps({1: -7})
    payload = cbor2.dumps(content)
    to_sign = cbor2.dumps(["Signature1", protected, b"", payload])
    r, s = decode_dss_signature(signer.key.sign(to_sign, ec.ECDSA(hashes.SHA256())))
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    x5chain = [c.public_bytes(serialization.Encoding.DER) for c in chain]
    structure = [protected, {33: x5chain}, payload, signature]
    return cbor2.dumps(cbor2.CBORTag(18, structure) if tagged else structure)
