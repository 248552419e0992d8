"""Trusted lists the tests write and sign with xmlsec1 (libxmlsec1), read back by the reader
(signxml): the paths real lists do not show, such as an expired list, a signer re-certified
under the same key, a signer expired when the list was issued, and hostile XML."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from lists_support import (
    GRANTED,
    QC,
    T0,
    WITHDRAWN,
    Service,
    etsi_list_xml,
    make_signer,
    xmlsec1_sign,
)

from app.trust.lists import TrustListError, granted, read_etsi_tsl


@pytest.fixture(scope="module")
def signer():
    return make_signer("Test TL signer")


@pytest.fixture(scope="module")
def cas():
    return [make_signer(f"QC CA {n}", ca=True).certificate for n in range(3)]


def _signed(tmp_path: Path, signer, services, **kwargs) -> bytes:
    return xmlsec1_sign(
        etsi_list_xml(services, signing_cert=signer.certificate, **kwargs), signer, tmp_path
    )


def test_a_list_signed_by_xmlsec1_reads_back_with_its_services(tmp_path, signer, cas) -> None:
    services = [
        Service("Alpha Trust", "Alpha QC", cas[0]),
        Service("Beta Trust", "Beta QC", cas[1], status=WITHDRAWN),
        Service(
            "Gamma Trust",
            "Gamma TSA",
            cas[2],
            service_type="http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST",
        ),
    ]
    trust_list = read_etsi_tsl(_signed(tmp_path, signer, services), [signer.certificate])
    assert trust_list.kind == "etsi_tsl"
    assert (trust_list.territory, trust_list.sequence_number) == ("ZZ", 7)
    assert trust_list.operator == "Test Scheme Operator"  # English preferred over French
    assert trust_list.issued_at == T0
    assert [(s.entity_name, s.certificate) for s in trust_list.services] == [
        ("Alpha Trust", cas[0]),
        ("Beta Trust", cas[1]),
        ("Gamma Trust", cas[2]),
    ]
    assert trust_list.services[1].status == WITHDRAWN


def test_granted_excludes_withdrawn_services_and_other_types(tmp_path, signer, cas) -> None:
    services = [
        Service("Alpha Trust", "Alpha QC", cas[0]),
        Service("Beta Trust", "Beta QC", cas[1], status=WITHDRAWN),
        Service(
            "Gamma Trust",
            "Gamma TSA",
            cas[2],
            service_type="http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST",
        ),
    ]
    trust_list = read_etsi_tsl(_signed(tmp_path, signer, services), [signer.certificate])
    assert [s.certificate for s in granted(trust_list, {QC}, T0)] == [cas[0]]
    assert [s.certificate for s in granted(trust_list, None, T0)] == [cas[0], cas[2]]


def test_a_status_that_starts_later_is_not_granted_yet(tmp_path, signer, cas) -> None:
    later = T0 + timedelta(days=10)
    services = [Service("Alpha Trust", "Alpha QC", cas[0], status=GRANTED, starting=later)]
    trust_list = read_etsi_tsl(_signed(tmp_path, signer, services), [signer.certificate])
    assert granted(trust_list, {QC}, T0) == []
    assert len(granted(trust_list, {QC}, later)) == 1


def test_a_list_past_its_next_update_is_read_and_says_so(tmp_path, signer, cas) -> None:
    # The reader reports next_update; whether a stale list is still used is the caller's call.
    stale = _signed(
        tmp_path,
        signer,
        [Service("Alpha Trust", "Alpha QC", cas[0])],
        issued=T0 - timedelta(days=300),
        next_update=T0 - timedelta(days=120),
    )
    trust_list = read_etsi_tsl(stale, [signer.certificate])
    assert trust_list.next_update == T0 - timedelta(days=120)
    assert trust_list.next_update < T0
    assert len(trust_list.services) == 1


def test_a_signer_recertified_under_the_same_key_is_accepted(tmp_path, signer, cas) -> None:
    document = _signed(tmp_path, signer, [Service("Alpha Trust", "Alpha QC", cas[0])])
    recertified = (
        x509.CertificateBuilder()
        .subject_name(signer.certificate.subject)
        .issuer_name(signer.certificate.subject)
        .public_key(signer.key.public_key())
        .serial_number(12345)
        .not_valid_before(signer.certificate.not_valid_before_utc)
        .not_valid_after(signer.certificate.not_valid_after_utc)
        .sign(signer.key, hashes.SHA256())
    )
    assert recertified != signer.certificate
    assert len(read_etsi_tsl(document, [recertified]).services) == 1
    stranger = make_signer("Test TL signer").certificate  # same name, another key
    with pytest.raises(TrustListError, match="not signed by any of the given signer"):
        read_etsi_tsl(document, [stranger])


def test_a_signer_expired_when_the_list_was_issued_is_refused(tmp_path, cas) -> None:
    expired = make_signer("Old TL signer", not_before=T0 - timedelta(days=30), days=10)
    document = _signed(tmp_path, expired, [Service("Alpha Trust", "Alpha QC", cas[0])])
    with pytest.raises(TrustListError, match="not valid when the list was issued"):
        read_etsi_tsl(document, [expired.certificate])


def test_no_signers_given_refuses_the_list(tmp_path, signer, cas) -> None:
    document = _signed(tmp_path, signer, [Service("Alpha Trust", "Alpha QC", cas[0])])
    with pytest.raises(TrustListError, match="No signer certificates"):
        read_etsi_tsl(document, [])


def test_an_unsigned_list_is_refused(signer, cas) -> None:
    template = etsi_list_xml([Service("A", "A", cas[0])], signing_cert=signer.certificate)
    unsigned = template.split("<ds:Signature")[0] + "</TrustServiceStatusList>"
    with pytest.raises(TrustListError, match="not signed"):
        read_etsi_tsl(unsigned.encode(), [signer.certificate])


def test_a_service_added_outside_the_signature_is_refused(tmp_path, signer, cas) -> None:
    document = _signed(tmp_path, signer, [Service("Alpha Trust", "Alpha QC", cas[0])])
    extra = document.replace(
        b"</TrustServiceProviderList>",
        b"<TrustServiceProvider><TSPInformation><TSPName><Name>Mallory</Name></TSPName>"
        b"</TSPInformation></TrustServiceProvider></TrustServiceProviderList>",
    )
    with pytest.raises(TrustListError, match="does not match its signature"):
        read_etsi_tsl(extra, [signer.certificate])


def test_a_list_with_an_entity_declaration_is_refused(tmp_path, signer, cas) -> None:
    document = _signed(tmp_path, signer, [Service("Alpha Trust", "Alpha QC", cas[0])])
    hostile = document.replace(
        b'<?xml version="1.0" encoding="UTF-8"?>',
        b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
    ).replace(b"Alpha Trust", b"&e;")
    with pytest.raises(TrustListError, match="declares a DTD") as refused:
        read_etsi_tsl(hostile, [signer.certificate])
    assert "passwd" not in refused.value.reason
    assert "root:" not in refused.value.reason


def test_a_document_that_is_not_a_trusted_list_is_refused(signer) -> None:
    with pytest.raises(TrustListError, match="not an ETSI trusted list"):
        read_etsi_tsl(b"<html><body>maintenance</body></html>", [signer.certificate])
