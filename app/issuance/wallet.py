"""The issuer side a wallet talks to (OpenID4VCI 1.0; the authorization code flow's own
steps are in ``app.issuance.authorization``).

Offer by reference (§4.1.3), Token Endpoint (§6), Nonce Endpoint (§7), Credential Endpoint
(§8), the metadata documents (§12) and the Token Status List. Every refusal is a
``TokenError`` or a ``CredentialError`` carrying its registered code; the HTTP layer renders
them. Single use (codes, nonces, access tokens) is decided by conditional writes, so two
concurrent redemptions cannot both succeed.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import case, delete, select, update
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.issuance import (
    attestation,
    certificates,
    dpop,
    keys,
    mdoc_signer,
    prism_issuer,
    settings,
)
from app.issuance.authorization import issue_access_token
from app.issuance.links import IssuerLinks
from app.issuance.models import AccessToken, CNonce, Credential, CredentialCopy, CredentialStatus
from app.issuance.operations import (
    claims_of,
    issuer_state,
    new_copy,
    pre_authorized_code,
    tx_code_hash,
)
from app.issuance.own import list_started, revoked_indices
from app.mdoc.issuing import cose_key, issue_mdoc
from app.mdoc.status_list import sign_status_list_cwt
from app.oid4vci.credential import sign_sd_jwt_vc
from app.oid4vci.dpop import DpopError
from app.oid4vci.errors import (
    CredentialRequestDenied,
    InvalidCredentialRequest,
    InvalidDpopProof,
    InvalidNonce,
    InvalidProof,
    InvalidToken,
    TokenError,
    UnknownCredentialConfiguration,
    UseDpopNonce,
)
from app.oid4vci.keys import jwk_thumbprint
from app.oid4vci.metadata import (
    ATTEST_JWT_CLIENT_AUTH,
    ClaimMetadata,
    CredentialConfiguration,
    IssuerDisplay,
    authorization_server_metadata,
    credential_endpoint,
    credential_issuer_metadata,
    credential_offer,
    jwt_vc_issuer_metadata,
    scope_of,
)
from app.oid4vci.nonce import mint_nonce, nonce_expiry
from app.oid4vci.request import CredentialRequest, TokenRequest, read_credential_request
from app.oid4vci.statuslist import sign_status_list
from app.oid4vp.formats import JWT_VC_JSON, MSO_MDOC, SD_JWT_VC
from app.organizations.models import Organization, WalletAttestation
from app.schemas import type_metadata
from app.schemas.models import Schema
from app.tokens import hash_secret, same
from app.vcjwt.issuing import sign_bitstring_status_list, sign_vc_jwt
from app.webhooks import outbox

MAX_TX_CODE_FAILURES = 5
VALUE_TYPES = {"NUMBER": "number", "BOOLEAN": "boolean"}
# The issuer metadata member naming the did:prism its DIDComm credentials are issued under.
PRISM_ISSUER_MEMBER = "verity_did_prism"

log = logging.getLogger(__name__)


def issuer_organization(organization_id: str) -> Organization | None:
    """The organization an ``/issuers/<org_id>`` path names, if any."""
    try:
        return db.session.get(Organization, uuid.UUID(organization_id))
    except ValueError:
        return None


# -- documents --------------------------------------------------------------------------------


def configurations(organization: Organization) -> list[CredentialConfiguration]:
    """One credential configuration per published schema the organization can issue: its own
    and the public ones; the configuration ID is the schema's ID."""
    rows = db.session.scalars(
        select(Schema)
        .where(
            Schema.published.is_(True),
            (Schema.organization_id == organization.id) | Schema.public.is_(True),
        )
        .order_by(Schema.created_at, Schema.id)
    )
    return [
        CredentialConfiguration(
            id=str(schema.id),
            vct=schema.vct,
            display_name=schema.name,
            description=schema.description or None,
            key_attestations_required=bool(schema.key_attestations_required),
            rendering=type_metadata.rendering(schema),
            locale=type_metadata.DISPLAY_LOCALE,
            claims=[
                ClaimMetadata(
                    a["name"],
                    a.get("description") or a["name"],
                    VALUE_TYPES.get(a["type"], "string"),
                    a.get("namespace") or schema.namespace,
                )
                for a in schema.attributes
            ],
            format=schema.format or SD_JWT_VC,
            doctype=schema.doctype or "",
            types=list(schema.types or ()),
        )
        for schema in rows
    ]


