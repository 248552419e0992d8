"""Wallet and key attestations at the organization's issuer: whom it trusts, what it requires,
and the PoPs already used.

The JWTs themselves are checked by ``app.oid4vci.attestation``; here is what needs the
deployment: the organization's setting (``wallet_attestation``), its wallet provider trust
sources, the clock, and the table of used PoPs (the DPoP proofs' table: a PoP's key is a hash
of its instance key and ``jti``, so the two never meet).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.issuance.models import DpopProofSeen
from app.oid4vci import attestation as protocol
from app.oid4vci.attestation import AttestationError, ClientAttestation, KeyAttestation
from app.oid4vci.errors import InvalidProof, TokenError
from app.oid4vci.proof import verify_proof_jwt
from app.organizations.models import Organization, WalletAttestation
from app.sdjwt.errors import SdJwtError
from app.sdjwt.jws import read_unverified
from app.trust_sources.use import wallet_provider_trust

MAX_AGE = 300  # seconds a PoP is accepted after its iat (and kept against replay)
MAX_SKEW = 60


def client_attestation(
    organization: Organization, headers: Mapping[str, Any], audience: str
) -> ClientAttestation | None:
    """The verified wallet attestation of a PAR or token request, or None when the wallet
    sent none and the organization does not require one. A bad attestation is refused
    (``invalid_client``) even where it is optional: a wallet that sends one means it."""
    setting = organization.wallet_attestation
    if setting is WalletAttestation.OFF:
        return None
    attestation = headers.get(protocol.ATTESTATION_HEADER)
    pop = headers.get(protocol.ATTESTATION_POP_HEADER)
    if attestation is None and pop is None:
        if setting is WalletAttestation.REQUIRED:
            raise TokenError(
                "invalid_client",
                "This issuer requires a wallet attestation (OAuth-Client-Attestation and "
                "OAuth-Client-Attestation-PoP headers)",
            )
        return None
    if attestation is None or pop is None:
        raise TokenError(
            "invalid_client",
            "Send both OAuth-Client-Attestation and OAuth-Client-Attestation-PoP",
        )
    now = clock.now()
    try:
        verified = protocol.verify_client_attestation(
            attestation,
            pop,
            audience=audience,
            trust=wallet_provider_trust(organization.id, now),
            now=int(now.timestamp()),
            max_age=MAX_AGE,
            max_skew=MAX_SKEW,
        )
    except AttestationError as exc:
        raise TokenError("invalid_client", exc.reason) from None
    _remember(verified)
    return verified


def key_attestation(organization: Organization, token: Any) -> KeyAttestation:
    """A verified key attestation (OpenID4VCI 1.0 Appendix D.1) from a wallet provider the
    organization trusts; ``AttestationError`` otherwise."""
    now = clock.now()
    return protocol.verify_key_attestation(
        token,
        trust=wallet_provider_trust(organization.id, now),
        now=int(now.timestamp()),
        max_skew=MAX_SKEW,
    )


def _remember(verified: ClientAttestation) -> None:
    """A PoP is accepted once; expired rows are swept on the way."""
    now = clock.now()
    db.session.execute(delete(DpopProofSeen).where(DpopProofSeen.expires_at <= now))
    expires = datetime.fromtimestamp(verified.iat + MAX_AGE + MAX_SKEW, UTC)
    try:
        with db.session.begin_nested():
            db.session.add(
                DpopProofSeen(
                    proof_key=verified.replay_key(),
                    expires_at=max(expires, now + timedelta(seconds=1)),
                )
            )
            db.session.flush()
    except IntegrityError:
        raise TokenError("invalid_client", "This client attestation PoP was already used") from None


@dataclass(frozen=True)
class HolderKey:
    """The key a credential is bound to and the ``c_nonce`` its proof carried."""

    jwk: dict[str, Any]
    nonce: str | None


def holder_keys(
    organization: Organization,
    proof_type: str,
    proof: str,
    *,
    audience: str,
    key_attestations_required: bool,
) -> list[HolderKey]:
    """The keys one proof of a Credential Request binds credentials to, its key attestation
    checked.

    ``jwt`` (Appendix F.1): the proof's own key, as always. A key attestation in its
    ``key_attestation`` header is checked whenever present: it must attest the proof's key and
    carry the proof's ``c_nonce`` (F.1: "the nonce claim in the key attestation MUST be set to
    a server-provided c_nonce"; this issuer always has a Nonce Endpoint). One credential per
    proof still: F.1's SHOULD of a credential per attested key is met by the ``attestation``
    proof type, and a batch of ``jwt`` proofs each carrying the same attestation would
    otherwise ask for every key many times over.
    ``attestation`` (Appendix F.3, HAIP 1.0 §4.5): the key attestation is the proof, must
    carry the ``c_nonce``, and gives one credential per attested key ("The Credential Issuer
    SHOULD issue a Credential for each cryptographic public key specified in the
    attested_keys claim"). A configuration that requires key attestations refuses a ``jwt``
    proof without one; the ``attestation`` proof type is offered only where they are required.
    """
    now = clock.now()
    if proof_type == "attestation":
        if not key_attestations_required:
            raise InvalidProof("The attestation proof type is not offered for this credential")
        attested = _key_attestation(organization, proof)
        if attested.nonce is None:
            raise InvalidProof("Key attestation carries no nonce: fetch a c_nonce first")
        return [HolderKey(key, attested.nonce) for key in attested.attested_keys]
    verified = verify_proof_jwt(proof, audience=audience, now=int(now.timestamp()))
    try:
        header = read_unverified(proof, "Proof")[0]
    except SdJwtError as exc:  # verify_proof_jwt read it already: never reached
        raise InvalidProof(exc.reason) from exc
    token = header.get("key_attestation")
    if token is None:
        if key_attestations_required:
            raise InvalidProof(
                "This credential requires a key attestation (key_attestation in the proof "
                "header, or the attestation proof type)"
            )
        return [HolderKey(verified.jwk, verified.nonce)]
    attested = _key_attestation(organization, token)
    if not attested.attests(verified.jwk):
        raise InvalidProof("The key attestation does not attest the proof's key")
    if attested.nonce is None:
        raise InvalidProof("The key attestation carries no nonce: set it to the proof's c_nonce")
    if attested.nonce != verified.nonce:
        raise InvalidProof("The key attestation carries another nonce than the proof")
    return [HolderKey(verified.jwk, verified.nonce)]


def _key_attestation(organization: Organization, token: Any) -> KeyAttestation:
    try:
        return key_attestation(organization, token)
    except AttestationError as exc:
        raise InvalidProof(exc.reason) from None
