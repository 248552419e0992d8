"""Issued credentials (SD-JWT VC), offered to recipients and revocable through a status list.

Every secret a wallet presents (pre-authorized code, transaction code, access token, c_nonce)
is stored only as a hash, so a copy of the database redeems nothing. The offer token in the
person's links is stored in clear: like an individual's ID it is the link itself, and the
dashboard shows the link again.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Enum,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.didcomm import prism
from app.extensions import db
from app.models_base import IdMixin, TimestampMixin

if TYPE_CHECKING:
    from app.organizations.models import Organization
    from app.recipients.models import Recipient
    from app.schemas.models import Schema

TX_CODE_LENGTH = 6


OPENID4VCI = "openid4vci"
DIDCOMM = "didcomm"


class CredentialStatus(enum.StrEnum):
    """OFFERED -> ISSUED -> REVOKED; OFFERED -> EXPIRED (offer not taken in time);
    OFFERED -> REVOKED (offer withdrawn before a wallet took it)."""

    OFFERED = "OFFERED"
    ISSUED = "ISSUED"
    REVOKED = "REVOKED"
    EXPIRED = "EXPIRED"


class Credential(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "credentials"
    # Each credential owns one bit of one of its organization's status lists: the constraint,
    # not a prior read, decides two issuances drawing the same random index.
    __table_args__ = (
        UniqueConstraint("organization_id", "status_list", "status_index"),
        Index("ix_credentials_organization_id_status", "organization_id", "status"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    schema_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("schemas.id"))
    # No cascade: deleting a recipient must not free (and later reuse) a revoked credential's
    # status bit, which would make that credential read as valid again.
    recipient_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("recipients.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # [{"name", "value"}] as the staff sent them, values typed by the schema's attributes.
    claims: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The schema's vct when issued, so editing a schema never changes a credential's type.
    vct: Mapped[str] = mapped_column(String(500))
    # The status as last written; ``status`` reads an untaken offer past its expiry as EXPIRED
    # without a write, so reads (the offer page's poll) stay read-only.
    recorded_status: Mapped[CredentialStatus] = mapped_column(
        "status",
        Enum(
            CredentialStatus,
            native_enum=False,
            length=20,
            validate_strings=True,
            name="credential_status",
        ),
        default=CredentialStatus.OFFERED,
    )
    status_list: Mapped[int] = mapped_column(default=0)
    status_index: Mapped[int]
    # How the wallet takes it: "openid4vci", or "didcomm" (issue-credential 3.0, the Identus
    # wallets'), whose invitation's id is the offer's token.
    protocol: Mapped[str] = mapped_column(String(20), default=OPENID4VCI, server_default=OPENID4VCI)
    # The current offer: its token is the path of /o/<token> and /issuers/<org>/offers/<token>.
    offer_token: Mapped[str | None] = mapped_column(String(64), unique=True)
    pre_authorized_code_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    # The offer's issuer_state for the authorization code grant (derived like the code).
    issuer_state_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    code_used_at: Mapped[datetime | None]
    tx_code_hash: Mapped[str | None] = mapped_column(String(64))
    tx_code_failures: Mapped[int] = mapped_column(default=0)
    offer_expires_at: Mapped[datetime | None]
    issued_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    holder_key_thumbprint: Mapped[str | None] = mapped_column(String(64))
    signing_key_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("issuer_keys.id"), index=True
    )

    organization: Mapped[Organization] = relationship()
    schema: Mapped[Schema] = relationship()
    recipient: Mapped[Recipient] = relationship()

    @property
    def status(self) -> CredentialStatus:
        if self.recorded_status is CredentialStatus.OFFERED and self.offer_expired(clock.now()):
            return CredentialStatus.EXPIRED
        return self.recorded_status

    def offer_expired(self, now: datetime) -> bool:
        return self.offer_expires_at is not None and self.offer_expires_at <= now

    @property
    def tx_code_length(self) -> int | None:
        """The length of the transaction code the wallet must ask for, if one was set."""
        return TX_CODE_LENGTH if self.tx_code_hash else None

    @property
    def configuration_id(self) -> str:
        """Its credential configuration in the issuer metadata: one per schema."""
        return str(self.schema_id)


class CredentialCopy(IdMixin, db.Model):
    """One signed copy of a credential: its own status list entry and holder key.

    A wallet takes several copies in one batch, or in later requests on its access token
    (OpenID4VCI 1.0 §8), so a verifier cannot link presentations by key or status index.
    Copy 0 is made with the offer and holds the entry the offer reserved (the credential's
    own ``status_list``/``status_index``); its holder key is filled in when it is signed.
    Every entry an organization hands out has a row here, so the unique constraint decides
    every race for an index. Revoking the credential sets the bit of every copy.
    """

    __tablename__ = "credential_copies"
    __table_args__ = (
        UniqueConstraint("organization_id", "status_list", "status_index"),
        UniqueConstraint("credential_id", "number"),
    )

    credential_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("credentials.id", ondelete="CASCADE"), index=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    number: Mapped[int]
    status_list: Mapped[int]
    status_index: Mapped[int]
    holder_key_thumbprint: Mapped[str | None] = mapped_column(String(64))
    issued_at: Mapped[datetime | None]


class IssuerKey(IdMixin, db.Model):
    """An organization's ES256 signing key: the private half sealed with AES-GCM in
    ``sealed_private_key``, or kept in a PKCS#11 token under ``token_key_label``."""

    __tablename__ = "issuer_keys"
    # One current key per organization: concurrent first uses cannot both create one.
    __table_args__ = (
        Index(
            "uq_issuer_keys_current",
            "organization_id",
            unique=True,
            sqlite_where=text("retired_at IS NULL"),
            postgresql_where=text("retired_at IS NULL"),
        ),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    kid: Mapped[str] = mapped_column(String(64))
    public_jwk: Mapped[dict[str, Any]] = mapped_column(JSON)
    sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    token_key_label: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime]
    retired_at: Mapped[datetime | None]
    # The x5c chain credentials signed with this key carry (HAIP 1.0 §6.1.1): PEM, the issuing
    # certificate first, then any intermediates; never the root. None until the first
    # signature makes one (or staff upload one).
    certificate_chain_pem: Mapped[str | None] = mapped_column(Text)