def issuer_metadata(
    organization: Organization, links: IssuerLinks, logo_uri: str | None = None
) -> dict[str, Any]:
    """The issuer is shown by the organization's name and ``logo_uri``."""
    display = IssuerDisplay(organization.name, logo_uri, type_metadata.DISPLAY_LOCALE)
    metadata = credential_issuer_metadata(
        links.issuer(organization.id),
        configurations(organization),
        display,
        settings.current().batch_size,
    )
    # The DID its DIDComm credentials are issued under, once made (read only, like the
    # keys): an extension member (§12.2.4 lets an issuer add its own), named for this service
    # so no wallet takes it for a parameter of the specification.
    did = prism_issuer.existing_prism_issuer(organization.id)
    if did is not None:
        metadata[PRISM_ISSUER_MEMBER] = {
            "did": did.did,
            "short_form": did.short_form,
            "did_document": did.document(),
        }
    return metadata


def oauth_metadata(organization: Organization, links: IssuerLinks) -> dict[str, Any]:
    return authorization_server_metadata(
        links.issuer(organization.id),
        [scope_of(configuration.id) for configuration in configurations(organization)],
        client_auth_methods(organization),
    )


def client_auth_methods(organization: Organization) -> list[str]:
    """``token_endpoint_auth_methods_supported`` as the organization's wallet attestation
    setting reads: ``none`` unless required, ``attest_jwt_client_auth`` unless off."""
    setting = organization.wallet_attestation
    methods = [] if setting is WalletAttestation.REQUIRED else ["none"]
    if setting is not WalletAttestation.OFF:
        methods.append(ATTEST_JWT_CLIENT_AUTH)
    return methods


def sd_jwt_vc_metadata(organization: Organization, links: IssuerLinks) -> dict[str, Any]:
    return jwt_vc_issuer_metadata(
        links.issuer(organization.id), keys.published_keys(organization.id)
    )


def offer_document(
    organization: Organization, token: str, links: IssuerLinks
) -> dict[str, Any] | None:
    """The Credential Offer (§4.1.1) while it can be taken; None otherwise."""
    credential = db.session.scalar(
        select(Credential).where(
            Credential.offer_token == token, Credential.organization_id == organization.id
        )
    )
    if credential is None or credential.status is not CredentialStatus.OFFERED:
        return None
    if credential.code_used_at is not None or credential.pre_authorized_code_hash is None:
        return None
    state = issuer_state(token) if credential.issuer_state_hash is not None else None
    pre_authorized = pre_authorized_grant_allowed(credential)
    if state is None and not pre_authorized:
        return None
    return credential_offer(
        links.issuer(organization.id),
        [credential.configuration_id],
        pre_authorized_code(token) if pre_authorized else None,
        credential.tx_code_length,
        state,
    )


def pre_authorized_grant_allowed(credential: Credential) -> bool:
    """Whether the offer may name, and the token endpoint redeem, its pre-authorized code.

    A schema's ``authorization_code_by_mail`` promises that holding the link is not enough;
    the pre-authorized code travels in the link, so such an offer is taken only through the
    authorization code flow (and the code mailed to the recipient), or with a ``tx_code``
    staff hand over by another channel."""
    return not credential.schema.authorization_code_by_mail or credential.tx_code_hash is not None


# -- token endpoint ---------------------------------------------------------------------------


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


# -- nonce endpoint ---------------------------------------------------------------------------


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


