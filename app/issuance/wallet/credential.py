"""The Credential Endpoint (OpenID4VCI 1.0 §8), its steps in order: the access token
(``access``), the request read from its raw bytes (``app.oid4vci.request``), the proofs and
their nonces (``proofs``), the credential taken and its copies chosen (here), each copy
signed (``signing``); the answer is the list of signed copies the HTTP layer wraps."""

from __future__ import annotations

from sqlalchemy import select, update

from app import clock
from app.extensions import db
from app.issuance import settings
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialCopy, CredentialStatus
from app.issuance.operations import new_copy
from app.issuance.wallet.access import checked_token
from app.issuance.wallet.proofs import checked_proofs
from app.issuance.wallet.signing import sign_copy
from app.oid4vci.errors import (
    CredentialRequestDenied,
    InvalidCredentialRequest,
    UnknownCredentialConfiguration,
)
from app.oid4vci.request import read_credential_request
from app.organizations.models import Organization
from app.webhooks import outbox


def issue_to_wallet(
    organization: Organization,
    authorization: tuple[str, str | None],
    body: bytes,
    links: IssuerLinks,
    dpop_proof: str | None = None,
) -> list[str]:
    """§8: one credential per proof (per attested key for the ``attestation`` proof type,
    Appendix F.3), in the schema's format (SD-JWT VC, mdoc or VC-JWT; ``SIGNERS``), each a
    copy of the token's credential bound to that key, with salts and a status list entry of
    its own (a batch: §12.2.4). Checked in the order §8.3.1 reads: the token (and its DPoP proof), the request (its raw bytes: JSON
    is read only for a valid token), the configuration, the proofs, their nonces.
    ``authorization`` is the Authorization header's scheme and token.

    The token serves further requests until it expires (§8, "multiple accesses"), each for
    more copies, up to ``max_copies`` of the credential in all; past that the issuer issues
    fewer credentials than proofs (§8.3 allows it), and none is ``credential_request_denied``."""
    token = checked_token(organization, authorization, dpop_proof, links)
    credential = token.credential
    current = settings.current()
    request = read_credential_request(body, current.batch_size)
    if request.credential_identifier is not None:
        if token.credential_identifier is None:
            raise InvalidCredentialRequest(
                "credential_identifier is only for tokens granted with authorization_details"
            )
        if request.credential_identifier != token.credential_identifier:
            raise InvalidCredentialRequest("credential_identifier is not one this token grants")
    elif request.credential_configuration_id != credential.configuration_id:
        raise UnknownCredentialConfiguration(
            "The access token grants another credential configuration"
        )
    now = clock.now()
    proofs = checked_proofs(
        organization, request, credential, links.issuer(organization.id), current.batch_size
    )
    first = _take(credential)
    copies = _copies_to_sign(credential, len(proofs), current.max_copies)
    signed = [
        sign_copy(organization, credential, copy, proof.jwk, links, now)
        for copy, proof in zip(copies, proofs, strict=False)
    ]
    db.session.flush()
    if first:
        outbox.emit("credential.issued", credential, organization.id, credential.id)
    return signed


def _take(credential: Credential) -> bool:
    """Move an offer to ISSUED (True: this request is its first issuance), or confirm an
    issued credential still stands. Both are conditional UPDATEs: the row lock they take
    orders this request against a revocation and against other requests on the token."""
    first = db.session.execute(
        update(Credential)
        .where(
            Credential.id == credential.id,
            Credential.recorded_status == CredentialStatus.OFFERED,
        )
        .values(recorded_status=CredentialStatus.ISSUED)
        .execution_options(synchronize_session=False)
    )
    if first.rowcount == 1:
        db.session.refresh(credential)
        return True
    still = db.session.execute(
        update(Credential)
        .where(
            Credential.id == credential.id,
            Credential.recorded_status == CredentialStatus.ISSUED,
        )
        .values(recorded_status=CredentialStatus.ISSUED)
        .execution_options(synchronize_session=False)
    )
    if still.rowcount != 1:
        raise CredentialRequestDenied("The credential was withdrawn or revoked")
    db.session.refresh(credential)
    return False


def _copies_to_sign(credential: Credential, wanted: int, max_copies: int) -> list[CredentialCopy]:
    """The copies this request signs: copy 0 first (its entry was reserved with the offer),
    then new ones, as many as the proofs while the credential has fewer than ``max_copies``."""
    copies = list(
        db.session.scalars(
            select(CredentialCopy)
            .where(CredentialCopy.credential_id == credential.id)
            .order_by(CredentialCopy.number)
        )
    )
    unsigned = [copy for copy in copies if copy.issued_at is None]
    signed_before = len(copies) - len(unsigned)
    count = min(wanted, max_copies - signed_before)
    if count <= 0:
        raise CredentialRequestDenied(
            f"Every copy of this credential this issuer gives ({max_copies}) was issued"
        )
    chosen = unsigned[:count]
    number = max((copy.number for copy in copies), default=-1)
    while len(chosen) < count:
        number += 1
        chosen.append(new_copy(credential, number))
    return chosen
