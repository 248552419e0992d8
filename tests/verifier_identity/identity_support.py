"""Registrars for tests: a CA of its own (made with ``cryptography``) that signs the CSR an
organization downloads, the way a registrar or CA returns a chain; and a provider of
registration certificates (ETSI TS 119 475), JWTs it signs with joserfc."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import AuthorityInformationAccessOID, NameOID
from joserfc import jws
from joserfc.jwk import ECKey
from joserfc.registry import HeaderParameter


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def ca_certificate(subject, key, signer, issuer, now) -> x509.Certificate:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(signer, hashes.SHA256())
    )


@dataclass
class Registrar:
    """A root CA, an intermediate it issued, and access certificates the intermediate issues."""

    name: str = "Test Registrar"
    root_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    intermediate_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )

    def __post_init__(self) -> None:
        now = datetime.now(UTC)
        self.root = self._ca(
            _name(f"{self.name} Root"),
            self.root_key,
            self.root_key,
            _name(f"{self.name} Root"),
            now,
        )
        self.intermediate = self._ca(
            _name(f"{self.name} Access CA"),
            self.intermediate_key,
            self.root_key,
            self.root.subject,
            now,
        )

    def _ca(self, subject, key, signer, issuer, now) -> x509.Certificate:
        return ca_certificate(subject, key, signer, issuer, now)

    @property
    def anchor_pem(self) -> str:
        return self.root.public_bytes(serialization.Encoding.PEM).decode()

    def issue(
        self,
        csr_pem: str,
        *,
        not_before: datetime | None = None,
        not_after: datetime | None = None,
        signer: ec.EllipticCurvePrivateKey | None = None,
    ) -> x509.Certificate:
        """The access certificate for a CSR: its subject, key and subjectAltName kept."""
        csr = x509.load_pem_x509_csr(csr_pem.encode())
        assert csr.is_signature_valid
        now = datetime.now(UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(csr.subject)
            .issuer_name(self.intermediate.subject)
            .public_key(csr.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before or now - timedelta(hours=1))
            .not_valid_after(not_after or now + timedelta(days=90))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        try:
            san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName)
            builder = builder.add_extension(san.value, critical=False)
        except x509.ExtensionNotFound:
            pass
        return builder.sign(signer or self.intermediate_key, hashes.SHA256())

    def issue_eu(self, csr_pem: str) -> x509.Certificate:
        """An access certificate to the ETSI TS 119 411-8 profile (NCP-l-eudiwrp), as a
        provider of access certificates issues one: subject and contact from the CSR, a
        critical digitalSignature keyUsage, the policy and CPS, the issuer's key identifier,
        caIssuers and a CRL."""
        csr = x509.load_pem_x509_csr(csr_pem.encode())
        now = datetime.now(UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(csr.subject)
            .issuer_name(self.intermediate.subject)
            .public_key(csr.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(hours=1))
            .not_valid_after(now + timedelta(days=90))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                critical=True,
            )
            .add_extension(
                x509.CertificatePolicies(
                    [
                        x509.PolicyInformation(
                            x509.ObjectIdentifier("0.4.0.194118.1.2"),
                            ["https://registrar.test/cps"],
                        )
                    ]
                ),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(
                    self.intermediate_key.public_key()
                ),
                critical=False,
            )
            .add_extension(
                x509.AuthorityInformationAccess(
                    [
                        x509.AccessDescription(
                            AuthorityInformationAccessOID.CA_ISSUERS,
                            x509.UniformResourceIdentifier("https://registrar.test/ca.crt"),
                        )
                    ]
                ),
                critical=False,
            )
            .add_extension(
                x509.CRLDistributionPoints(
                    [
                        x509.DistributionPoint(
                            [x509.UniformResourceIdentifier("https://registrar.test/ca.crl")],
                            None,
                            None,
                            None,
                        )
                    ]
                ),
                critical=False,
            )
        )
        san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        builder = builder.add_extension(san.value, critical=False)
        return builder.sign(self.intermediate_key, hashes.SHA256())

    def chain_pem(self, leaf: x509.Certificate) -> str:
        return pem_of(leaf, self.intermediate, self.root)


PID = "urn:eudi:pid:1"
PERMITS_PID = [
    {
        "format": "dc+sd-jwt",
        "meta": {"vct_values": [PID]},
        "claims": [
            {"path": ["given_name"]},
            {"path": ["family_name"]},
            {"path": ["birthdate"]},
            {"path": ["address"]},
        ],
    }
]


class RegistrationRegistrar:
    """A registrar's root CA and the leaf it signs registration certificates with."""

    def __init__(self, name: str = "Test WRPRC Provider") -> None:
        now = datetime.now(UTC)
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.key = ec.generate_private_key(ec.SECP256R1())
        root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} Root")])
        self.root = (
            x509.CertificateBuilder()
            .subject_name(root_name)
            .issuer_name(root_name)
            .public_key(self.root_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.root_key, hashes.SHA256())
        )
        self.leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(root_name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=90))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(self.root_key, hashes.SHA256())
        )

    @property
    def anchor_pem(self) -> str:
        return pem_of(self.root)

    def sign(self, claims: dict, **header: object) -> str:
        x5c = [
            base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode()
            for c in (self.leaf, self.root)
        ]
        protected = {"alg": "ES256", "typ": "rc-wrp+jwt", "x5c": x5c, **header}
        key = ECKey.import_key(self.private_pem())
        # Header parameters a test marks critical are registered, so joserfc signs them.
        registry = jws.JWSRegistry(
            header_registry={
                name: HeaderParameter(name, _any_value) for name in header.get("crit", [])
            },
            strict_check_header=False,
        )
        return jws.serialize_compact(protected, json.dumps(claims).encode(), key, registry=registry)

    def private_pem(self) -> bytes:
        """The signing certificate's key, for joserfc."""
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def certificate(self, leaf: x509.Certificate, **claims: object) -> str:
        """A registration certificate for the relying party of the access certificate."""
        body = {
            "sub": leaf.subject.rfc4514_string(),
            "name": "Acme Bank",
            "intended_use_id": "age-check-1",
            "iat": int(time.time()) - 60,
            "exp": int(time.time()) + 86400,
            "purpose": [
                {"lang": "en", "value": "Checking that you are of age"},
                {"lang": "de", "value": "Prüfung Ihrer Volljährigkeit"},
            ],
            "credentials": PERMITS_PID,
            "entitlements": ["https://uri.etsi.org/19475/Entitlement/Service_Provider"],
        }
        body.update(claims)
        return self.sign(body)