# -- credential endpoint ----------------------------------------------------------------------


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
    token = _access_token(organization, authorization, dpop_proof, links)
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
    proofs = _checked_proofs(
        organization, request, credential, links.issuer(organization.id), current.batch_size
    )
    first = _take(credential)
    copies = _copies_to_sign(credential, len(proofs), current.max_copies)
    signed = [
        _sign(organization, credential, copy, proof.jwk, links, now)
        for copy, proof in zip(copies, proofs, strict=False)
    ]
    db.session.flush()
    if first:
        outbox.emit("credential.issued", credential, organization.id, credential.id)
    return signed


def _checked_proofs(
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


def _access_token(
    organization: Organization,
    authorization: tuple[str, str | None],
    dpop_proof: str | None,
    links: IssuerLinks,
) -> AccessToken:
    """RFC 6750 §2.1 Bearer, or RFC 9449 §7 DPoP: a token bound to a key is accepted only
    with the DPoP scheme and a proof made with that key for this request and this token."""
    scheme, value = authorization
    if not value:
        error = InvalidToken("An access token is required in the Authorization header")
        if settings.current().dpop_required:
            error.scheme = "DPoP"
        raise error
    token = db.session.scalar(
        select(AccessToken).where(AccessToken.token_hash == hash_secret(value))
    )
    if token is None or token.expires_at <= clock.now():
        raise _invalid_token("The access token is unknown or expired", scheme)
    if token.credential.organization_id != organization.id:
        raise _invalid_token("The access token was not issued by this credential issuer", scheme)
    if token.dpop_jkt is None:
        if scheme != "bearer":
            raise _invalid_token("This access token is a Bearer token", scheme)
        return token
    if scheme != "dpop":
        raise _invalid_token("This access token is DPoP-bound: use the DPoP scheme", "dpop")
    if dpop_proof is None:
        raise InvalidDpopProof("A DPoP proof is required with a DPoP-bound access token")
    try:
        proof = dpop.check_proof(
            dpop_proof,
            method="POST",
            url=credential_endpoint(links.issuer(organization.id)),
            access_token=value,
        )
    except DpopError as exc:
        raise (UseDpopNonce if exc.error == "use_dpop_nonce" else InvalidDpopProof)(
            exc.description
        ) from exc
    if proof is None or proof.jkt != token.dpop_jkt:
        raise InvalidDpopProof("The DPoP proof is made with another key than the token's")
    return token


def _invalid_token(description: str, scheme: str) -> InvalidToken:
    error = InvalidToken(description)
    if scheme == "dpop":
        error.scheme = "DPoP"
    return error


def _sign(
    organization: Organization,
    credential: Credential,
    copy: CredentialCopy,
    holder_jwk: dict[str, Any],
    links: IssuerLinks,
    now: datetime,
) -> str:
    """One copy in the schema's format: the credential's claims with fresh salts, bound to
    ``holder_jwk``, carrying the copy's status list entry."""
    validity = credential.schema.validity_days
    # The schema's validity counts from the signature; the JWKS keeps the signing key as long
    # as the last copy is valid. ISO/IEC 18013-5 has no open-ended MSO, so an mdoc without
    # validity_days is valid for MDOC_DEFAULT_DAYS.
    expires = now + timedelta(days=validity) if validity else None
    if expires is None and credential.schema.format == MSO_MDOC:
        expires = now + timedelta(days=MDOC_DEFAULT_DAYS)
    signing_key_id, signed = SIGNERS.get(credential.schema.format, _sign_sd_jwt_vc)(
        organization, credential, copy, holder_jwk, links, now, expires
    )
    copy.issued_at = now
    copy.holder_key_thumbprint = jwk_thumbprint(holder_jwk)
    if copy.number == 0:
        credential.issued_at = now
        credential.signing_key_id = signing_key_id
        credential.holder_key_thumbprint = copy.holder_key_thumbprint
    credential.expires_at = expires
    return signed


def _sign_sd_jwt_vc(
    organization: Organization,
    credential: Credential,
    copy: CredentialCopy,
    holder_jwk: dict[str, Any],
    links: IssuerLinks,
    now: datetime,
    expires: datetime | None,
) -> tuple[uuid.UUID | None, str]:
    key = keys.current_key(organization.id)
    issuer = links.issuer(organization.id)
    return key.id, sign_sd_jwt_vc(
        private_key=keys.private_key(key),
        kid=key.kid,
        x5c=certificates.x5c_for_signing(key, organization, issuer),
        vct_integrity=_vct_integrity(credential, links),
        issuer=issuer,
        vct=credential.vct,
        claims=claims_of(credential),
        holder_jwk=holder_jwk,
        status_uri=links.status_list_uri(organization.id, copy.status_list),
        status_idx=copy.status_index,
        issued_at=int(now.timestamp()),
        expires_at=int(expires.timestamp()) if expires else None,
    )


def _sign_mdoc(
    organization: Organization,
    credential: Credential,
    copy: CredentialCopy,
    holder_jwk: dict[str, Any],
    links: IssuerLinks,
    now: datetime,
    expires: datetime | None,
) -> tuple[uuid.UUID | None, str]:
    """Signed by the organization's document signer; the status entry names the CWT form of
    the same list."""
    schema = credential.schema
    signer = mdoc_signer.renewed_signer(organization, links.issuer(organization.id), now)
    problem = mdoc_signer.validity_problem(signer, now)
    if problem is not None:
        # No verifier would accept the mdoc: refused, and said to staff in the log (the
        # dashboard's mdoc signer page shows it too); the wallet is told only that it failed.
        log.warning("mdoc issuance refused for organization %s: %s", organization.id, problem)
        raise CredentialRequestDenied(
            "The issuer cannot sign this mdoc now: its document signer certificate is not valid"
        )
    uri = links.status_list_uri(organization.id, copy.status_list)
    return None, issue_mdoc(
        private_key=mdoc_signer.signing_key(signer),
        certificate=mdoc_signer.certificate(signer),
        doctype=schema.doctype or "",
        namespaces=_by_namespace(schema, claims_of(credential)),
        device_jwk=holder_jwk,
        signed=now,
        valid_until=expires or now + timedelta(days=MDOC_DEFAULT_DAYS),
        status={"status_list": {"idx": copy.status_index, "uri": uri}},
    )


def _by_namespace(schema: Schema, claims: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The claims as mdoc elements: each in its attribute's namespace, else the schema's."""
    namespace_of = {a["name"]: a.get("namespace") or schema.namespace for a in schema.attributes}
    elements: dict[str, dict[str, Any]] = {}
    for name, value in claims.items():
        elements.setdefault(namespace_of.get(name) or schema.namespace or "", {})[name] = value
    return elements


def _sign_vc_jwt(
    organization: Organization,
    credential: Credential,
    copy: CredentialCopy,
    holder_jwk: dict[str, Any],
    links: IssuerLinks,
    now: datetime,
    expires: datetime | None,
) -> tuple[uuid.UUID | None, str]:
    key = keys.current_key(organization.id)
    return key.id, sign_vc_jwt(
        private_key=keys.private_key(key),
        kid=key.kid,
        issuer=links.issuer(organization.id),
        credential_id=f"urn:uuid:{credential.id}" + (f"#{copy.number}" if copy.number else ""),
        types=list(credential.schema.types or ()),
        claims=claims_of(credential),
        holder_jwk=holder_jwk,
        issued_at=int(now.timestamp()),
        expires_at=int(expires.timestamp()) if expires else None,
        status_list_credential=links.status_list_uri(organization.id, copy.status_list)
        + BITSTRING_SUFFIX,
        status_idx=copy.status_index,
    )


MDOC_DEFAULT_DAYS = 365
# Each status list is served as a Bitstring Status List credential too, for VC-JWTs.
BITSTRING_SUFFIX = "/bitstring"
SIGNERS = {SD_JWT_VC: _sign_sd_jwt_vc, MSO_MDOC: _sign_mdoc, JWT_VC_JSON: _sign_vc_jwt}


def _vct_integrity(credential: Credential, links: IssuerLinks) -> str | None:
    """SD-JWT VC §6.5: the hash of the type metadata this deployment serves at the
    credential's ``vct``; None for a ``vct`` served elsewhere (a wallet fetches it there)."""
    schema = credential.schema
    if schema.vct != credential.vct or not type_metadata.served_here(schema, links.base_url):
        return None
    return type_metadata.integrity(type_metadata.document_bytes(schema))


# -- status lists -----------------------------------------------------------------------------


def status_list_token(organization: Organization, number: int, links: IssuerLinks) -> str | None:
    """The signed Token Status List ``number`` (its revoked bits as of now); None for a list
    that was never started. Signed on every fetch, so a revocation shows at once."""
    # Read-only (see keys.published_keys): without a key no credential was signed yet.
    key = keys.existing_key(organization.id)
    moment = _list_now(organization, number, key)
    if key is None or moment is None:
        return None
    issuer = links.issuer(organization.id)
    return sign_status_list(
        private_key=keys.private_key(key),
        kid=key.kid,
        x5c=certificates.stored_x5c(key, issuer),
        uri=links.status_list_uri(organization.id, number),
        revoked=moment.revoked,
        size=settings.STATUS_LIST_SIZE,
        issued_at=moment.issued_at,
        ttl=moment.ttl,
        expires_at=moment.expires_at,
        issuer=issuer,
    )


def status_list_cwt(organization: Organization, number: int, links: IssuerLinks) -> bytes | None:
    """The same list as ``status_list_token``, in its CWT form (Token Status List §5.2) for
    mdoc readers, signed by the organization's document signer; None for a list never started
    or an organization that never issued an mdoc (it has no document signer to sign with)."""
    signer = mdoc_signer.existing_signer(organization.id)
    moment = _list_now(organization, number, signer)
    if signer is None or moment is None:
        return None
    return sign_status_list_cwt(
        private_key=mdoc_signer.signing_key(signer),
        certificate_der=signer.document_signer_certificate,
        uri=links.status_list_uri(organization.id, number),
        revoked=moment.revoked,
        size=settings.STATUS_LIST_SIZE,
        issued_at=moment.issued_at,
        ttl=moment.ttl,
        expires_at=moment.expires_at,
    )


def iaca_certificate(organization: Organization, links: IssuerLinks) -> str:
    """The PEM of the organization's IACA root, made (with its document signer) on first use,
    so staff can give it to verifiers before the first mdoc is issued."""
    return mdoc_signer.iaca_pem(
        mdoc_signer.current_signer(organization, links.issuer(organization.id))
    )


def status_list_credential(
    organization: Organization, number: int, links: IssuerLinks
) -> str | None:
    """The same list as a ``BitstringStatusListCredential`` for W3C credentials, signed by
    the issuer key; None for a list never started or before the first key."""
    key = keys.existing_key(organization.id)
    moment = _list_now(organization, number, key)
    if key is None or moment is None:
        return None
    return sign_bitstring_status_list(
        private_key=keys.private_key(key),
        kid=key.kid,
        issuer=links.issuer(organization.id),
        uri=links.status_list_uri(organization.id, number) + BITSTRING_SUFFIX,
        revoked=moment.revoked,
        size=settings.STATUS_LIST_SIZE,
        issued_at=moment.issued_at,
        ttl_seconds=moment.ttl,
        expires_at=moment.expires_at,
    )


@dataclass(frozen=True)
class _ListNow:
    """What every form of a status list says when it is signed: its revoked bits, the moment
    (seconds), how long a reader may cache it and when it expires."""

    revoked: list[int]
    issued_at: int
    ttl: int
    expires_at: int


def _list_now(organization: Organization, number: int, signer: object | None) -> _ListNow | None:
    """List ``number`` as of now, for any of its three forms; None without the key that signs
    that form (``signer``) or for a list never started."""
    if signer is None or not list_started(organization.id, number):
        return None
    current = settings.current()
    now = int(clock.now().timestamp())
    return _ListNow(
        revoked=revoked_indices(organization.id, number),
        issued_at=now,
        ttl=current.status_list_ttl,
        expires_at=now + current.status_list_valid_seconds,
    )
