"""DPoP at the issuer's endpoints (RFC 9449): the proof checked, its replay refused, nonces.

The proof itself is checked by ``app.oid4vci.dpop``; here is what needs the deployment: the
nonce key, the clock, and the table of proofs already used. A proof's ``jti`` is kept until
the proof would be refused as too old anyway (``MAX_AGE`` past its ``iat``), so the table
holds a few minutes of traffic; its primary key decides two concurrent uses of one proof.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.issuance import settings
from app.issuance.models import DpopProofSeen
from app.oid4vci import dpop
from app.oid4vci.dpop import DpopError, DpopProof

MAX_AGE = 300  # seconds a proof is accepted after its iat (and kept against replay)
MAX_SKEW = 60
NONCE_SECONDS = 300


def fresh_nonce() -> str:
    """A nonce for the ``DPoP-Nonce`` header of any issuer response."""
    return dpop.new_nonce(settings.current().dpop_nonce_key, int(clock.now().timestamp()))


def check_proof(
    header: str | None, *, method: str, url: str, access_token: str | None = None
) -> DpopProof | None:
    """The verified proof of the ``DPoP`` header, or None when there is none and none is
    required (``ISSUER_DPOP=accepted``); a proof used before is ``invalid_dpop_proof``."""
    if header is None:
        if settings.current().dpop_required:
            raise DpopError("invalid_dpop_proof", "A DPoP proof is required")
        return None
    now = int(clock.now().timestamp())
    key = settings.current().dpop_nonce_key
    proof = dpop.verify_dpop_proof(
        header,
        method=method,
        url=url,
        now=now,
        nonce_valid=lambda nonce: dpop.nonce_valid(key, nonce, now, NONCE_SECONDS),
        access_token=access_token,
        max_age=MAX_AGE,
        max_skew=MAX_SKEW,
    )
    _remember(proof)
    return proof


def _remember(proof: DpopProof) -> None:
    """RFC 9449 §11.1: a proof is accepted once. Expired rows are swept on the way."""
    now = clock.now()
    db.session.execute(delete(DpopProofSeen).where(DpopProofSeen.expires_at <= now))
    expires = datetime.fromtimestamp(proof.iat + MAX_AGE + MAX_SKEW, UTC)
    try:
        with db.session.begin_nested():
            db.session.add(
                DpopProofSeen(
                    proof_key=dpop.replay_key(proof),
                    expires_at=max(expires, now + timedelta(seconds=1)),
                )
            )
            db.session.flush()
    except IntegrityError:
        raise DpopError("invalid_dpop_proof", "This DPoP proof was already used") from None
