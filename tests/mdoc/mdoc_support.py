"""mdocs made by an independent implementation: the OpenWallet Foundation's ``@owf/mdoc``
(``owf_mdoc.mjs``, pinned by this folder's package-lock.json) issues with a document signer
certificate made here and answers as the wallet, over a session transcript it builds itself.

Negative cases that no honest library produces are made by editing its CBOR afterwards.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from support.npm import ensure_node_modules

HERE = Path(__file__).resolve().parent
MDL = "org.iso.18013.5.1.mDL"
MDL_NS = "org.iso.18013.5.1"
MDOC_DS_EKU = x509.ObjectIdentifier("1.0.18013.5.1.2")
CLIENT_ID = "x509_san_dns:verity.test"
RESPONSE_URI = "https://verity.test/wallet/response/abc"
NONCE = "n-0S6_WzA2Mj"
ORIGIN = "https://verity.test"
NOW = datetime.now(UTC).replace(microsecond=0)


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "UT"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def key_usage(*, sign: bool, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


@dataclass
class Iaca:
    """An issuing authority root (IACA) and a document signer it certified (ISO 18013-5 B.1)."""

    root: x509.Certificate
    root_key: ec.EllipticCurvePrivateKey
    signer: x509.Certificate
    signer_key: ec.EllipticCurvePrivateKey


def make_iaca(
    *,
    signer_from: datetime | None = None,
    signer_until: datetime | None = None,
    signer_usage: x509.KeyUsage | None = None,
    signer_eku: x509.ObjectIdentifier | None = MDOC_DS_EKU,
    signer_curve: ec.EllipticCurve | None = None,
) -> Iaca:
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = (
        x509.CertificateBuilder()
        .subject_name(_name("Utopia Test IACA"))
        .issuer_name(_name("Utopia Test IACA"))
        .public_key(root_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - timedelta(days=365))
        .not_valid_after(NOW + timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(key_usage(sign=False, ca=True), critical=True)
        .sign(root_key, hashes.SHA256())
    )
    signer_key = ec.generate_private_key(signer_curve or ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name("Utopia Test Document Signer"))
        .issuer_name(root.subject)
        .public_key(signer_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(signer_from or NOW - timedelta(days=30))
        .not_valid_after(signer_until or NOW + timedelta(days=365))
        .add_extension(signer_usage or key_usage(sign=True, ca=False), critical=True)
    )
    if signer_eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([signer_eku]), critical=True)
    signer = builder.sign(root_key, hashes.SHA256())
    return Iaca(root, root_key, signer, signer_key)


def pem_key(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def pem_cert(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


MDL_ELEMENTS: dict[str, Any] = {
    "family_name": "Mustermann",
    "given_name": "Erika",
    "birth_date": {"$date": "1990-04-12"},
    "age_over_18": True,
    "issuing_country": "UT",
    "document_number": "UT-12345",
    "issue_date": {"$date": "2024-01-02"},
}


@dataclass
class MdocJob:
    """One mdoc to issue and present; the defaults make a valid mDL for the OpenID4VP flow."""

    iaca: Iaca
    device_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    doctype: str = MDL
    namespaces: dict[str, dict[str, Any]] = field(default_factory=lambda: {MDL_NS: MDL_ELEMENTS})
    disclose: dict[str, list[str]] | None = None
    valid_from: datetime = NOW - timedelta(days=1)
    valid_until: datetime = NOW + timedelta(days=30)
    # The handover the wallet signs over (OpenID4VP 1.0 B.2.6.1), or origin for the DC API.
    client_id: str = CLIENT_ID
    nonce: str = NONCE
    response_uri: str = RESPONSE_URI
    origin: str | None = None
    jwk_thumbprint: bytes | None = None
    alg: str = "ES256"  # the issuer's, matching its document signer's curve
    # A key other than the certified device key to sign the device response with.
    wallet_key: ec.EllipticCurvePrivateKey | None = None
    digest_algorithm: str = "SHA-256"

    def as_json(self) -> dict[str, Any]:
        job: dict[str, Any] = {
            "doctype": self.doctype,
            "namespaces": self.namespaces,
            "issuer_key_pem": pem_key(self.iaca.signer_key),
            "issuer_chain_pems": [pem_cert(self.iaca.signer)],
            "device_key_pem": pem_key(self.device_key),
            "alg": self.alg,
            "digest_algorithm": self.digest_algorithm,
            "signed": _iso(self.valid_from),
            "valid_from": _iso(self.valid_from),
            "valid_until": _iso(self.valid_until),
            "client_id": self.client_id,
            "nonce": self.nonce,
            "response_uri": self.response_uri,
        }
        if self.disclose is not None:
            job["disclose"] = self.disclose
        if self.wallet_key is not None:
            job["wallet_key_pem"] = pem_key(self.wallet_key)
        if self.origin is not None:
            job["origin"] = self.origin
        if self.jwk_thumbprint is not None:
            job["jwk_thumbprint_hex"] = self.jwk_thumbprint.hex()
        return job


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def present(job: MdocJob) -> str:
    """The vp_token entry @owf/mdoc's wallet answers with: a base64url DeviceResponse."""
    return _run(job.as_json())["vp_token"]


