"""Credentials offered over DIDComm: issue-credential 3.0 as the Socious Wallet takes it.

The exchange, as the Identus SDK 7.0.0 runs it (``HandleOfferCredential``,
``HandleIssueCredential``):

1. The offer's link is an out-of-band invitation from the organization's did:peer:2 whose id
   is the offer's token; it follows the offer's rules (single use, expiry, withdraw, resend:
   a resend makes a new token, so the old invitation names nothing).
2. The wallet's connection request on that invitation makes the exchange (one per invitation:
   ``claim_invitation``); Verity answers with a connection response and an offer-credential:
   the claims as a ``credential_preview`` and a ``prism/jwt`` attachment carrying a fresh
   random challenge and the domain (the organization's DIDComm DID).
3. The wallet answers with a request-credential: a JWT signed ES256K by a new did:prism it
   made for this credential, whose ``nonce`` is the challenge and whose ``aud`` names the
   domain. Its signature, nonce and audience are checked.
4. Verity issues the credential, a VC-JWT signed by the organization's did:prism (its
   ``ISSUING`` key) whose subject is that did:prism, with a StatusList2021 entry: revoking it
   sets its bit in the list served under the organization's issuer.
"""

from __future__ import annotations

import logging
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from app import clock
from app.didcomm import protocols
from app.didcomm.errors import Malformed
from app.didcomm_agent import operations as agent
from app.didcomm_agent.identities import identity_of
from app.didcomm_agent.models import DidcommExchange, DidcommIdentity
from app.extensions import db
from app.issuance import prism_issuer
from app.issuance.invitation import invitation_url
from app.issuance.models import DIDCOMM, Credential, CredentialStatus
from app.oid4vci.credential import nest_claims
from app.oid4vp.formats import JWT_VC_JSON
from app.organizations.models import Organization, WalletAttestation
from app.schemas.models import Schema
from app.sdjwt import SdJwtError, read_unverified, verify_jws
from app.vcjwt import VcJwtError
from app.vcjwt.holder import holder_key
from app.webhooks import outbox

log = logging.getLogger(__name__)

V1 = "https://www.w3.org/2018/credentials/v1"
# The Socious Wallet keeps one credential whose credentialSubject.type is this (its identity
# check, the KYC credential) and drops any other that has it (socious-wallet
# src/services/agent.tsx): a credential Verity issues must not be of it.
WALLET_KYC_TYPE = "verification"
# How long the wallet's request JWT may be old (it carries iat, and no exp).
REQUEST_MAX_AGE = 600


# -- the issuing rules DIDComm cannot honour --------------------------------------------------


def unhonoured_rules(schema: Schema, organization: Organization, *, tx_code: bool) -> list[str]:
    """Each issuing rule of the schema or the organization that a DIDComm offer cannot keep,
    named, with what to do instead; empty when the offer may be made.

    issue-credential 3.0 (invitation, connection, offer, request, issue) has no step where a
    code, a wallet attestation or a key attestation could be asked for, so an offer under
    such a rule would be taken by whoever holds its invitation: it is refused instead. The
    rules DIDComm keeps by its own means (DPoP's proof of possession, expiry, single use,
    withdraw, the schema's validity) are in the how-to's "Issuing rules over DIDComm"."""
    problems = []
    if schema.format != JWT_VC_JSON:
        problems.append(
            f"protocol: DIDComm carries W3C VC-JWT credentials only; schema {schema.name} is "
            f"{schema.format} (choose a {JWT_VC_JSON} schema, or openid4vci)"
        )
    if tx_code:
        problems.append(
            "tx_code: a DIDComm offer has no transaction code; the invitation is single use"
        )
    if schema.authorization_code_by_mail:
        problems.append(
            f"authorization_code_by_mail: schema {schema.name} is taken only with the code "
            "mailed to its recipient, and DIDComm has no step to ask for it, so whoever holds "
            "the invitation would take it (choose openid4vci)"
        )
    if schema.key_attestations_required:
        problems.append(
            f"key_attestations_required: schema {schema.name} asks for an attested holder "
            "key, and a DIDComm credential request carries no key attestation (choose "
            "openid4vci)"
        )
    if organization.wallet_attestation is WalletAttestation.REQUIRED:
        problems.append(
            "wallet_attestation: this organization requires a wallet attestation, and a "
            "DIDComm wallet presents none (choose openid4vci, or set wallet_attestation to "
            "optional)"
        )
    return problems


def _rules_now(credential: Credential) -> list[str]:
    """The rules as they read when the wallet comes: a schema's flags and the organization's
    setting may have changed since the offer was made."""
    return unhonoured_rules(
        credential.schema, credential.organization, tx_code=credential.tx_code_hash is not None
    )


