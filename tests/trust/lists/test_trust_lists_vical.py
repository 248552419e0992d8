"""VICALs (ISO/IEC 18013-5 Annex C): AAMVA's and Austroads' real ones, and VICALs the tests
sign with cbor2 and cryptography for the paths the real ones do not show."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import cbor2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from lists_support import DATA, T0, make_signer, vical_sign1

from app.trust.lists import TrustListError, granted, read_vical

MDL = "org.iso.18013.5.1.mDL"
AAMVA_ISSUED = datetime(2025, 8, 5, 20, 47, 21, tzinfo=UTC)


def _aamva_root() -> x509.Certificate:
    """AAMVA DTS Root CA, the last certificate of the VICAL's own x5chain, read here with
    cbor2 alone and checked by its name."""
    structure = cbor2.loads((DATA / "aamva-vical.cbor").read_bytes())
    root = x509.load_der_x509_certificate(structure[1][33][-1])
    assert root.subject == root.issuer
    assert "CN=AAMVA DTS Root CA" in root.subject.rfc4514_string()
    return root


def test_the_aamva_vical_verifies_against_the_root_in_its_chain() -> None:
    vical = read_vical((DATA / "aamva-vical.cbor").read_bytes(), [_aamva_root()], AAMVA_ISSUED)
    assert vical.kind == "vical"
    assert vical.operator == "AAMVA"
    assert vical.sequence_number == 89782
    assert vical.issued_at == AAMVA_ISSUED
    assert vical.next_update == datetime(2025, 8, 6, 20, 47, 21, tzinfo=UTC)
    assert len(vical.services) == 13
    maryland = vical.services[0]
    assert maryland.entity_name.startswith("cn=Fast Enterprises Root,o=Maryland MVA")
    assert (maryland.territory, maryland.doctypes, maryland.service_type) == ("US", (MDL,), "iaca")
    assert len(granted(vical, {"iaca"}, AAMVA_ISSUED)) == 13


def test_the_austroads_vical_verifies_against_its_published_root() -> None:
    root = x509.load_pem_x509_certificate((DATA / "austroads-root.pem").read_bytes())
    vical = read_vical(
        (DATA / "austroads-vical.cbor").read_bytes(), [root], datetime(2025, 1, 1, tzinfo=UTC)
    )
    assert (vical.operator, vical.sequence_number, vical.next_update) == ("Austroads", 27, None)
    assert len(vical.services) == 40
    felica = vical.services[0]
    assert felica.territory == "JP"
    assert felica.doctypes == (MDL, "org.iso.23220.photoid.1", "org.micov.1", "org.iso.7367.1.mVRC")


def test_a_vical_is_refused_under_another_providers_anchor() -> None:
    austroads_root = x509.load_pem_x509_certificate((DATA / "austroads-root.pem").read_bytes())
    with pytest.raises(TrustListError, match="VICAL signer is not trusted"):
        read_vical((DATA / "aamva-vical.cbor").read_bytes(), [austroads_root], AAMVA_ISSUED)


def test_a_vical_whose_signer_has_expired_is_refused() -> None:
    # AAMVA's VICAL signer certificate ran until 2026-04-18.
    with pytest.raises(TrustListError, match="expired"):
        read_vical(
            (DATA / "aamva-vical.cbor").read_bytes(),
            [_aamva_root()],
            datetime(2026, 5, 1, tzinfo=UTC),
        )


def test_a_changed_byte_in_the_aamva_vical_is_refused() -> None:
    original = (DATA / "aamva-vical.cbor").read_bytes()
    tampered = original.replace(b"Maryland MVA", b"Maryland MVB", 1)
    assert tampered != original
    with pytest.raises(TrustListError, match="signature does not verify"):
        read_vical(tampered, [_aamva_root()], AAMVA_ISSUED)


@pytest.fixture(scope="module")
def provider():
    root = make_signer("Test VICAL root", ec_key=True, ca=True)
    signer = make_signer("Test VICAL signer", ec_key=True, issuer=root)
    iaca = make_signer("Test IACA", ec_key=True, ca=True)
    return root, signer, iaca


def _content(iaca, **extra) -> dict:
    return {
        "version": "1.0",
        "vicalProvider": "Test Provider",
        "date": T0,
        "vicalIssueID": 5,
        "certificateInfos": [
            {
                "certificate": iaca.certificate.public_bytes(serialization.Encoding.DER),
                "serialNumber": iaca.certificate.serial_number,
                "ski": b"\x01" * 20,
                "docType": [MDL, "eu.europa.ec.eudi.pid.1"],
                "issuingAuthority": "Test Motor Vehicles",
                "issuingCountry": "ZZ",
            },
            {"certificate": b"not a certificate", "docType": [MDL]},
        ],
        **extra,
    }


@pytest.mark.parametrize("tagged", [True, False])
def test_a_vical_signed_here_reads_back_tagged_or_not(provider, tagged: bool) -> None:
    root, signer, iaca = provider
    document = vical_sign1(
        _content(iaca, nextUpdate=T0 + timedelta(days=1)),
        signer,
        [signer.certificate],
        tagged=tagged,
    )
    vical = read_vical(document, [root.certificate], T0)
    (service,) = vical.services  # the unreadable certificate is left out
    assert service.certificate == iaca.certificate
    assert service.doctypes == (MDL, "eu.europa.ec.eudi.pid.1")
    assert (service.entity_name, service.territory) == ("Test Motor Vehicles", "ZZ")
    assert vical.next_update == T0 + timedelta(days=1)


def test_a_vical_past_its_next_update_is_read_and_says_so(provider) -> None:
    root, signer, iaca = provider
    document = vical_sign1(
        _content(iaca, nextUpdate=T0 - timedelta(days=1)), signer, [signer.certificate], tagged=True
    )
    assert read_vical(document, [root.certificate], T0).next_update < T0


def test_a_vical_signed_by_a_key_other_than_its_certificates_is_refused(provider) -> None:
    root, signer, iaca = provider
    impostor = make_signer("Impostor", ec_key=True)
    document = vical_sign1(_content(iaca), impostor, [signer.certificate], tagged=True)
    with pytest.raises(TrustListError, match="signature does not verify"):
        read_vical(document, [root.certificate], T0)


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (b"\xff\x00", "not valid CBOR"),
        (cbor2.dumps({"vicalProvider": "x"}), "not a COSE_Sign1"),
        (cbor2.dumps([cbor2.dumps({1: -7}), {}, b"", b"\x00" * 64]), "no signer certificate"),
    ],
)
def test_unreadable_vicals_are_refused_plainly(provider, document: bytes, reason: str) -> None:
    with pytest.raises(TrustListError, match=reason):
        read_vical(document, [provider[0].certificate], T0)