def library_transcript(job: MdocJob) -> bytes:
    """The SessionTranscript @owf/mdoc builds for the job's handover, as CBOR."""
    return bytes.fromhex(_run(job.as_json() | {"transcript_only": True})["transcript_hex"])


def _run(job: dict[str, Any]) -> dict[str, Any]:
    ensure_node_modules(HERE, "@owf/mdoc")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run @owf/mdoc")
    done = subprocess.run(
        [node, str(HERE / "owf_mdoc.mjs")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"owf_mdoc.mjs failed: {done.stderr}")
    return json.loads(done.stdout)


# --------------------------------------------------------------------------- CBOR editing


def decode(entry: str) -> dict[str, Any]:
    return cbor2.loads(base64.urlsafe_b64decode(entry + "=" * (-len(entry) % 4)))


def encode(response: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(cbor2.dumps(response)).rstrip(b"=").decode()


def data_item(value: Any) -> cbor2.CBORTag:
    return cbor2.CBORTag(24, cbor2.dumps(value))


def document(response: dict[str, Any]) -> dict[str, Any]:
    return response["documents"][0]


def items(response: dict[str, Any], namespace: str = MDL_NS) -> list[cbor2.CBORTag]:
    return document(response)["issuerSigned"]["nameSpaces"][namespace]


def resign_mso(
    entry: str,
    iaca: Iaca,
    edit: Any = None,
    *,
    x5chain_protected: bool = False,
    alg: int | None = None,
) -> str:
    """The issuer's MSO changed by ``edit`` and signed again with the document signer's key,
    for the cases only a (misbehaving or unusual) issuer can make: the signature stays valid.
    ``x5chain_protected`` moves the certificate chain into the protected header; ``alg``
    names another COSE algorithm for the same P-256 signature (ESP256, -9)."""
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    response = decode(entry)
    auth = document(response)["issuerSigned"]["issuerAuth"]
    mso = cbor2.loads(cbor2.loads(auth[2]).value)
    if edit is not None:
        edit(mso)
    auth[2] = cbor2.dumps(data_item(mso))
    if x5chain_protected:
        protected = cbor2.loads(auth[0])
        protected[33] = auth[1].pop(33)
        auth[0] = cbor2.dumps(protected)
    if alg is not None:
        auth[0] = cbor2.dumps({**cbor2.loads(auth[0]), 1: alg})
    to_be_signed = cbor2.dumps(["Signature1", auth[0], b"", auth[2]])
    r, s = decode_dss_signature(iaca.signer_key.sign(to_be_signed, ec.ECDSA(hashes.SHA256())))
    auth[3] = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return encode(response)
