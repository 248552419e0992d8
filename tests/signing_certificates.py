"""Certificates for signed requests: a test CA and a leaf it issued, as deployments configure
them (``REQUEST_SIGNING_CERT_FILE`` and ``REQUEST_SIGNING_KEY_FILE``), made with
``cryptography`` and shaped like a real web PKI chain so that path validation runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The test deployment's host (PUBLIC_URL https://verity.test).
HOST = "verity.test"


@dataclass
class Pki:
    ca: x509.Certificate
    ca_key: ec.EllipticCurvePrivateKey
    leaf: x509.Certificate
    leaf_key: ec.EllipticCurvePrivateKey


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_pki(
    dns_names: tuple[str, ...] = (HOST,),
    curve: ec.EllipticCurve | None = None,
    leaf_key: ec.EllipticCurvePrivateKey | None = None,
) -> Pki:
    """A CA and a leaf it issued, shaped like a real web PKI chain (so path validation runs);
    ``leaf_key`` certifies a key made elsewhere (one kept in a PKCS#11 token)."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("Verity Test CA"))
        .issuer_name(_name("Verity Test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = leaf_key or ec.generate_private_key(curve or ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(dns_names[0] if dns_names else "no-dns"))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(name) for name in dns_names]
                or [x509.UniformResourceIdentifier("https://no-dns.example")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return Pki(ca, ca_key, leaf, leaf_key)


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def write_files(
    tmp_path: Path, pki: Pki, chain: list[x509.Certificate] | None = None, key=None
) -> dict[str, str]:
    """The two settings a deployment gives, pointing at files (read once, at start-up)."""
    cert_file, key_file = tmp_path / "chain.pem", tmp_path / "key.pem"
    cert_file.write_bytes(b"".join(pem(cert) for cert in chain or [pki.leaf, pki.ca]))
    key_file.write_bytes(
        (key or pki.leaf_key).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return {"REQUEST_SIGNING_CERT_FILE": str(cert_file), "REQUEST_SIGNING_KEY_FILE": str(key_file)}