def prepare_offer(credential: Credential) -> None:
    """Before a DIDComm offer's link is handed out: the organization has a DID to invite
    from (and one to issue as)."""
    identity_of(credential.organization_id)
    prism_issuer.prism_issuer_of(credential.organization_id)


def live_invitation(identity: DidcommIdentity, invitation_id: str) -> str | None:
    """The link of a DIDComm offer of ``identity``'s organization that can still be taken
    (the invitation page shows only these), else None."""
    credential = db.session.scalar(
        select(Credential).where(
            Credential.offer_token == invitation_id, Credential.protocol == DIDCOMM
        )
    )
    if credential is None or credential.organization_id != identity.organization_id:
        return None
    if credential.status != CredentialStatus.OFFERED:
        return None
    return invitation_url(credential)


# -- the exchange -----------------------------------------------------------------------------

TAKEN = "This offer was taken, withdrawn or has expired."
RESENT = "This offer was sent again: only its new invitation is honoured."
# The problem report of an offer whose issuing rules DIDComm cannot honour (they changed
# since it was made): the comment names them.
NOT_AVAILABLE = "e.p.req.not-available"


def on_invitation(opened: agent.Opened, invitation_id: str) -> bool:
    """A connection request on one of our offers: answer it with the offer, once."""
    credential = db.session.scalar(
        select(Credential).where(
            Credential.offer_token == invitation_id, Credential.protocol == DIDCOMM
        )
    )
    if credential is None:
        return False
    if credential.organization_id != opened.identity.organization_id:
        return False
    if credential.status != CredentialStatus.OFFERED:
        agent.report(opened, "e.p.req.expired", TAKEN)
        return True
    if problems := _rules_now(credential):
        agent.report(opened, NOT_AVAILABLE, "; ".join(problems))
        return True
    challenge = secrets.token_urlsafe(24)
    offer = protocols.offer_credential(
        opened.identity.did,
        opened.sender,
        attributes=_preview(credential),
        challenge=challenge,
        domain=opened.identity.did,
    )
    exchange = DidcommExchange(
        invitation_id=invitation_id,
        credential_id=credential.id,
        identity_id=opened.identity.id,
        holder_did=opened.sender,
        request_message_id=offer["id"],
        challenge=challenge,
    )
    if agent.claim_invitation(exchange):
        agent.send(
            opened.identity, protocols.connection_response(opened.message, opened.identity.did)
        )
        agent.send(opened.identity, offer)
    return True


def _preview(credential: Credential) -> list[tuple[str, str]]:
    """The claims as the SDK's preview takes them: names and non-empty string values."""
    preview = []
    for claim in credential.claims:
        value = claim["value"]
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        preview.append((claim["name"], text or " "))
    return preview


def on_request(opened: agent.Opened) -> None:
    """The wallet's request-credential: honoured only on an open exchange made on the offer's
    current invitation, its JWT checked, then the credential issued."""
    thread = protocols.thread_of(opened.message)
    exchange = (
        db.session.scalar(
            select(DidcommExchange).where(DidcommExchange.request_message_id == thread)
        )
        if thread
        else None
    )
    if exchange is None or exchange.credential_id is None:
        agent.report(opened, "e.p.msg.unknown-thread", "This request answers no offer of ours.")
        return
    if exchange.holder_did != opened.sender or exchange.identity_id != opened.identity.id:
        agent.report(opened, "e.p.msg.unknown-sender", "This request comes from another DID.")
        return
    credential = db.session.get(Credential, exchange.credential_id)
    refusal = TAKEN if credential is None else _closed(exchange, credential)
    if credential is None or refusal is not None:
        close(exchange)
        agent.report(opened, "e.p.req.expired", refusal or TAKEN)
        return
    if problems := _rules_now(credential):
        agent.report(opened, NOT_AVAILABLE, "; ".join(problems))
        return
    try:
        holder = _checked_request(opened.message, exchange, opened.identity.did)
    except ValueError as exc:
        agent.report(opened, "e.p.msg.invalid", str(exc))
        return
    if not _take(credential, exchange.invitation_id):
        close(exchange)
        agent.report(opened, "e.p.req.expired", TAKEN)
        return
    signed = _sign(credential, holder)
    close(exchange)  # single use
    agent.send(
        opened.identity, protocols.issue_credential(opened.message, opened.identity.did, signed)
    )
    outbox.emit("credential.issued", credential, credential.organization_id, credential.id)


