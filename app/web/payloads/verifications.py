"""Verifications: create and change (JSON API and the dashboard's verification form), the
answer, and the issuers seen and trusted."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.verifications.conditions import OPERATORS
from app.verifications.models import (
    DEFAULT_RETENTION_DAYS,
    DEFAULT_STATUS_CHECK_HOURS,
    MAX_RETENTION_DAYS,
    MAX_STATUS_CHECK_HOURS,
)
from app.web.payloads.base import (
    DESCRIPTION_TRANSLATIONS,
    PURPOSE_LENGTH,
    Body,
    Name,
    Out,
    Text,
    language_map,
)

ANONYMOUS_OPEN = (
    "Who may open an individual without the organization's integration key: "
    '"allowed" (the default: anyone who knows the verification ID may open any customer ID, '
    'so use unguessable customer IDs or check opened_by), "signed" (such an open must carry '
    "customer_sig, an HMAC of the customer ID under the verification's link secret; missing "
    'or wrong is 401 CUSTOMER_SIG_INVALID) or "refused" (401 APIKEY_REQUIRED; the backend '
    "opens with its apikey). The no-code link /connect/redirect/{verification_id} follows "
    "the same rule."
)
LINK_SECRET = (
    'Only in the answer that turns anonymous_open "signed" on and in the answer of POST '
    "/verifications/{id}/link-secret: the key of customer_sig (HMAC-SHA256 keyed with this "
    "text's UTF-8 bytes over the customer ID's UTF-8 bytes, base64url without padding). "
    "Stored sealed, never shown again; a rotation or leaving signed makes it stop working."
)
ZK = (
    "Ask the one age claim (age_over_NN, in claims or in one EQUAL condition on a boolean) as "
    "a zero-knowledge proof over the ISO mdoc (Longfellow, DCQL format mso_mdoc_zk, over the "
    "Digital Credentials API): the organization learns the claim, the issuer, the document "
    "type and the time, nothing else of the licence. Only on an mso_mdoc schema (else 400 "
    "ZK_NOT_AVAILABLE); another claim or condition is 400 ZK_CLAIM_NOT_PROVABLE; a deployment "
    "without the zk extra answers 503 NOT_CONFIGURED."
)


AnonymousOpen = Literal["allowed", "signed", "refused"]


CONDITION_VALUE = (
    "Read by the type of the schema attribute the condition names, when the verification is "
    'saved: text is accepted for every type ("17", "true", "2000-01-31"). NUMBER takes '
    'a number or its text; BOOLEAN true/false or "true"/"false"; DATETIME a full-date '
    "(2000-01-31) or an RFC 3339 date-time (no offset: UTC); URL an absolute URL; EMAIL an "
    "address (compared ignoring case); TEXT text (a number or boolean reads as its JSON text). "
    "IN takes a list of such values; AGE_AT_LEAST a whole number of years (0 to 150) and reads "
    "the claim as a date; EXISTS no value. BIGGER and SMALLER order NUMBER and DATETIME "
    "attributes; on a TEXT attribute, or a path below a schema attribute (which has no declared "
    "type and reads as TEXT), they compare by what the value reads as, a number or a date. A "
    "value that cannot be read so is a 400 INVALID_REQUEST naming the condition "
    "(attributes[i]). Presented claims are read by the same type and compared as such, never "
    "by their text; a full-date against a date-time compares calendar days."
)


RETENTION_DAYS = (
    "How many days after the decision the received claims are kept; then they are deleted and "
    "the outcome and the attempts stay. 0 keeps no claims at all: the decision only."
)
TRUST_SOURCES = (
    "Ids of the organization's trust sources (GET /trust/sources) whose certificates this "
    "verification trusts: an x5c issuer or mdoc document signer must chain to one they list "
    "as granted now. Empty or absent: none (trusted_issuers and the deployment's anchors "
    "decide, as before)."
)
TRUSTED_ISSUERS = (
    "The issuers this verification accepts: issuer identifiers (an https iss, a DID), PEM "
    "certificates or SHA-256 certificate fingerprints (an x5c chain must contain one). An "
    'empty list is an explicit choice: any issuer whose signature verifies (trust "any"). '
    "Left out when creating: a verification of the organization's own SD-JWT VC schema starts "
    "pinned to the organization's own issuer, <PUBLIC_URL>/issuers/<organization id>; on "
    'another schema it starts empty (any issuer, shown as trust "any"), so name the issuers '
    "or choose trust_sources."
)
RETURN_URL = (
    "Where the person's page sends the person back to the organization's site once there is "
    "an outcome (a Continue or Return button): an http(s) address. It may carry "
    "{individual_id} and {customer_id}, replaced (percent-encoded) by the individual's ID and "
    "the customer_id the backend opened it with, so the site knows who came back "
    "(https://shop.example/verified?customer={customer_id}); no other placeholder is taken, "
    "and none in the host. Without placeholders the address is used as given. The address "
    "is only a pointer anyone could type: take the decision from the authenticated lookup "
    "GET /verifications/{verification_id}/individuals/{customer_id}."
)
TRUST = (
    '"any" when trusted_issuers and trust_sources are both empty: any issuer whose signature '
    'verifies is accepted, a self-made did:jwk included. "pinned" otherwise: only the issuers '
    "listed, or certificates the chosen trust sources grant."
)
STATUS_CHECK_HOURS = (
    "How often, in hours, a VERIFIED individual's credential status (its status list entry) "
    "is checked again while its claims are kept; a withdrawn credential sets the individual's "
    "revoked_at. 0: checked only when presented."
)


class Condition(Body):
    """One condition on a presented claim. Give the attribute as ``attribute_id`` or
    ``name`` (both are accepted, the same attribute if both are given)."""

    attribute_id: str | None = Field(
        default=None,
        max_length=200,
        description="The schema attribute, or a dotted path below one (address.country).",
    )
    name: str | None = Field(default=None, max_length=200, description="Same as attribute_id.")
    operator: Literal[OPERATORS]  # type: ignore[valid-type]
    value: Any = Field(default=None, description=CONDITION_VALUE)


RECOMMENDED_WALLETS = (
    'Wallet apps the organization recommends, shown to the person under "No wallet yet?" '
    "instead of the apps named by the credential's format: at most 5, each a name and an "
    "https address."
)


WALLET_PROTOCOLS = (
    'The wallet protocols the person is offered, in order, without repeats: "openid4vp" '
    '(OpenID4VP 1.0) and "didcomm" (DIDComm v2 with present-proof 3.0, what the Socious '
    "Wallet and other Hyperledger Identus wallets speak; needs a jwt_vc_json schema). The "
    "first one's link is connection_url; with both, the connect answer's connection_urls "
    "names each and the person's page offers both."
)
WalletProtocol = Literal["openid4vp", "didcomm"]


class RecommendedWallet(Body):
    name: str = Field(min_length=1, max_length=60)
    url: str = Field(max_length=500, pattern=r"^https://[^\s]+$")


REGISTRATION_CERTIFICATE_ID = (
    "The registration certificate (ETSI TS 119 475) the verification's requests are made under "
    "(`GET /verifier-identity/registration-certificates`); left out: the one it has, else the "
    "organization's only one. The query must stay within what it permits (400 "
    "`OUTSIDE_REGISTRATION` names each claim outside it); requests carry it in `verifier_info`. "
    "A verification for an intermediated `relying_party` is made under none"
)


RELYING_PARTY = (
    "For an intermediary: the relying party it acts for in this verification, by the name of "
    "an access certificate it holds for it (POST /verifier-identity/signing-request with "
    "relying_party); that certificate signs the verification's requests. Null (or, in a "
    "PATCH, an empty text): the organization's own identity"
)


class VerificationIn(Body):
    name: str = Name
    description: str = Text
    description_translations: language_map(PURPOSE_LENGTH) | None = Field(  # type: ignore[valid-type]
        default=None, description=DESCRIPTION_TRANSLATIONS
    )
    schema_id: uuid.UUID
    type: Literal["SINGLE", "MULTI"] = "SINGLE"
    claims: list[str] = Field(default_factory=list, max_length=100)
    attributes: list[Condition] = Field(default_factory=list, max_length=50)
    trusted_issuers: list[str] | None = Field(
        default=None, max_length=50, description=TRUSTED_ISSUERS
    )
    trust_sources: list[uuid.UUID] = Field(
        default_factory=list, max_length=20, description=TRUST_SOURCES
    )
    registration_certificate_id: uuid.UUID | None = Field(
        default=None, description=REGISTRATION_CERTIFICATE_ID
    )
    return_url: str | None = Field(
        default=None, max_length=2000, pattern=r"^https?://", description=RETURN_URL
    )
    relying_party: str | None = Field(default=None, max_length=200, description=RELYING_PARTY)
    recommended_wallets: list[RecommendedWallet] = Field(
        default_factory=list, max_length=5, description=RECOMMENDED_WALLETS
    )
    wallet_protocols: list[WalletProtocol] = Field(
        default_factory=lambda: ["openid4vp"],
        min_length=1,
        max_length=2,
        description=WALLET_PROTOCOLS,
    )
    retention_days: int = Field(
        default=DEFAULT_RETENTION_DAYS, ge=0, le=MAX_RETENTION_DAYS, description=RETENTION_DAYS
    )
    status_check_hours: int = Field(
        default=DEFAULT_STATUS_CHECK_HOURS,
        ge=0,
        le=MAX_STATUS_CHECK_HOURS,
        description=STATUS_CHECK_HOURS,
    )
    anonymous_open: AnonymousOpen = Field(default="allowed", description=ANONYMOUS_OPEN)
    zk: bool = Field(default=False, description=ZK)


class VerificationPatch(Body):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=PURPOSE_LENGTH)
    description_translations: language_map(PURPOSE_LENGTH) | None = Field(  # type: ignore[valid-type]
        default=None, description=DESCRIPTION_TRANSLATIONS
    )
    schema_id: uuid.UUID | None = None
    type: Literal["SINGLE", "MULTI"] | None = None
    claims: list[str] | None = Field(default=None, max_length=100)
    attributes: list[Condition] | None = Field(default=None, max_length=50)
    trusted_issuers: list[str] | None = Field(
        default=None, max_length=50, description=TRUSTED_ISSUERS
    )
    trust_sources: list[uuid.UUID] | None = Field(
        default=None, max_length=20, description=TRUST_SOURCES
    )
    registration_certificate_id: uuid.UUID | None = Field(
        default=None, description=REGISTRATION_CERTIFICATE_ID
    )
    return_url: str | None = Field(
        default=None, max_length=2000, pattern=r"^https?://", description=RETURN_URL
    )
    relying_party: str | None = Field(default=None, max_length=200, description=RELYING_PARTY)
    recommended_wallets: list[RecommendedWallet] | None = Field(
        default=None, max_length=5, description=RECOMMENDED_WALLETS
    )
    wallet_protocols: list[WalletProtocol] | None = Field(
        default=None, min_length=1, max_length=2, description=WALLET_PROTOCOLS
    )
    retention_days: int | None = Field(
        default=None, ge=0, le=MAX_RETENTION_DAYS, description=RETENTION_DAYS
    )
    status_check_hours: int | None = Field(
        default=None, ge=0, le=MAX_STATUS_CHECK_HOURS, description=STATUS_CHECK_HOURS
    )
    anonymous_open: AnonymousOpen | None = Field(default=None, description=ANONYMOUS_OPEN)
    zk: bool | None = Field(default=None, description=ZK)


class ConditionOut(Out):
    """A condition echoed as the client sent it: under the key it used (``attribute_id`` or
    ``name``) and with its value exactly as sent (\"17\" stays \"17\"); what it is
    compared by is the value read by the attribute's type when it was saved."""

    attribute_id: str | None = Field(default=None, description="Present if the client used it.")
    name: str | None = Field(default=None, description="Present if the client used it.")
    operator: str
    value: Any = Field(default=None, description="As sent.")


class RecommendedWalletOut(Out):
    name: str
    url: str


class VerificationOut(Out):
    id: uuid.UUID
    name: str
    description: str
    description_translations: dict[str, str] = Field(
        default_factory=dict, description=DESCRIPTION_TRANSLATIONS
    )
    schema_id: uuid.UUID
    type: str
    claims: list[str]
    attributes: list[ConditionOut]
    trusted_issuers: list[str] = Field(description=TRUSTED_ISSUERS)
    trust_sources: list[uuid.UUID] = Field(description=TRUST_SOURCES)
    trust: Literal["any", "pinned"] = Field(description=TRUST)
    registration_certificate_id: uuid.UUID | None = Field(
        default=None, description=REGISTRATION_CERTIFICATE_ID
    )
    return_url: str | None = Field(description=RETURN_URL)
    relying_party: str | None = Field(default=None, description=RELYING_PARTY)
    recommended_wallets: list[RecommendedWalletOut] = Field(
        default_factory=list, description=RECOMMENDED_WALLETS
    )
    wallet_protocols: list[WalletProtocol] = Field(
        default_factory=lambda: ["openid4vp"], description=WALLET_PROTOCOLS
    )
    retention_days: int
    status_check_hours: int
    anonymous_open: AnonymousOpen = Field(default="allowed", description=ANONYMOUS_OPEN)
    zk: bool = Field(default=False, description=ZK)
    link_secret: str | None = Field(default=None, description=LINK_SECRET)
    created_at: datetime
    updated_at: datetime


class VerificationList(Out):
    results: list[VerificationOut]
    total: int


class IssuerSeenOut(Out):
    issuer: str = Field(
        description="The issuer as the credential named it (a did:prism by its short form), "
        "as `trusted_issuers` and `POST /verifications/{id}/trusted-issuers` take it"
    )
    presentations: int = Field(description="Presentations to this verification naming it")
    failed_untrusted: int = Field(
        description="Of those, how many FAILED because the verification does not trust it"
    )
    last_seen_at: datetime
    trusted: bool = Field(
        description="Whether the verification's `trusted_issuers` names it (an empty list "
        "accepts any issuer, yet names none)"
    )
    key_learnt: bool = Field(
        description="A did:prism whose long form (its keys) a presentation revealed: trusting "
        "it pins that long form for the organization, so credentials naming its short form "
        "verify with no deployment file or DID resolver"
    )


class IssuersSeenList(Out):
    results: list[IssuerSeenOut]


class TrustIssuerIn(Body):
    issuer: str = Field(
        min_length=1, max_length=2000, description="An issuer as issuers-seen lists it"
    )
