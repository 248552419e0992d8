"""Re-seal what is stored under ``ISSUER_KEY_SECRET`` when that secret changes.

Six things depend on it: the issuing private keys (issuer signing keys, issuer root keys,
mdoc IACA and document signer keys, the ISSUING keys of organizations' did:prism issuers), organizations' verifier identity keys, their DIDComm
keys, webhook signing secrets and verifications' link secrets (``customer_sig``) are sealed under keys derived from it, and each open offer's pre-authorized code is an
HMAC under a key derived from it (the database holds the code's hash). ``reseal`` opens every sealed value with the
previous secret and seals it again under the running configuration's, and recomputes the code
hashes of open offers, in one transaction: either all of it moves to the new secret or none.

Running it twice is harmless: a value that already opens under the new secret is left as it
is. Keys kept in a PKCS#11 token are not sealed and are left alone. An offer with a
``tx_code`` cannot move (only the code's keyed hash is stored, never the code), nor can a code
a wallet already fetched; both are counted so staff can send those offers again.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from app import clock
from app.didcomm_agent import settings as didcomm_settings
from app.didcomm_agent.identities import open_keys, seal_keys
from app.didcomm_agent.models import DidcommIdentity
from app.extensions import db
from app.issuance import settings as issuing_settings
from app.issuance.models import (
    Credential,
    CredentialStatus,
    IssuerKey,
    IssuerRoot,
    MdocSigner,
    PrismIssuer,
)
from app.issuance.operations import pre_authorized_code
from app.oid4vci.keys import SealedKeyError, key_encryption_key, open_private_key
from app.oid4vci.keys import seal_private_key as seal_key
from app.tokens import hash_secret
from app.verifications import link_secret
from app.verifications.models import Verification
from app.verifier_identity.models import GoogleWalletCertificate, VerifierKey
from app.webhooks import settings as webhook_settings
from app.webhooks.models import WebhookEndpoint
from app.webhooks.sealing import SealedSecretError, open_sealed, seal


class ResealError(ValueError):
    """A sealed value opens under neither secret: nothing was changed."""


@dataclass(frozen=True)
class ResealReport:
    issuer_keys: int
    issuer_keys_already_sealed: int
    issuer_keys_in_token: int
    mdoc_keys: int
    prism_keys: int
    verifier_keys: int
    didcomm_keys: int
    webhook_secrets: int
    link_secrets: int
    offer_codes: int
    offers_with_tx_code: int

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def reseal(previous_secret: str) -> ResealReport:
    """Move every sealed value from ``previous_secret`` to the configured secret (flushed, not
    committed: the caller commits once). Raises ``ResealError`` naming the first value that
    opens under neither."""
    if not previous_secret:
        raise ResealError("the previous secret is empty")
    new_issuing = issuing_settings.current()
    if previous_secret == new_issuing.secret:
        raise ResealError("the previous secret is the one configured now: nothing to re-seal")
    old_key_kek = key_encryption_key(previous_secret)
    moved, already, in_token = _reseal_issuer_keys(old_key_kek, new_issuing.kek)
    mdoc_moved, mdoc_already, mdoc_in_token = _reseal_mdoc_keys(old_key_kek, new_issuing.kek)
    prism_moved, prism_already, prism_in_token = _reseal_prism_keys(old_key_kek, new_issuing.kek)
    verifier_keys = _reseal_verifier_keys(old_key_kek, new_issuing.kek)
    didcomm_keys = _reseal_didcomm_keys(previous_secret)
    secrets = _reseal_webhook_secrets(previous_secret)
    link_secrets = _reseal_link_secrets(previous_secret)
    codes, with_tx_code = _rehash_open_offer_codes()
    db.session.flush()
    return ResealReport(
        issuer_keys=moved,
        issuer_keys_already_sealed=already + mdoc_already + prism_already,
        issuer_keys_in_token=in_token + mdoc_in_token + prism_in_token,
        mdoc_keys=mdoc_moved,
        prism_keys=prism_moved,
        verifier_keys=verifier_keys,
        didcomm_keys=didcomm_keys,
        webhook_secrets=secrets,
        link_secrets=link_secrets,
        offer_codes=codes,
        offers_with_tx_code=with_tx_code,
    )


def _reseal_issuer_keys(old_kek: bytes, new_kek: bytes) -> tuple[int, int, int]:
    """Issuer signing keys and the organizations' issuer root keys (which sign issuing
    certificates), counted together; an uploaded root has no key here and is not counted."""
    moved = already = in_token = 0
    signing = db.session.scalars(select(IssuerKey).order_by(IssuerKey.created_at))
    roots = db.session.scalars(select(IssuerRoot).order_by(IssuerRoot.created_at))
    for key in [*signing, *roots]:
        name = (
            f"issuer key {key.kid}" if isinstance(key, IssuerKey) else f"issuer key root {key.id}"
        )
        if key.sealed_private_key is None:
            in_token += key.token_key_label is not None
            continue
        resealed = _resealed_key(key.sealed_private_key, old_kek, new_kek, name)
        if resealed is None:
            already += 1
        else:
            key.sealed_private_key = resealed
            moved += 1
    return moved, already, in_token


def _reseal_mdoc_keys(old_kek: bytes, new_kek: bytes) -> tuple[int, int, int]:
    """Each organization's mdoc IACA key and document signer key (``MdocSigner``), made like
    issuer keys: moved, already under the new secret, in the token. An IACA of the
    organization's own has no key here and is not counted."""
    moved = already = in_token = 0
    for signer in db.session.scalars(select(MdocSigner).order_by(MdocSigner.created_at)):
        held = (
            ("iaca_sealed_private_key", "iaca_token_key_label", "IACA"),
            ("sealed_private_key", "token_key_label", "document signer"),
        )
        for column, label_column, role in held:
            sealed = getattr(signer, column)
            if sealed is None:
                in_token += getattr(signer, label_column) is not None
                continue
            name = f"the mdoc {role} key of organization {signer.organization_id}"
            resealed = _resealed_key(sealed, old_kek, new_kek, name)
            if resealed is None:
                already += 1
            else:
                setattr(signer, column, resealed)
                moved += 1
    return moved, already, in_token