def _closed(exchange: DidcommExchange, credential: Credential) -> str | None:
    """Why no request is honoured on this exchange any more, or None while it stands: it was
    closed (the credential issued on it, the offer resent or withdrawn), it was made on an
    invitation the offer no longer has (a resend, which also revives an expired offer with
    a new token), or the offer is no longer open (taken, withdrawn, revoked, expired)."""
    if credential.offer_token != exchange.invitation_id:
        return RESENT
    if exchange.challenge is None or credential.status is not CredentialStatus.OFFERED:
        return TAKEN
    return None


def close(exchange: DidcommExchange) -> None:
    """No request is honoured on this exchange any more: its challenge, which a request must
    carry as its nonce, is gone."""
    exchange.challenge = None


def close_exchanges(credential: Credential) -> None:
    """Close every exchange of the offer (a resend, a withdrawal, a revocation): a request
    on any of them is refused, whatever invitation the offer has next."""
    db.session.execute(
        update(DidcommExchange)
        .where(DidcommExchange.credential_id == credential.id)
        .values(challenge=None)
        .execution_options(synchronize_session=False)
    )


def _checked_request(message: dict[str, Any], exchange: DidcommExchange, domain: str) -> str:
    """The holder DID the request JWT is signed by, once its signature, nonce, audience and
    age hold; ValueError with the reason otherwise."""
    try:
        token = protocols.requested_jwt(message)
        header, payload = read_unverified(token, "Credential request")
        holder = payload.get("iss")
        if not isinstance(holder, str) or not holder.startswith("did:prism:"):
            raise ValueError("The credential request is not signed by a did:prism.")
        verify_jws(token, holder_key(holder, header), ("ES256K",), label="Credential request")
    except (SdJwtError, VcJwtError) as exc:
        raise ValueError(exc.reason) from None
    except Malformed as exc:
        raise ValueError(exc.reason) from None
    if exchange.challenge is None or payload.get("nonce") != exchange.challenge:
        raise ValueError("The credential request's nonce is not this offer's challenge.")
    audience = payload.get("aud")
    names = audience if isinstance(audience, list) else [audience]
    if domain not in names:
        raise ValueError("The credential request is meant for another issuer (aud).")
    issued_at = payload.get("iat")
    if isinstance(issued_at, int | float) and issued_at > 10**11:
        issued_at = issued_at / 1000  # the SDK writes iat in milliseconds
    if isinstance(issued_at, int | float) and abs(time.time() - issued_at) > REQUEST_MAX_AGE:
        raise ValueError("The credential request is too old or dated in the future.")
    return holder


def _take(credential: Credential, invitation_id: str) -> bool:
    """Move the offer to ISSUED if it still stands on the exchange's invitation: one
    conditional UPDATE, so a revocation, a resend (a new token) or a second request meets
    it taken."""
    now = clock.now()
    taken = db.session.execute(
        update(Credential)
        .where(
            Credential.id == credential.id,
            Credential.offer_token == invitation_id,
            Credential.recorded_status == CredentialStatus.OFFERED,
            Credential.offer_expires_at > now,
        )
        .values(recorded_status=CredentialStatus.ISSUED, code_used_at=now)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:
        return False
    db.session.refresh(credential)
    return True


def _sign(credential: Credential, holder: str) -> str:
    """The VC-JWT in Identus's shape (the cloud agent's ``generateJWTCredential``): ``iss``
    the organization's did:prism, ``sub`` the holder's, the claims as ``credentialSubject``
    with the holder's id, and the StatusList2021 entry of the credential's bit."""
    now = clock.now()
    validity = credential.schema.validity_days
    expires = int(now.timestamp()) + validity * 86400 if validity else None
    issuer = prism_issuer.prism_issuer_of(credential.organization_id)
    payload: dict[str, Any] = {
        "iss": issuer.did,
        "sub": holder,
        "nbf": int(now.timestamp()),
        "jti": f"urn:uuid:{credential.id}",
        "vc": {
            "@context": [V1],
            "type": ["VerifiableCredential", *(credential.schema.types or ())],
            "credentialSubject": {**nest_claims(_claims(credential)), "id": holder},
            "credentialStatus": prism_issuer.status_entry(credential),
        },
    }
    if expires is not None:
        payload["exp"] = expires
    credential.issued_at = now
    credential.expires_at = datetime.fromtimestamp(expires, UTC) if expires else None
    return prism_issuer.sign_credential(credential.organization_id, payload)


def _claims(credential: Credential) -> dict[str, Any]:
    return {claim["name"]: claim["value"] for claim in credential.claims}


def register() -> None:
    """Hand the agent this part's threads (called by the application factory)."""
    agent.handles_invitations(on_invitation)
    agent.links_invitations(live_invitation)
    agent.handles(protocols.REQUEST_CREDENTIAL, on_request)
