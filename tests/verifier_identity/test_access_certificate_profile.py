"""EU access certificates (ETSI TS 119 411-8): the CSR carries what the profile asks of the
subject, and the chain uploaded for it is refused with every unmet requirement named.

Certificates are made with ``cryptography`` by a test registrar (``identity_support``), as a
provider of access certificates would issue them, with or without the profile's extensions.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from factories import Staff, make_staff
from identity_support import Registrar

from app.oid4vp import wrpac

EU = {
    "organization_identifier": "VATDE-123456789",
    "contact_uri": "https://acme.test/support",
    "contact_email": "wallets@acme.test",
}


@pytest.fixture
def registrar() -> Registrar:
    return Registrar()


@pytest.fixture
def acme(app) -> Staff:
    return make_staff(app, "alice@acme.test", org_name="Acme Bank")


def eu_request(client, staff: Staff, **eu) -> dict:
    response = client.post(
        "/verifier-identity/signing-request",
        json={"country": "DE", "eu_access_certificate": {**EU, **eu}},
        headers=staff.headers(),
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def upload(client, staff: Staff, chain_pem: str):
    return client.put(
        "/verifier-identity/certificate", json={"chain_pem": chain_pem}, headers=staff.headers()
    )


def test_an_eu_request_carries_the_organization_identifier_and_the_contacts(client, acme):
    made = eu_request(client, acme)
    assert made["profile"] == "ts-119-411-8"
    csr = x509.load_pem_x509_csr(made["csr_pem"].encode())
    assert csr.is_signature_valid
    (identifier,) = csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_IDENTIFIER)
    assert identifier.value == "VATDE-123456789"
    san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.UniformResourceIdentifier) == [EU["contact_uri"]]
    assert san.get_values_for_type(x509.RFC822Name) == [EU["contact_email"]]


@pytest.mark.parametrize(
    ("eu", "words"),
    [
        ({"organization_identifier": "DE123456789"}, "EN 319 412-1"),
        ({"organization_identifier": "LEIDE-5493001KJTIIGC8Y1R12"}, "XG"),
        ({"organization_identifier": "VATGR-123456789"}, "EL"),
        ({"contact_uri": None, "contact_email": None}, "GEN-6.6.1-07"),
    ],
)
def test_an_eu_request_without_what_the_profile_asks_is_refused(client, acme, eu, words):
    response = client.post(
        "/verifier-identity/signing-request",
        json={"country": "DE", "eu_access_certificate": {**EU, **eu}},
        headers=acme.headers(),
    )
    assert (response.status_code, response.get_json()["code"]) == (400, "INVALID_CSR_REQUEST")
    assert words in response.get_json()["error"]


def test_a_chain_missing_the_profile_is_refused_with_each_requirement_by_name(
    client, acme, registrar
):
    leaf = registrar.issue(eu_request(client, acme)["csr_pem"])  # no EU extensions
    refused = upload(client, acme, registrar.chain_pem(leaf))
    body = refused.get_json()
    assert (refused.status_code, body["code"]) == (400, "ACCESS_CERTIFICATE_PROFILE")
    assert [item["requirement"] for item in body["unmet"]] == [
        "EN 319 412-2 §4.3.2 keyUsage",
        "TS 119 411-8 GEN-6.6.1-03 certificatePolicies",
        "TS 119 411-8 GEN-6.6.1-06 cpsURI",
        "EN 319 412-2 §4.3.1 authorityKeyIdentifier",
        "EN 319 412-2 §4.4.1 authorityInfoAccess caIssuers",
        "EN 319 412-2 §4.3.11 cRLDistributionPoints",
    ]
    assert all(item["problem"] for item in body["unmet"])
    assert "GEN-6.6.1-03" in body["error"]
    shown = client.get("/verifier-identity", headers=acme.headers()).get_json()
    assert shown["uses"] == "deployment"  # nothing was taken
    assert shown["pending_request"]["profile"] == "ts-119-411-8"


def test_a_chain_to_the_profile_is_taken_and_shown_as_meeting_it(client, acme, registrar):
    leaf = registrar.issue_eu(eu_request(client, acme)["csr_pem"])
    taken = upload(client, acme, registrar.chain_pem(leaf))
    assert taken.status_code == 200, taken.get_json()
    certificate = taken.get_json()["certificate"]
    assert certificate["ts_119_411_8_unmet"] == []
    assert wrpac.etsi_policy(leaf) == wrpac.NCP_LEGAL


def test_outside_the_eu_profile_the_chain_is_taken_and_what_it_misses_is_shown(
    client, acme, registrar
):
    csr = client.post(
        "/verifier-identity/signing-request", json={"country": "DE"}, headers=acme.headers()
    ).get_json()["csr_pem"]
    taken = upload(client, acme, registrar.chain_pem(registrar.issue(csr)))
    assert taken.status_code == 200, taken.get_json()
    unmet = {item["requirement"] for item in taken.get_json()["certificate"]["ts_119_411_8_unmet"]}
    assert "TS 119 411-8 GEN-6.6.1-05 organizationIdentifier" in unmet
    assert "TS 119 411-8 GEN-6.6.1-07 subjectAltName contact" in unmet


def _leaf(subject: list[x509.NameAttribute], *, ca: bool = False, critical: bool = True):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name(subject))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "CA")]))
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, True, False, False, False, False, False, False, False),
            critical=critical,
        )
        .sign(key, hashes.SHA256())
    )


NAMES = [
    x509.NameAttribute(NameOID.COUNTRY_NAME, "FR"),
    x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme SA"),
    x509.NameAttribute(NameOID.COMMON_NAME, "Acme"),
]


@pytest.mark.parametrize(
    ("leaf", "requirement", "words"),
    [
        (_leaf(NAMES[1:]), "EN 319 412-3 §4.2.1 subject countryName", "countryName"),
        (
            _leaf(NAMES),
            "TS 119 411-8 GEN-6.6.1-05 organizationIdentifier",
            "no organizationIdentifier",
        ),
        (
            _leaf([*NAMES, x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, "NTRFR-552")]),
            "EN 319 412-2 §4.3.2 keyUsage",
            "digitalSignature",
        ),
        (_leaf(NAMES, critical=False), "EN 319 412-2 §4.3.2 keyUsage", "critical"),
        (_leaf(NAMES, ca=True), "TS 119 411-8 §1 end-entity certificate", "CA certificate"),
    ],
)
def test_each_requirement_is_reported_by_the_clause_that_asks_for_it(leaf, requirement, words):
    problems = [
        item.problem for item in wrpac.unmet_requirements(leaf) if item.requirement == requirement
    ]
    assert problems and any(words in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("VATDE-123456789", True),
        ("NTRFR-552100554", True),
        ("LEIXG-5493001KJTIIGC8Y1R12", True),
        ("PSDBE-NBB-0203.201.340", True),
        ("NL:NL-12345678", True),
        ("VATEL-094014201", True),
        ("VAT-DE123", False),
        ("XYZDE-1", False),
        ("VATDE-", False),
    ],
)
def test_organization_identifiers_follow_en_319_412_1(value, ok):
    assert (wrpac.organization_identifier_problem(value) is None) is ok
