"""The proof checks of the Credential Endpoint (OpenID4VCI 1.0 §8.2): each key proof, its
key attestation, a key of its own per copy, and the ``c_nonce`` it carries spent once; and
the Nonce Endpoint (§7) that hands those nonces out."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.issuance import attestation, settings
from app.issuance.models import CNonce, Credential
from app.mdoc.issuing import cose_key
from app.oid4vci.errors import InvalidCredentialRequest, InvalidNonce, InvalidProof
from app.oid4vci.keys import jwk_thumbprint
from app.oid4vci.nonce import mint_nonce, nonce_expiry
from app.oid4vci.request import CredentialRequest
from app.oid4vp.formats import MSO_MDOC
from app.organizations.models import Organization
from app.tokens import hash_secret


def new_nonce(organization: Organization) -> str:
    """§7: a fresh single-use ``c_nonce``, made without a write (``app.oid4vci.nonce``): the
    endpoint is unauthenticated, so nothing it answers may grow a table."""
    current = settings.current()
    expires_at = int(clock.now().timestamp()) + current.nonce_seconds
    return mint_nonce(current.nonce_key, organization.id.bytes, expires_at)


def _consume_nonce(organization: Organization, nonce: str | None) -> None:
    """Spend a nonce: it must be this issuer's and unexpired, and is recorded until it lapses
    so a second use is refused (the primary key decides two requests spending it at once).
    Spent nonces past their expiry are swept on the way."""
    if nonce is None:
        raise InvalidNonce("The proof carries no c_nonce")
    now = clock.now()
    expires_at = nonce_expiry(settings.current().nonce_key, organization.id.bytes, nonce)
    if expires_at is None or expires_at <= now.timestamp():
        raise InvalidNonce("The c_nonce is unknown, expired or already used")
    db.session.execute(delete(CNonce).where(CNonce.expires_at <= now))
    try:
        with db.session.begin_nested():
            db.session.add(
                CNonce(
                    nonce_hash=hash_secret(nonce),
                    organization_id=organization.id,
                    expires_at=datetime.fromtimestamp(expires_at, UTC),
                )
            )
            db.session.flush()
    except IntegrityError:
        raise InvalidNonce("The c_nonce is unknown, expired or already used") from None


def checked_proofs(
    organization: Organization,
    request: CredentialRequest,
    credential: Credential,
    issuer: str,
    batch_size: int,
) -> list[attestation.HolderKey]:
    """Every proof valid (with its key attestation where present or required) and made with a
    key of its own (a copy per key, so presentations of two copies cannot be linked by key),
    each key fit for the format (an mdoc's device key is a COSE_Key), then every nonce they
    carry spent: each proof carries one, in a batch normally the same.

    A key attestation as proof (``attestation``) gives one key per attested key, so the keys,
    not the proofs, are what ``batch_size`` bounds: more than that is refused as a request
    with too many ``jwt`` proofs is (§8.3.1.2, ``invalid_credential_request``)."""
    proofs = [
        key
        for proof in request.proofs
        for key in attestation.holder_keys(
            organization,
            request.proof_type,
            proof,
            audience=issuer,
            key_attestations_required=bool(credential.schema.key_attestations_required),
        )
    ]
    if len(proofs) > batch_size:
        raise InvalidCredentialRequest(
            f"proofs.{request.proof_type} attests {len(proofs)} keys; this issuer's batch_size "
            f"is {batch_size}"
        )
    thumbprints = {jwk_thumbprint(proof.jwk) for proof in proofs}
    if len(thumbprints) != len(proofs):
        raise InvalidProof("Each proof of a batch must be made with a key of its own")
    if credential.schema.format == MSO_MDOC:
        for proof in proofs:
            try:
                cose_key(proof.jwk)
            except ValueError as exc:
                raise InvalidProof(f"The proof's key cannot be an mdoc device key: {exc}") from exc
    for nonce in dict.fromkeys(proof.nonce for proof in proofs):
        _consume_nonce(organization, nonce)
    return proofs