def _reseal_prism_keys(old_kek: bytes, new_kek: bytes) -> tuple[int, int, int]:
    """The ISSUING key of each organization's did:prism issuer (``PrismIssuer``): moved,
    already under the new secret, in the token."""
    moved = already = in_token = 0
    for issuer in db.session.scalars(select(PrismIssuer).order_by(PrismIssuer.created_at)):
        if issuer.sealed_private_key is None:
            in_token += issuer.token_key_label is not None
            continue
        name = f"the did:prism issuing key of organization {issuer.organization_id}"
        resealed = _resealed_key(issuer.sealed_private_key, old_kek, new_kek, name)
        if resealed is None:
            already += 1
        else:
            issuer.sealed_private_key = resealed
            moved += 1
    return moved, already, in_token


def _resealed_key(sealed: bytes, old_kek: bytes, new_kek: bytes, name: str) -> bytes | None:
    """``sealed`` sealed again under ``new_kek``, or None when it already is; a key that
    opens under neither stops the whole re-seal (``ResealError`` naming it)."""
    try:
        open_private_key(sealed, new_kek)
        return None
    except SealedKeyError:
        pass
    try:
        private = open_private_key(sealed, old_kek)
    except SealedKeyError:
        raise ResealError(f"{name} opens under neither the previous nor the new secret") from None
    return seal_key(private, new_kek)


def _reseal_verifier_keys(old_kek: bytes, new_kek: bytes) -> int:
    moved = 0
    for key in db.session.scalars(select(VerifierKey).order_by(VerifierKey.created_at)):
        name = f"verifier identity key {key.id}"
        resealed = _resealed_key(key.sealed_private_key, old_kek, new_kek, name)
        if resealed is not None:
            key.sealed_private_key = resealed
            moved += 1
    # The Google Wallet registrar leaves' keys are verifier identity keys too.
    for leaf in db.session.scalars(
        select(GoogleWalletCertificate).order_by(GoogleWalletCertificate.issued_at)
    ):
        name = f"Google Wallet leaf key of organization {leaf.organization_id}"
        resealed = _resealed_key(leaf.sealed_private_key, old_kek, new_kek, name)
        if resealed is not None:
            leaf.sealed_private_key = resealed
            moved += 1
    return moved


