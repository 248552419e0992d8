"""Real EU trusted lists, signed by their scheme operators (copied from the DSS project's
test resources, see data/README.md): the List of Trusted Lists of 2019-09-04 (sequence 248),
the Danish and Irish lists it pointed to then, and DSS's broken copies."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from lists_support import DATA, QC
from lxml import etree

from app.trust.lists import TrustListError, granted, read_etsi_tsl

# The LoTL's signer (Patrick Kremer, European Commission), taken from the list's own
# KeyInfo and pinned here by fingerprint, as the Official Journal publishes it.
LOTL_SIGNER_SHA256 = "d2064fdd70f6982dcc516b86d9d5c56aea939417c624b2e478c0b29de54f8474"
WHEN_CURRENT = datetime(2019, 9, 10, tzinfo=UTC)


def _bytes(name: str) -> bytes:
    return (DATA / name).read_bytes()


def _keyinfo_certificate(name: str) -> x509.Certificate:
    root = etree.fromstring(_bytes(name))
    text = root.find("{*}Signature/{*}KeyInfo/{*}X509Data/{*}X509Certificate").text
    return x509.load_der_x509_certificate(base64.b64decode("".join(text.split())))


@pytest.fixture(scope="module")
def lotl_signer() -> x509.Certificate:
    cert = _keyinfo_certificate("eu-lotl-248.xml")
    assert cert.fingerprint(hashes.SHA256()).hex() == LOTL_SIGNER_SHA256
    return cert


@pytest.fixture(scope="module")
def lotl(lotl_signer: x509.Certificate):
    return read_etsi_tsl(_bytes("eu-lotl-248.xml"), [lotl_signer])


def _xml_pointer(lotl, territory: str):
    (pointer,) = [
        p
        for p in lotl.pointers
        if p.territory == territory and p.mime_type == "application/vnd.etsi.tsl+xml"
    ]
    return pointer


def test_the_eu_list_of_trusted_lists_verifies_against_its_pinned_signer(lotl) -> None:
    assert lotl.kind == "eu_lotl"
    assert lotl.territory == "EU"
    assert lotl.operator == "European Commission"
    assert lotl.sequence_number == 248
    assert lotl.issued_at == datetime(2019, 9, 4, 8, tzinfo=UTC)
    assert lotl.next_update == datetime(2020, 3, 4, tzinfo=UTC)
    assert lotl.services == ()


def test_the_lotl_points_to_every_member_state_list_with_its_signers(lotl, lotl_signer) -> None:
    assert len(lotl.pointers) == 44
    assert len({p.territory for p in lotl.pointers}) == 32  # EU, EEA and UK, some twice (PDF)
    dk = _xml_pointer(lotl, "DK")
    assert dk.location == "https://www.digst.dk/TSLDKxml"
    assert len(dk.signer_certificates) == 2
    # The LoTL announces its own signers too: the pinned one is among them.
    assert lotl_signer in _xml_pointer(lotl, "EU").signer_certificates


def test_a_member_state_list_verifies_against_the_signers_the_lotl_names(lotl) -> None:
    ireland = read_etsi_tsl(_bytes("ie-tl-17.xml"), _xml_pointer(lotl, "IE").signer_certificates)
    assert ireland.kind == "etsi_tsl"
    assert (ireland.territory, ireland.sequence_number) == ("IE", 17)
    assert ireland.operator == "Department of Communications Climate Action & Environment"
    assert ireland.next_update == datetime(2020, 1, 29, tzinfo=UTC)
    providers = [s.entity_name for s in ireland.services]
    assert providers == [
        "Post.Trust Ltd",
        "Adobe Systems Software Ireland Ltd.",
        "TrustPro QTSP Ltd",
        "TrustPro QTSP Ltd",
    ]
    assert ireland.services[0].certificate.subject.rfc4514_string() == (
        "CN=Post.Trust Root CA,OU=Post.Trust Ltd.,O=An Post,C=IE"
    )


def test_granted_keeps_current_ca_qc_services_and_drops_the_withdrawn_one(lotl) -> None:
    ireland = read_etsi_tsl(_bytes("ie-tl-17.xml"), _xml_pointer(lotl, "IE").signer_certificates)
    assert ireland.services[0].status.endswith("/withdrawn")
    qualified = granted(ireland, {QC}, WHEN_CURRENT)
    assert [s.entity_name for s in qualified] == ["TrustPro QTSP Ltd", "TrustPro QTSP Ltd"]
    assert len(granted(ireland, None, WHEN_CURRENT)) == 3  # the timestamping service too


def test_the_danish_list_reads_its_one_nationally_recognised_ca(lotl) -> None:
    denmark = read_etsi_tsl(_bytes("dk-tl-22.xml"), _xml_pointer(lotl, "DK").signer_certificates)
    assert (denmark.territory, denmark.sequence_number) == ("DK", 22)
    (service,) = denmark.services
    assert service.entity_name == "Nets DanID A/S"
    assert service.service_type == "http://uri.etsi.org/TrstSvc/Svctype/CA/PKC"
    assert service.status.endswith("/recognisedatnationallevel")
    assert granted(denmark, None, WHEN_CURRENT) == []


def test_a_list_signed_by_someone_else_is_refused(lotl) -> None:
    with pytest.raises(TrustListError, match="not signed by any of the given signer"):
        read_etsi_tsl(_bytes("dk-tl-22.xml"), _xml_pointer(lotl, "IE").signer_certificates)


def test_a_list_with_one_byte_changed_in_a_provider_name_is_refused(lotl) -> None:
    original = _bytes("ie-tl-17.xml")
    tampered = original.replace(b"TrustPro QTSP Ltd", b"TrustPro QTSP Ltc", 1)
    assert len(tampered) == len(original) and tampered != original
    with pytest.raises(TrustListError, match="does not match its signature"):
        read_etsi_tsl(tampered, _xml_pointer(lotl, "IE").signer_certificates)


def test_the_lotl_with_a_broken_signature_is_refused(lotl_signer) -> None:
    with pytest.raises(TrustListError, match="does not match its signature"):
        read_etsi_tsl(_bytes("eu-lotl-248-broken-sig.xml"), [lotl_signer])


def test_an_unparsable_lotl_is_refused(lotl_signer) -> None:
    with pytest.raises(TrustListError, match="not well-formed XML"):
        read_etsi_tsl(_bytes("eu-lotl-248-not-parseable.xml"), [lotl_signer])


@pytest.mark.parametrize(
    ("name", "territory", "sequence"),
    [
        # ECDSA over brainpoolP256r1 (gematik's TSL, a TS 119 612 list outside the EU scheme)
        ("gematik-tsl-ecdsa-brainpool.xml", None, 10180),
        # RSA with SHA-512, TS 119 612 v2.3 (version 6) list from DSS's test PKI
        ("fi-tl-v6-sha512.xml", "FI", 49),
    ],
)
def test_ecdsa_and_sha512_signed_lists_verify(name: str, territory, sequence: int) -> None:
    signed = read_etsi_tsl(_bytes(name), [_keyinfo_certificate(name)])
    assert (signed.territory, signed.sequence_number) == (territory, sequence)
    assert signed.services
