"""Each organization's did:prism issuer: the DID credentials issued over DIDComm name as
``iss``, the ES256K signatures it makes, and its StatusList2021 revocation lists.

Hyperledger Identus wallets resolve only did:peer and did:prism (Castor.ts), so a credential
for the Socious Wallet is issued under a long-form did:prism made here on first use: a
secp256k1 ``master-0`` and an ISSUING key ``issuing-0`` (assertionMethod), as the cloud agent
makes an issuer DID. The ISSUING key is kept like every issuer key (``keys.make_private_key``'s
rule): in the PKCS#11 token under ``KEY_STORE=pkcs11``, provided the token makes secp256k1
keys (an optional curve in PKCS#11), sealed under ``ISSUER_KEY_SECRET`` otherwise. The master
key is not kept (see ``PrismIssuer``).

The Identus SDK 7.0.0 rejects a secp256k1 key whose x or y coordinate begins with a zero byte
(``prism.sdk_accepts``), about one key in 128: such a key is drawn again, in the token too.

Each credential's ``credentialStatus`` names a bit of ``<issuer>/credential-status/<n>``: list
``n`` of the organization's status lists, the same bits its Token Status List ``n`` carries,
as a ``StatusList2021Credential`` signed by the DID, the form Identus verifiers read.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.didcomm import prism
from app.extensions import db
from app.hardware_keys import SECP256K1, CurveNotSupported, TokenKeyError, open_token
from app.issuance import keys, settings
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, PrismIssuer
from app.issuance.own import list_started, revoked_indices
from app.oid4vci.keys import seal_private_key
from app.statuslist import statuslist2021
from app.statuslist.ldproof import secp256k1_key_uri, sign_secp256k1_2019

ISSUING_KEY_ID = PrismIssuer.ISSUING_KEY_ID
MASTER_KEY_ID = "master-0"
# A token key the SDK would reject is destroyed and drawn again; one key in 128 is, so this
# many in a row means a broken token, not bad luck.
MAX_TOKEN_DRAWS = 32

KeyMaker = Callable[[], ec.EllipticCurvePrivateKey]


def _new_secp256k1() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256K1())


def prism_issuer_of(organization_id: Any, *, new_key: KeyMaker = _new_secp256k1) -> PrismIssuer:
    """The organization's did:prism issuer, made on first use. Two first uses at once: the
    unique organization lets one insert win and the other reads the winner's row.
    ``new_key`` draws the keys made outside a token."""
    issuer = existing_prism_issuer(organization_id)
    if issuer is not None:
        return issuer
    try:
        with db.session.begin_nested():
            issuer = _new_issuer(organization_id, new_key)
    except IntegrityError:
        issuer = existing_prism_issuer(organization_id)
        if issuer is None:
            raise
    return issuer


def existing_prism_issuer(organization_id: Any) -> PrismIssuer | None:
    """The organization's did:prism issuer, or None before its first use; never makes one:
    the issuer metadata and the status list read only (see ``keys.published_keys``)."""
    return db.session.scalar(
        select(PrismIssuer).where(PrismIssuer.organization_id == organization_id)
    )


def _new_issuer(organization_id: Any, new_key: KeyMaker) -> PrismIssuer:
    issuing, stored = _issuing_key(new_key)
    made = prism.make(
        {MASTER_KEY_ID: prism.MASTER, ISSUING_KEY_ID: prism.ISSUING},
        new_key=new_key,
        given={ISSUING_KEY_ID: issuing},
    )
    issuer = PrismIssuer(
        organization_id=organization_id, did=made.did, created_at=clock.now(), **stored
    )
    db.session.add(issuer)
    db.session.flush()
    return issuer


def _issuing_key(new_key: KeyMaker) -> tuple[ec.EllipticCurvePrivateKey, dict[str, Any]]:
    """A secp256k1 key the SDK accepts, and how it is stored: in the token when the
    deployment keeps issuer keys there and the token makes secp256k1 keys, sealed otherwise."""
    current = settings.current()
    if current.key_store == "pkcs11" and current.token is not None:
        token = open_token(current.token)
        try:
            for _ in range(MAX_TOKEN_DRAWS):
                label = f"verity-prism-issuer-{uuid.uuid4()}"
                key = token.generate_signing_key(label, curve=SECP256K1)
                if prism.sdk_accepts(key.public_key()):
                    return key, {"token_key_label": label}
                token.destroy_key(label)
        except CurveNotSupported:
            pass  # kept sealed, as by a deployment without a token
        else:
            raise TokenKeyError("the token made no secp256k1 key the Identus SDK accepts")
    key = new_key()
    while not prism.sdk_accepts(key.public_key()):
        key = new_key()
    return key, {"sealed_private_key": seal_private_key(key, current.kek)}


def signing_key(issuer: PrismIssuer) -> ec.EllipticCurvePrivateKey:
    """The ISSUING key: the token's (which signs inside the token), or the sealed key opened
    (fails loudly under another ``ISSUER_KEY_SECRET``)."""
    return keys.open_stored_key(
        f"the did:prism issuing key of organization {issuer.organization_id}",
        issuer.token_key_label,
        issuer.sealed_private_key,
    )


def sign_credential(organization_id: Any, payload: dict[str, Any]) -> str:
    """``payload`` as a compact JWS by the organization's DID (made on first use): header
    ``{"alg": "ES256K", "typ": "JWT", "kid": "<long DID>#issuing-0"}``, the signature low-S."""
    issuer = prism_issuer_of(organization_id)
    return prism.sign_es256k(payload, signing_key(issuer), issuer.issuing_kid)


def status_entry(credential: Credential, base_url: str | None = None) -> dict[str, Any]:
    """The ``credentialStatus`` of ``credential``: a revocation ``StatusList2021Entry`` for
    its own ``status_list``/``status_index`` in ``<issuer>/credential-status/<n>`` under
    ``base_url`` (``PUBLIC_URL`` unless given)."""
    links = IssuerLinks(base_url or settings.current().public_url)
    uri = links.credential_status_uri(credential.organization_id, credential.status_list)
    return statuslist2021.entry(uri, credential.status_index)


def status_list_document(
    organization_id: uuid.UUID, number: int, links: IssuerLinks
) -> dict[str, Any] | None:
    """List ``number`` as a ``StatusList2021Credential`` signed by the organization's DID, its
    revoked bits as of now; None for a list never started, or before the DID was made (no
    credential names a list of it then). Reads only."""
    issuer = existing_prism_issuer(organization_id)
    if issuer is None or not list_started(organization_id, number):
        return None
    now = clock.now().replace(microsecond=0)
    valid = timedelta(seconds=settings.current().status_list_valid_seconds)
    document = statuslist2021.unsigned_list(
        uri=links.credential_status_uri(organization_id, number),
        issuer=issuer.did,
        revoked=revoked_indices(organization_id, number),
        size=settings.STATUS_LIST_SIZE,
        issued_at=now,
        expires_at=now + valid,
    )
    created = now.isoformat().replace("+00:00", "Z")
    return sign_secp256k1_2019(document, signing_key(issuer), list_key_uri(issuer), created)


def list_key_uri(issuer: PrismIssuer) -> str:
    """The ``verificationMethod`` of the issuer's lists: its ISSUING key (the one its
    credentials name in ``kid``) in the data: URI the cloud agent writes, the only form the
    Identus SDK's ``isCredentialRevoked`` reads. The DID URL it named before says more, but
    every verifier built on the SDK refused the lists for it."""
    method = next(
        m for m in issuer.document()["verificationMethod"] if m["id"] == issuer.issuing_kid
    )
    return secp256k1_key_uri(method["publicKeyJwk"])
