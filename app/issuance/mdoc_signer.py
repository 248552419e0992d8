"""Each organization's mdoc signing certificates: an IACA root and a document signer it
certified (``app.mdoc.certificates``), made on first use. Both private keys are made and kept
like issuer keys (``keys.make_private_key``: sealed, or in the PKCS#11 token). The IACA is
what verifiers trust; staff download it from the issuer's ``/iaca`` path.
"""

from __future__ import annotations

from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.issuance import keys, settings
from app.issuance.models import MdocSigner
from app.mdoc.certificates import document_signer_certificate, iaca_certificate
from app.organizations.models import Organization


def current_signer(organization: Organization, url: str) -> MdocSigner:
    """The organization's signer, made on first use; two first uses at once meet at the
    unique organization and the loser reads the winner's. ``url`` is the issuer's identifier,
    named in the certificates."""
    signer = existing_signer(organization.id)
    if signer is not None:
        return signer
    try:
        with db.session.begin_nested():
            signer = _new_signer(organization, url)
    except IntegrityError:
        signer = existing_signer(organization.id)
        if signer is None:
            raise
    return signer


def existing_signer(organization_id: Any) -> MdocSigner | None:
    """Read only: None before the organization's first mdoc."""
    return db.session.scalar(
        select(MdocSigner).where(MdocSigner.organization_id == organization_id)
    )


def _new_signer(organization: Organization, url: str) -> MdocSigner:
    now = clock.now()
    country = settings.current().country
    iaca_key, iaca_stored = keys.make_private_key("iaca")
    iaca = iaca_certificate(
        iaca_key, organization=organization.name, country=country, url=url, now=now
    )
    signer_key, signer_stored = keys.make_private_key("mdoc-ds")
    certificate = document_signer_certificate(
        iaca_key,
        iaca,
        signer_key.public_key(),
        organization=organization.name,
        country=country,
        url=url,
        now=now,
    )
    signer = MdocSigner(
        organization_id=organization.id,
        iaca_certificate=iaca.public_bytes(Encoding.DER),
        iaca_sealed_private_key=iaca_stored.get("sealed_private_key"),
        iaca_token_key_label=iaca_stored.get("token_key_label"),
        document_signer_certificate=certificate.public_bytes(Encoding.DER),
        created_at=now,
        **signer_stored,
    )
    db.session.add(signer)
    db.session.flush()
    return signer


def signing_key(signer: MdocSigner) -> ec.EllipticCurvePrivateKey:
    return keys.open_stored_key(
        "the mdoc document signer key", signer.token_key_label, signer.sealed_private_key
    )


def certificate(signer: MdocSigner) -> x509.Certificate:
    return x509.load_der_x509_certificate(signer.document_signer_certificate)


def iaca_pem(signer: MdocSigner) -> str:
    iaca = x509.load_der_x509_certificate(signer.iaca_certificate)
    return iaca.public_bytes(Encoding.PEM).decode("ascii")