def _any_value(value: object) -> None:
    """Critical header parameters of any JSON value, for the tests that need one."""


def pem_of(*certificates: x509.Certificate) -> str:
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certificates)


@dataclass
class GoogleRegistrarCA:
    """A verifier registrar's PKI as Google trusts one: a root (what the registrar sends
    Google) and the issuing CA under it whose key the deployment holds."""

    ca_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    root_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    ca_is_ca: bool = True

    def __post_init__(self) -> None:
        now = datetime.now(UTC)
        root_name = _name("Registrar Root for Google Wallet")
        self.root = ca_certificate(root_name, self.root_key, self.root_key, root_name, now)
        self.ca = (
            x509.CertificateBuilder()
            .subject_name(_name("Registrar Issuing CA"))
            .issuer_name(root_name)
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .add_extension(
                x509.BasicConstraints(ca=self.ca_is_ca, path_length=0 if self.ca_is_ca else None),
                critical=True,
            )
            .sign(self.root_key, hashes.SHA256())
        )

    def settings(self, directory, key_setting: str | None = None) -> dict[str, str]:
        """GOOGLE_REGISTRAR_* files in ``directory``: the CA's key, and its chain (CA, root)."""
        chain = directory / "registrar-chain.pem"
        chain.write_text(pem_of(self.ca, self.root))
        if key_setting is None:
            key = directory / "registrar-key.pem"
            key.write_bytes(
                self.ca_key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
            key_setting = str(key)
        return {"GOOGLE_REGISTRAR_KEY_FILE": key_setting, "GOOGLE_REGISTRAR_CHAIN_FILE": str(chain)}
