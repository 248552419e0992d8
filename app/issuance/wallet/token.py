"""The Token Endpoint (OpenID4VCI 1.0 §6): a pre-authorized code (with its ``tx_code``) or
an authorization code exchanged for an access token, DPoP-bound when the wallet proves a key
(RFC 9449). Single use is decided by conditional writes, and wrong ``tx_code`` guesses are
counted up to ``MAX_TX_CODE_FAILURES``."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import case, select, update

from app import clock
from app.extensions import db
from app.issuance import dpop
from app.issuance.authorization import issue_access_token
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialStatus
from app.issuance.operations import tx_code_hash
from app.issuance.wallet.metadata import pre_authorized_grant_allowed
from app.oid4vci.dpop import DpopError
from app.oid4vci.errors import TokenError
from app.oid4vci.request import TokenRequest
from app.organizations.models import Organization
from app.tokens import hash_secret, same

MAX_TX_CODE_FAILURES = 5


def exchange_code(
    organization: Organization, request: TokenRequest, dpop_jkt: str | None = None
) -> dict[str, Any]:
    """§6: a pre-authorized code (and its transaction code) for an access token bound to the
    one credential offered (and to the DPoP key, if the request carried a proof). The caller
    commits even when this raises, so a wrong transaction code is counted; the fifth burns
    the code (§3.5 leaves the limit to the issuer).

    A guess is judged by one conditional UPDATE, whichever way it went: the right code takes
    the offer only while fewer than five wrong ones are counted, and a wrong one is counted
    only below five. The row's lock orders concurrent guesses, so however many arrive at once,
    at most five are judged; every later one, right or wrong, gets the same refusal."""
    code_hash = hash_secret(request.pre_authorized_code)
    credential = db.session.scalar(
        select(Credential).where(
            Credential.pre_authorized_code_hash == code_hash,
            Credential.organization_id == organization.id,
        )
    )
    if credential is None:
        raise TokenError("invalid_grant", "The pre-authorized code is not known")
    if credential.status is not CredentialStatus.OFFERED:
        raise TokenError("invalid_grant", "The offer has expired or was withdrawn")
    if credential.code_used_at is not None:
        raise TokenError("invalid_grant", "The pre-authorized code was already used")
    if not pre_authorized_grant_allowed(credential):
        raise TokenError(
            "invalid_grant",
            "This offer is taken with the authorization code flow and the code mailed to its "
            "recipient, not with the pre-authorized code alone",
        )
    if not _tx_code_matches(credential, request.tx_code):
        _count_wrong_tx_code(credential.id, code_hash)
    now = clock.now()
    taken = db.session.execute(
        _still_redeemable(update(Credential), credential.id, code_hash)
        .values(code_used_at=now)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:
        raise TokenError("invalid_grant", NO_LONGER_REDEEMABLE)
    return issue_access_token(credential.id, dpop_jkt)


def token_dpop_key(organization: Organization, links: IssuerLinks, proof: str | None) -> str | None:
    """RFC 9449 §5: the thumbprint of the key a token request's DPoP proof was made with
    (the token is then bound to it), or None for a request without one."""
    return _dpop_key(proof, links.issuer(organization.id), "/token")


def par_dpop_key(organization: Organization, links: IssuerLinks, proof: str | None) -> str | None:
    """RFC 9449 §10.1: a proof at the pushed request binds the code to its key."""
    return _dpop_key(proof, links.issuer(organization.id), "/par")


def _dpop_key(proof: str | None, issuer: str, path: str) -> str | None:
    try:
        checked = dpop.check_proof(proof, method="POST", url=issuer + path)
    except DpopError as exc:
        raise TokenError(exc.error, exc.description) from exc
    return checked.jkt if checked else None


# The same words for every guess the limit (or a redemption) got to first, right or wrong, so
# an answer never tells whether a guess after the limit was the code.
NO_LONGER_REDEEMABLE = "The pre-authorized code was already used or no longer works"


def _still_redeemable(statement: Any, credential_id: uuid.UUID, code_hash: str) -> Any:
    """The conditions a guess is judged under: the same code (not burnt, not replaced by a
    resend), an offer not taken or withdrawn, and fewer wrong transaction codes than allowed."""
    return statement.where(
        Credential.id == credential_id,
        Credential.pre_authorized_code_hash == code_hash,
        Credential.recorded_status == CredentialStatus.OFFERED,
        Credential.code_used_at.is_(None),
        Credential.tx_code_failures < MAX_TX_CODE_FAILURES,
    )


def _tx_code_matches(credential: Credential, tx_code: str | None) -> bool:
    """Whether the transaction code is right; a missing or unasked-for one is a malformed
    request (``invalid_request``), not a guess, so it is not counted."""
    if credential.tx_code_hash is None:
        if tx_code is not None:
            raise TokenError("invalid_request", "This offer asked for no tx_code")
        return True
    if tx_code is None:
        raise TokenError("invalid_request", "tx_code is missing: this offer asks for one")
    return same(tx_code_hash(credential.offer_token or "", tx_code), credential.tx_code_hash)


def _count_wrong_tx_code(credential_id: uuid.UUID, code_hash: str) -> None:
    """Count a wrong transaction code and, at the limit, burn the code, in one statement."""
    failures = db.session.execute(
        _still_redeemable(update(Credential), credential_id, code_hash)
        .values(
            tx_code_failures=Credential.tx_code_failures + 1,
            pre_authorized_code_hash=case(
                (Credential.tx_code_failures + 1 >= MAX_TX_CODE_FAILURES, None),
                else_=Credential.pre_authorized_code_hash,
            ),
        )
        .returning(Credential.tx_code_failures)
        .execution_options(synchronize_session=False)
    ).scalar_one_or_none()
    if failures is None:
        raise TokenError("invalid_grant", NO_LONGER_REDEEMABLE)
    if failures >= MAX_TX_CODE_FAILURES:
        raise TokenError("invalid_grant", "Wrong tx_code too many times: the code no longer works")
    left = MAX_TX_CODE_FAILURES - failures
    raise TokenError("invalid_grant", f"Wrong tx_code; {left} tries left")