class PrismIssuer(IdMixin, db.Model):
    """An organization's issuer DID for credentials issued over DIDComm: a long-form did:prism
    (``app.didcomm.prism``) with a secp256k1 ``master-0`` and an ISSUING key ``issuing-0``.

    The DID is its own document (the long form carries the operation that would create it), so
    only the ISSUING key's private half is kept: sealed like an issuer key, or in the PKCS#11
    token under ``token_key_label``. The master key is thrown away once the DID is made:
    nothing here updates or deactivates the DID, and a DID never published needs no master
    signature. One per organization: the unique constraint decides a race to make it.
    """

    __tablename__ = "prism_issuers"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), unique=True
    )
    did: Mapped[str] = mapped_column(Text, unique=True)
    sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    token_key_label: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=clock.now)

    ISSUING_KEY_ID = "issuing-0"

    @property
    def short_form(self) -> str:
        """``did:prism:<hash>``: the DID as it would be published, and as verifiers name it."""
        return self.did.rsplit(":", 1)[0]

    @property
    def issuing_kid(self) -> str:
        """The key id credentials and status lists are signed under (``<long DID>#issuing-0``)."""
        return f"{self.did}#{self.ISSUING_KEY_ID}"

    def document(self) -> dict[str, Any]:
        """The DID document, resolved from the long form itself."""
        return prism.resolve(self.did)


class IssuerRoot(IdMixin, db.Model):
    """An organization's issuer root certificate: the trust anchor its issuing certificates
    chain to. Made by the deployment (its private key sealed, or in the PKCS#11 token, to sign
    issuing certificates), or uploaded from the organization's CA (no private key here).
    Replaced roots stay: credentials signed under them still chain to them."""

    __tablename__ = "issuer_roots"
    __table_args__ = (
        Index(
            "uq_issuer_roots_current",
            "organization_id",
            unique=True,
            sqlite_where=text("retired_at IS NULL"),
            postgresql_where=text("retired_at IS NULL"),
        ),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    certificate_pem: Mapped[str] = mapped_column(Text)
    sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    token_key_label: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime]
    retired_at: Mapped[datetime | None]

    @property
    def generated(self) -> bool:
        """Whether this deployment holds the root's key (it made it) and can issue under it."""
        return self.sealed_private_key is not None or self.token_key_label is not None


