"""``app.trust.sources``: what a validated path is told by the certificates of a
verification's trust sources, decided without a database."""

from __future__ import annotations

import base64

from cryptography import x509
from sources_support import make_party

from app.trust.sources import SourceAnchor, SourceTrust, Standing, authority_key_ids

ROOT = make_party("Root", ca=True)
INTERMEDIATE = make_party("Intermediate", issuer=ROOT, ca=True)
LEAF = make_party("Leaf", issuer=INTERMEDIATE)
PATH = (LEAF.certificate, INTERMEDIATE.certificate, ROOT.certificate)
MISS = "Issuer certificate is not in the trusted list 'X'"


def trust(*anchors: SourceAnchor) -> SourceTrust:
    return SourceTrust(anchors, MISS)


def test_a_path_through_a_granted_certificate_is_trusted_whichever_certificate_it_is():
    for cert in PATH:
        assert trust(SourceAnchor(cert, Standing.GRANTED)).refusal(PATH) is None


def test_a_path_through_no_listed_certificate_gets_the_sources_reason():
    other = make_party("Other", ca=True)
    assert trust(SourceAnchor(other.certificate, Standing.GRANTED)).refusal(PATH) == MISS


def test_withdrawn_and_stale_entries_explain_the_refusal_stale_first():
    withdrawn = SourceAnchor(ROOT.certificate, Standing.WITHDRAWN, "withdrawn on 2026-01-01")
    stale = SourceAnchor(ROOT.certificate, Standing.STALE, "Trusted list 'X' is past ...")
    assert trust(withdrawn).refusal(PATH) == "withdrawn on 2026-01-01"
    assert trust(withdrawn, stale).refusal(PATH) == "Trusted list 'X' is past ..."
    # Granted by another source beats both.
    granted = SourceAnchor(ROOT.certificate, Standing.GRANTED)
    assert trust(withdrawn, stale, granted).refusal(PATH) is None


def authority_named_by(issued) -> bytes:
    """The key identifier a certificate names as its issuer's (authorityKeyIdentifier)."""
    extension = issued.certificate.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    return extension.value.key_identifier


def test_authority_key_ids_are_what_certificates_issued_under_the_anchor_name():
    (value,) = authority_key_ids([ROOT.certificate, ROOT.certificate])
    assert "=" not in value
    assert base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)) == authority_named_by(
        INTERMEDIATE
    )