def _reseal_didcomm_keys(previous_secret: str) -> int:
    """Each organization's DIDComm private keys (one sealed document per DID)."""
    old_kek = didcomm_settings.key_encryption_key(previous_secret)
    new_kek = didcomm_settings.current().kek
    moved = 0
    for identity in db.session.scalars(
        select(DidcommIdentity).order_by(DidcommIdentity.created_at)
    ):
        try:
            open_keys(identity.sealed_keys, new_kek)
            continue
        except ValueError:
            pass
        try:
            keys = open_keys(identity.sealed_keys, old_kek)
        except ValueError:
            raise ResealError(
                f"the DIDComm keys of {identity.did[:40]}... open under neither the previous "
                "nor the new secret"
            ) from None
        identity.sealed_keys = seal_keys(keys, new_kek)
        moved += 1
    return moved


def _reseal_webhook_secrets(previous_secret: str) -> int:
    old_kek = webhook_settings.WebhookSettings(secret=previous_secret, allow_private=False).kek
    new_kek = webhook_settings.current().kek
    moved = 0
    for endpoint in db.session.scalars(select(WebhookEndpoint)):
        for column in ("sealed_secret", "previous_sealed_secret"):
            sealed = getattr(endpoint, column)
            if sealed is None or _opens(sealed, new_kek):
                continue
            if not _opens(sealed, old_kek):
                raise ResealError(
                    f"a signing secret of webhook endpoint {endpoint.id} opens under neither "
                    "the previous nor the new secret"
                )
            setattr(endpoint, column, seal(open_sealed(sealed, old_kek), new_kek))
            moved += 1
    return moved


def _reseal_link_secrets(previous_secret: str) -> int:
    """Each ``signed`` verification's link secret, so the signatures its backend makes keep
    opening individuals."""
    old_kek = link_secret.key_encryption_key(previous_secret)
    new_kek = link_secret.current_kek()
    moved = 0
    held = select(Verification).where(Verification.sealed_link_secret.is_not(None))
    for verification in db.session.scalars(held.order_by(Verification.created_at)):
        sealed = verification.sealed_link_secret
        assert sealed is not None
        try:
            link_secret.open_sealed(sealed, new_kek)
            continue
        except link_secret.SealedLinkSecretError:
            pass
        try:
            plain = link_secret.open_sealed(sealed, old_kek)
        except link_secret.SealedLinkSecretError:
            raise ResealError(
                f"the link secret of verification {verification.id} opens under neither the "
                "previous nor the new secret"
            ) from None
        verification.sealed_link_secret = link_secret.seal(plain, new_kek)
        moved += 1
    return moved


def _opens(sealed: bytes, kek: bytes) -> bool:
    try:
        open_sealed(sealed, kek)
    except SealedSecretError:
        return False
    return True


def _rehash_open_offer_codes() -> tuple[int, int]:
    """Open offers get the hash of the code the new secret derives, so a link not yet opened
    in a wallet keeps working; those with a ``tx_code`` are counted to be sent again."""
    now = clock.now()
    open_offers = db.session.scalars(
        select(Credential).where(
            Credential.recorded_status == CredentialStatus.OFFERED,
            Credential.pre_authorized_code_hash.is_not(None),
            Credential.code_used_at.is_(None),
            Credential.offer_token.is_not(None),
        )
    )
    codes = with_tx_code = 0
    for credential in open_offers:
        if credential.offer_expires_at is not None and credential.offer_expires_at <= now:
            continue
        if credential.tx_code_hash is not None:
            with_tx_code += 1
            continue
        credential.pre_authorized_code_hash = hash_secret(
            pre_authorized_code(credential.offer_token)
        )
        codes += 1
    return codes, with_tx_code