class AccessToken(IdMixin, db.Model):
    """An access token from the token endpoint for one credential (its own): it serves
    credential requests until it expires, each for more copies (OpenID4VCI 1.0 §8)."""

    __tablename__ = "issuer_access_tokens"

    credential_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("credentials.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime]
    # RFC 9449 §6: the thumbprint of the DPoP key the token is bound to (cnf.jkt); None for
    # a Bearer token.
    dpop_jkt: Mapped[str | None] = mapped_column(String(64))
    # OpenID4VCI 1.0 §6.2: the credential_identifier handed out when the wallet asked with
    # authorization_details.
    credential_identifier: Mapped[str | None] = mapped_column(String(64))

    credential: Mapped[Credential] = relationship()


class CNonce(db.Model):
    """A spent c_nonce (OpenID4VCI 1.0 §7), kept until it lapses so it cannot be spent again.

    Nonces are handed out without a row (``app.oid4vci.nonce``): a row is written only by a
    Credential Request, which needs an access token.
    """

    __tablename__ = "issuer_nonces"

    nonce_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    expires_at: Mapped[datetime] = mapped_column(index=True)


class AuthorizationRequest(IdMixin, db.Model):
    """A pushed authorization request (RFC 9126) for one offered credential, then the
    authorization code the person's consent turns it into. Both secrets stored hashed."""

    __tablename__ = "issuer_authorization_requests"

    credential_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("credentials.id", ondelete="CASCADE"), index=True
    )
    request_uri_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_id: Mapped[str] = mapped_column(String(255))
    redirect_uri: Mapped[str] = mapped_column(Text)
    code_challenge: Mapped[str] = mapped_column(String(128))
    state: Mapped[str | None] = mapped_column(Text)
    # True when the credential was asked for with authorization_details (RFC 9396), which
    # the token response then echoes with credential_identifiers (OpenID4VCI 1.0 §6.2).
    by_authorization_details: Mapped[bool] = mapped_column(default=False)
    # RFC 9449 §10: the DPoP key of the pushed request; the token request must use it too.
    dpop_jkt: Mapped[str | None] = mapped_column(String(64))
    # The one-time code mailed to the recipient (a keyed hash), when the schema asks for one.
    mail_code_hash: Mapped[str | None] = mapped_column(String(64))
    mail_code_failures: Mapped[int] = mapped_column(default=0)
    expires_at: Mapped[datetime] = mapped_column(index=True)
    approved_at: Mapped[datetime | None]
    code_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    code_expires_at: Mapped[datetime | None]
    code_used_at: Mapped[datetime | None]

    credential: Mapped[Credential] = relationship()


class DpopProofSeen(db.Model):
    """A DPoP proof already used (RFC 9449 §11.1), kept until it would be too old anyway:
    the primary key decides two concurrent uses of the same proof."""

    __tablename__ = "issuer_dpop_proofs"

    proof_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(index=True)


class MdocSigner(IdMixin, db.Model):
    """An organization's mdoc certificates (ISO/IEC 18013-5 Annex B): its IACA root and the
    document signer the root certified, each private key kept like an issuer key (sealed, or
    in the PKCS#11 token). One per organization, made when first needed."""

    __tablename__ = "mdoc_signers"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), unique=True
    )
    iaca_certificate: Mapped[bytes] = mapped_column(LargeBinary)  # DER
    iaca_sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    iaca_token_key_label: Mapped[str | None] = mapped_column(String(128))
    document_signer_certificate: Mapped[bytes] = mapped_column(LargeBinary)  # DER
    sealed_private_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    token_key_label: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime]


class UploadStatus(enum.StrEnum):
    """QUEUED -> RUNNING -> FINISHED; a worker that dies leaves RUNNING until its lease ends."""

    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


class CredentialUpload(IdMixin, db.Model):
    """A CSV file of credentials to issue, checked in the request and issued by a job.

    The rows wait here, sealed (they hold claim values), until the job has issued them; the
    results (each credential, its one-time code, what became of its email) are sealed too and
    lose their codes once shown. ``position`` is how many rows the job has dealt with: each
    batch advances it with a conditional UPDATE in the batch's own transaction, so a second
    worker handed the same upload, or a job run again after a crash, never issues a row twice.
    ``file_sha256`` names a repeat of the same file in the organization.
    """

    __tablename__ = "credential_uploads"
    __table_args__ = (
        Index(
            "ix_credential_uploads_organization_id_file_sha256", "organization_id", "file_sha256"
        ),
        Index("ix_credential_uploads_status", "status"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    # Who sent it, as the audit trail names them (the job issues in their name).
    uploaded_by_type: Mapped[str] = mapped_column(String(20))
    uploaded_by_id: Mapped[str] = mapped_column(String(64))
    uploaded_by: Mapped[str] = mapped_column(String(320))
    client_ip: Mapped[str | None] = mapped_column(String(64))
    file_name: Mapped[str] = mapped_column(String(255))
    file_sha256: Mapped[str] = mapped_column(String(64))
    # Where the offers' links point, as the request saw the deployment.
    base_url: Mapped[str] = mapped_column(Text)
    status: Mapped[UploadStatus] = mapped_column(
        Enum(
            UploadStatus,
            native_enum=False,
            length=20,
            validate_strings=True,
            name="upload_status",
        ),
        default=UploadStatus.QUEUED,
    )
    rows_total: Mapped[int]
    position: Mapped[int] = mapped_column(default=0)
    rows_issued: Mapped[int] = mapped_column(default=0)
    rows_failed: Mapped[int] = mapped_column(default=0)
    # Times a worker took the upload; past ``MAX_ATTEMPTS`` without finishing it is given up.
    attempts: Mapped[int] = mapped_column(default=0)
    started_at: Mapped[datetime | None]
    updated_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    leased_until: Mapped[datetime | None]
    # Why the rest was not issued, when a worker gave up before the last row.
    stopped: Mapped[str | None] = mapped_column(Text)
    sealed_rows: Mapped[bytes | None] = mapped_column(LargeBinary)
    sealed_results: Mapped[bytes | None] = mapped_column(LargeBinary)
