"""Wire shapes of the JSON API, shared by request validation and /openapi.json."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.organizations.models import Plan, Role
from app.verifications.conditions import OPERATORS
from app.verifications.models import (
    DEFAULT_RETENTION_DAYS,
    DEFAULT_STATUS_CHECK_HOURS,
    MAX_RETENTION_DAYS,
    MAX_STATUS_CHECK_HOURS,
    Status,
)
from app.web.language import DEFAULT as DEFAULT_LANGUAGE
from app.web.language import LANGUAGES

# The longest purpose (a verification's description) and display name (a schema attribute's
# description), in English and in each other language.
PURPOSE_LENGTH = 5000
DISPLAY_NAME_LENGTH = 1000
Name = Field(min_length=1, max_length=200)
Text = Field(default="", max_length=PURPOSE_LENGTH)


DESCRIPTION_TRANSLATIONS = (
    "The purpose in other languages of the person's page, by language code "
    '({"de": "..."}); the description (English) is shown where none is given.'
)
# The languages a text can be given in besides English, which is the field itself.
TRANSLATED_LANGUAGES = tuple(code for code in LANGUAGES if code != DEFAULT_LANGUAGE)
TranslatedLanguage = Literal[TRANSLATED_LANGUAGES]  # type: ignore[valid-type]


def language_map(longest: int) -> Any:
    """A text per language (``{"de": "..."}``): only the languages the person's pages speak
    other than English, each at most as long as the English field it translates. An unknown
    key is refused by name (a typo such as ``de-DE`` or ``DE`` would never be shown)."""
    return dict[TranslatedLanguage, Annotated[str, StringConstraints(max_length=longest)]]


class Body(BaseModel):
    """Request bodies: unknown fields are refused so that typos do not pass silently."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class ErrorOut(Out):
    error: str = Field(
        description="For people; it may change. 'sql: no rows in result set' is the fixed "
        'text of code NOT_FOUND and means only "not found".'
    )
    code: str | None = Field(
        default=None,
        description="Stable, to branch on: NOT_FOUND (an ID that does not exist, or another "
        "organization's), INVALID_REQUEST, UPGRADE_REQUIRED, ... (see the errors reference).",
    )
    tier: str | None = Field(default=None, description="FREE, with UPGRADE_REQUIRED (402).")


# -- individuals --------------------------------------------------------------------------


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


AnonymousOpen = Literal["allowed", "signed", "refused"]


class OpenIndividual(Body):
    customer_id: str = Field(min_length=1, max_length=200)
    verification_id: uuid.UUID
    customer_sig: str | None = Field(
        default=None,
        max_length=200,
        description='Needed by an open without the apikey when the verification\'s anonymous_open is "signed": '
        "base64url (no padding) of HMAC-SHA256 over the customer_id's UTF-8 bytes, keyed "
        "with the link secret's UTF-8 bytes. Ignored on an open with the apikey.",
    )


class OpenedBy(Out):
    kind: Literal["backend", "link", "anonymous"] = Field(
        description='"backend": opened with an integration key of the verification\'s '
        'organization; "link": through the no-code link /connect/redirect/{verification_id}; '
        '"anonymous": with no credential (anyone who knew the verification ID). Set by the '
        "first open and never replaced; individuals opened before it was recorded read "
        '"anonymous".'
    )
    integration_id: uuid.UUID | None = Field(
        default=None,
        description="With kind backend: the integration whose key opened it (kept after the "
        "integration is deleted).",
    )


OPENED_BY = (
    "How the individual was first opened. A backend should act only on a record it opened "
    '(kind "backend"), or know why it accepts another: with anonymous_open "allowed", anyone '
    "who knows the verification ID can open any customer ID first."
)


class IndividualOut(Out):
    id: uuid.UUID
    individual_id: uuid.UUID
    verification_id: uuid.UUID
    customer_id: str
    status: Status
    validation_error: str | None
    connection_url: str | None
    connection_urls: dict[str, str] | None = Field(
        default=None,
        description="Only in the connect answer of a verification that offers more than "
        'OpenID4VP: each wallet protocol\'s link by protocol ("didcomm", "openid4vp").',
    )
    page_url: str | None = Field(
        description="The person's page /i/{individual_id}: send the person here (it shows the "
        "QR code and the wallet button, then the outcome)."
    )
    connection_at: datetime | None
    verified_at: datetime | None
    created_at: datetime
    updated_at: datetime


class OpenedIndividualOut(IndividualOut):
    opened_by: OpenedBy = Field(description=OPENED_BY)


class IndividualLookupOut(IndividualOut):
    opened_by: OpenedBy = Field(description=OPENED_BY)
    failed_conditions: list[str] = Field(
        description="Every condition the last presentation did not satisfy, each as one "
        "sentence naming the attribute and the operator; validation_error names the first. "
        "Empty when no condition failed."
    )
    claims: dict[str, Any] | None = Field(
        description="The claims the verification asked for, while they are kept "
        "(the verification's retention_days); null once deleted."
    )
    issuer: str | None
    revoked_at: datetime | None = Field(
        description="When a later check of the credential's status list found it no longer "
        "valid (revoked or suspended). The status stays VERIFIED: the decision was right when "
        "it was made; this says the credential has since been withdrawn."
    )


class IndividualList(Out):
    results: list[IndividualLookupOut]
    total: int


# Socious Verify's fields (api_compatibility "socious-verify"): what each holds in Verity.
SOCIOUS_ONLY = (
    " Only when the organization's api_compatibility is socious-verify, in the apikey lookup "
    "and in the answer of an open made with the organization's own integration key; never in "
    "the unauthenticated answers."
)


class SociousAttributeOut(Out):
    id: str = Field(
        description="The attribute's name: Verity names a schema attribute by its name, which "
        "is also what a condition's attribute_id takes (Socious Verify had a UUID here)."
    )
    name: str
    description: str | None
    type: str = Field(description="TEXT, NUMBER, BOOLEAN, URL, DATETIME or EMAIL.")
    created_at: datetime = Field(
        description="The schema's creation time: attributes have no time of their own."
    )


class SociousSchemaOut(Out):
    id: uuid.UUID
    name: str
    description: str | None
    attributes: list[SociousAttributeOut]
    created_at: datetime


class SociousUserOut(Out):
    id: uuid.UUID = Field(
        description="The organization's ID. Socious Verify put the record of the staff account "
        "that owned the verification here (username, email, names, phone); Verity carries no "
        "personal data of the organization's staff in a customer's record."
    )


class SociousVerificationOut(Out):
    id: uuid.UUID
    name: str
    description: str | None
    type: Literal["SINGLE", "MULTI"]
    schema_id: uuid.UUID
    schema_: SociousSchemaOut = Field(alias="schema")
    user_id: uuid.UUID = Field(description="The organization's ID, as user_id above.")
    user: SociousUserOut
    created_at: datetime
    updated_at: datetime


class SociousVerifyFields(Out):
    body: dict[str, Any] | None = Field(
        default=None,
        description="The disclosed claims keyed by the attribute names the verification asks "
        "for (its claims and the attributes its conditions read), as claims holds them; null "
        "until VERIFIED and again once the claims are deleted (retention_days). Socious Verify "
        "kept the whole credential subject; Verity keeps only what the verification asks for."
        + SOCIOUS_ONLY,
    )
    user_id: uuid.UUID | None = Field(
        default=None,
        description="The organization that owns the verification (Socious Verify: the account "
        "that made it)." + SOCIOUS_ONLY,
    )
    recipient_id: uuid.UUID | None = Field(
        default=None,
        description="The organization's recipient (/recipients) whose customer_id is this "
        "individual's, the oldest if several; null when there is none. Socious Verify made a "
        "recipient for every customer it was given; Verity keeps recipients for the people an "
        "organization issues credentials to." + SOCIOUS_ONLY,
    )
    connection_id: uuid.UUID | None = Field(
        default=None,
        description="The presentation request behind the current connection_url (Socious "
        "Verify: the cloud agent's connection); null before a link was handed out." + SOCIOUS_ONLY,
    )
    present_id: uuid.UUID | None = Field(
        default=None,
        description="The presentation request the person's last presentation answered "
        "(Socious Verify: the cloud agent's presentation record); null until the person "
        "presented. Usually connection_id; another when an older link was answered." + SOCIOUS_ONLY,
    )
    verification: SociousVerificationOut | None = Field(
        default=None,
        description="The verification with its schema and the schema's attributes, as Socious "
        "Verify nested it." + SOCIOUS_ONLY,
    )


class IndividualOpenOut(SociousVerifyFields, OpenedIndividualOut):
    pass


class IndividualLookupCompatOut(SociousVerifyFields, IndividualLookupOut):
    pass


# -- verifications ------------------------------------------------------------------------


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
    return_url: str | None = Field(
        default=None, max_length=2000, pattern=r"^https?://", description=RETURN_URL
    )
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
    return_url: str | None = Field(
        default=None, max_length=2000, pattern=r"^https?://", description=RETURN_URL
    )
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
    return_url: str | None = Field(description=RETURN_URL)
    recommended_wallets: list[RecommendedWalletOut] = Field(
        default_factory=list, description=RECOMMENDED_WALLETS
    )
    wallet_protocols: list[WalletProtocol] = Field(
        default_factory=lambda: ["openid4vp"], description=WALLET_PROTOCOLS
    )
    retention_days: int
    status_check_hours: int
    anonymous_open: AnonymousOpen = Field(default="allowed", description=ANONYMOUS_OPEN)
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


# -- schemas ------------------------------------------------------------------------------


class SchemaAttribute(Body):
    name: str = Field(
        min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$"
    )
    description: str = Field(default="", max_length=DISPLAY_NAME_LENGTH)
    description_translations: language_map(DISPLAY_NAME_LENGTH) | None = Field(  # type: ignore[valid-type]
        default=None, description="The display name in other languages, by language code."
    )
    type: Literal["TEXT", "NUMBER", "BOOLEAN", "URL", "DATETIME", "EMAIL"] = "TEXT"
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="mso_mdoc only: the namespace of this element, when not the schema's",
    )


CredentialFormat = Literal["dc+sd-jwt", "mso_mdoc", "jwt_vc_json"]
TypeValue = Annotated[str, StringConstraints(min_length=1, max_length=200)]


# What wallets show (SD-JWT VC Type Metadata §6.3.2, OpenID4VCI 1.0 Appendix B.2): optional;
# null clears.
def _colour() -> Any:
    return Field(
        default=None,
        pattern=r"^#[0-9A-Fa-f]{6}$",
        description="An RGB colour wallets show the credential in, #RRGGBB",
    )


def _logo_uri() -> Any:
    return Field(
        default=None,
        max_length=2000,
        pattern=r"^https://\S+$",
        description="An https address of the logo wallets show on the credential",
    )


def _logo_alt_text() -> Any:
    return Field(default=None, max_length=200, description="The logo's alternative text")


class SchemaIn(Body):
    name: str = Name
    description: str = Text
    public: bool = Field(
        default=False,
        description="Only an operator makes a schema public (flask schemas publish-public); "
        "true is refused with 403 PUBLIC_SCHEMA_OPERATOR_ONLY",
    )
    format: CredentialFormat = Field(
        default="dc+sd-jwt",
        description="dc+sd-jwt (SD-JWT VC, named by vct), mso_mdoc (ISO mdoc, named by doctype "
        "and namespace) or jwt_vc_json (W3C VC signed as a JWT, named by types)",
    )
    vct: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="dc+sd-jwt: the credential type; left out, <PUBLIC_URL>/types/<schema id>, "
        "where the type metadata wallets show the credential with is served",
    )
    doctype: str | None = Field(
        default=None, min_length=1, max_length=200, description="mso_mdoc: the document type"
    )
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="mso_mdoc: the namespace of the attributes",
    )
    types: list[TypeValue] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description="jwt_vc_json: the VC type values a credential must have",
    )
    premium_plus: bool = False
    attributes: list[SchemaAttribute] = Field(min_length=1, max_length=100)
    validity_days: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=3650,
        description="Days a credential issued with this schema stays valid (its exp); "
        "none: credentials without exp",
    )
    authorization_code_by_mail: bool = Field(
        default=False,
        description="In the OpenID4VCI authorization code flow, a one-time code is emailed to "
        "the recipient and asked for on the authorization page; the offers then name only the "
        "authorization code grant (the pre-authorized one too only with a tx_code), so the link "
        "alone takes nothing; DIDComm offers of such a schema are refused",
    )
    key_attestations_required: bool = Field(
        default=False,
        description="Key proofs must come with a key attestation (OpenID4VCI 1.0 Appendix D) "
        "from a wallet provider the organization trusts; DIDComm offers of such a schema are "
        "refused",
    )
    background_color: str | None = _colour()
    text_color: str | None = _colour()
    logo_uri: str | None = _logo_uri()
    logo_alt_text: str | None = _logo_alt_text()


class SchemaPatch(Body):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=5000)
    public: bool | None = Field(
        default=None,
        description="Only an operator changes it: another value than the schema's is 403 "
        "PUBLIC_SCHEMA_OPERATOR_ONLY",
    )
    format: CredentialFormat | None = None
    vct: str | None = Field(default=None, min_length=1, max_length=500)
    doctype: str | None = Field(default=None, min_length=1, max_length=200)
    namespace: str | None = Field(default=None, min_length=1, max_length=200)
    types: list[TypeValue] | None = Field(default=None, min_length=1, max_length=10)
    premium_plus: bool | None = None
    attributes: list[SchemaAttribute] | None = Field(default=None, min_length=1, max_length=100)
    validity_days: int | None = Field(default=None, strict=True, ge=1, le=3650)
    authorization_code_by_mail: bool | None = None
    key_attestations_required: bool | None = None
    background_color: str | None = _colour()
    text_color: str | None = _colour()
    logo_uri: str | None = _logo_uri()
    logo_alt_text: str | None = _logo_alt_text()


class SchemaAttributeOut(Out):
    name: str
    description: str
    type: str
    namespace: str | None = None
    description_translations: dict[str, str] | None = Field(
        default=None, description="The display name in other languages, by language code."
    )


class SchemaOut(Out):
    id: uuid.UUID
    name: str
    description: str
    public: bool
    format: str
    vct: str
    doctype: str | None
    namespace: str | None
    types: list[str] | None
    premium_plus: bool
    published: bool
    attributes: list[SchemaAttributeOut]
    validity_days: int | None
    authorization_code_by_mail: bool
    key_attestations_required: bool
    background_color: str | None = None
    text_color: str | None = None
    logo_uri: str | None = None
    logo_alt_text: str | None = None
    created_at: datetime
    updated_at: datetime


class SchemaList(Out):
    results: list[SchemaOut]
    total: int


# -- recipients ---------------------------------------------------------------------------


class RecipientIn(Body):
    first_name: str = Name
    last_name: str = Name
    email: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    customer_id: str | None = Field(default=None, max_length=200)


class RecipientPatch(Body):
    id: uuid.UUID | None = None
    first_name: str | None = Field(default=None, min_length=1, max_length=200)
    last_name: str | None = Field(default=None, min_length=1, max_length=200)
    email: str | None = Field(
        default=None, min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$"
    )
    customer_id: str | None = Field(default=None, max_length=200)


class RecipientRef(Body):
    id: uuid.UUID


class RecipientOut(Out):
    id: uuid.UUID
    first_name: str
    last_name: str
    email: str
    customer_id: str | None
    created_at: datetime
    updated_at: datetime


class RecipientList(Out):
    results: list[RecipientOut]
    total: int


# -- credentials --------------------------------------------------------------------------


class CredentialClaimOut(Out):
    name: str
    value: str | bool | int | float


class CredentialOut(Out):
    """A credential; the offer's link only while it can be taken."""

    id: uuid.UUID
    name: str
    description: str
    schema_id: uuid.UUID
    recipient_id: uuid.UUID
    claims: list[CredentialClaimOut]
    status: Literal["OFFERED", "ISSUED", "REVOKED", "EXPIRED"]
    issuer: str
    protocol: Literal["openid4vci", "didcomm"] = Field(
        default="openid4vci",
        description="How the wallet takes it; a DIDComm offer's offer_url is its out-of-band "
        "invitation (<PUBLIC_URL>/didcomm/invitation?_oob=...).",
    )
    offer_url: str | None
    offer_page: str | None
    offer_expires_at: datetime | None
    tx_code_required: bool
    issued_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None
    created_at: datetime
    updated_at: datetime


class CredentialCreated(CredentialOut):
    """With the transaction code in clear, in this response only, when one was asked for."""

    tx_code: str | None = None


class CredentialList(Out):
    results: list[CredentialOut]
    total: int


# -- policy requests ----------------------------------------------------------------------


class PolicyRequestIn(Body):
    verification_id: uuid.UUID
    recipient_id: uuid.UUID | None = None
    expires_in: int = Field(default=900, ge=1, le=86400)


class PolicyRequestOut(Out):
    id: uuid.UUID
    token: str
    url: str
    expires_at: datetime
    status: Status


class PolicyStatusOut(Out):
    id: uuid.UUID
    verification_id: uuid.UUID
    recipient_id: uuid.UUID | None
    status: Status
    validation_error: str | None
    claims: dict[str, Any] | None
    issuer: str | None
    expires_at: datetime
    verified_at: datetime | None
    created_at: datetime


# -- organizations, people, keys ----------------------------------------------------------


class OrganizationIn(Body):
    name: str = Name


SUPPORT_CONTACT = (
    "How the people it verifies or issues to reach the organization: an email address or an "
    "https:// address, named on their pages when a check fails; null removes it."
)


API_COMPATIBILITY = (
    "The answer shape the organization's backend reads: verity (Verity's fields only, the "
    "default) or socious-verify (Socious Verify's lookup fields too, body, user_id, "
    "recipient_id, connection_id, present_id and verification, in the apikey lookup and in "
    "opens made with the organization's integration key; never in the unauthenticated answers)."
)


class OrganizationPatch(Body):
    support_contact: str | None = Field(default=None, max_length=320, description=SUPPORT_CONTACT)
    # Left out keeps the setting; null is refused like any unknown shape (the default is
    # never validated, so it only marks "not sent").
    api_compatibility: Literal["verity", "socious-verify"] = Field(
        default=None,  # type: ignore[assignment]
        description=API_COMPATIBILITY + " Owners and admins only; left out keeps it.",
    )


class OrganizationOut(Out):
    id: uuid.UUID
    name: str
    plan: Plan
    plan_expires_at: datetime | None
    wallet_attestation: Literal["required", "optional", "off"]
    created_at: datetime
    support_contact: str | None = Field(default=None, description=SUPPORT_CONTACT)
    api_compatibility: Literal["verity", "socious-verify"] = Field(
        default="verity", description=API_COMPATIBILITY
    )


class IssuerSettingsIn(Body):
    wallet_attestation: Literal["required", "optional", "off"] = Field(
        description="Wallet attestation (attest_jwt_client_auth) at the issuer's PAR and token "
        "endpoints: required (DIDComm offers are then refused), optional (checked when sent) "
        "or off"
    )


class MembershipOut(Out):
    organization: OrganizationOut
    role: Role
    joined_at: datetime


class MemberOut(Out):
    user_id: uuid.UUID
    email: str
    name: str
    role: Role
    joined_at: datetime


class OrganizationDetail(OrganizationOut):
    role: Role
    members: list[MemberOut]


class OrganizationList(Out):
    results: list[MembershipOut]
    total: int


class CodeIn(Body):
    days: int = Field(default=7, ge=1, le=90)
    role: Literal["ADMIN", "MEMBER"] = "MEMBER"


class CodeOut(Out):
    code: str
    organization_id: uuid.UUID
    role: Role
    expires_at: datetime


class JoinIn(Body):
    code: str = Field(min_length=1, max_length=200)


class UserOut(Out):
    id: uuid.UUID
    email: str
    name: str


class MeOut(Out):
    user: UserOut
    memberships: list[MembershipOut]
    default_organization_id: uuid.UUID | None
    acting_organization_id: uuid.UUID | None


class IntegrationIn(Body):
    name: str = Name


class IntegrationOut(Out):
    id: uuid.UUID
    name: str
    key_prefix: str
    created_at: datetime
    last_used_at: datetime | None


class IntegrationCreated(IntegrationOut):
    key: str = Field(description="The Secret Key. Shown once; only its hash is stored.")


class AuditActorOut(Out):
    type: Literal["user", "integration"]
    id: str
    name: str = Field(description="The user's email, or the integration's name")


class AuditEventOut(Out):
    id: uuid.UUID
    created_at: datetime
    actor: AuditActorOut
    action: str = Field(description="record type and verb: credential.revoked, integration.deleted")
    record_type: str
    record_id: str
    client_ip: str | None
    fields: list[str] = Field(description="Names of every field the write set or changed")
    changes: dict[str, Any] = Field(
        description="New values of those fields, except secrets, keys, codes, claims and "
        "personal data, which are named in fields only"
    )


class AuditEventList(Out):
    results: list[AuditEventOut]
    total: int


class IntegrationList(Out):
    results: list[IntegrationOut]
    total: int


class SigningRequestIn(Body):
    country: str = Field(
        min_length=2,
        max_length=2,
        pattern=r"^[A-Za-z]{2}$",
        description="ISO 3166-1 alpha-2 code for the certificate's C (countryName)",
    )
    name_host: bool = Field(
        default=False,
        description="Put the deployment's host in a subjectAltName dNSName, so that the "
        "client identifier can be x509_san_dns:<host>",
    )


class CertificateChainIn(Body):
    chain_pem: str = Field(
        min_length=1,
        max_length=64 * 1024,
        description="The chain the registrar or CA returned, PEM, leaf first",
    )


class IssuerCertificateOut(Out):
    root_pem: str = Field(description="The organization's issuer root: the anchor to trust")
    uploaded: bool = Field(description="Whether the root came from the organization's CA")
    kid: str | None = Field(description="The issuer key in use; null before the first credential")
    chain_pem: str | None = Field(
        description="The x5c chain credentials carry (PEM, issuing certificate first, no root); "
        "null until the first credential signed with the key in use"
    )


class MdocSignerOut(Out):
    iaca_pem: str = Field(
        description="The organization's IACA root (PEM): the anchor verifiers trust for its mdocs"
    )
    document_signer_pem: str = Field(
        description="The document signer certificate mdocs carry in x5chain (PEM)"
    )
    document_signer_subject: str = Field(description="Its subject, as RFC 4514 writes it")
    document_signer_not_before: str = Field(description="When it starts being valid (ISO 8601)")
    document_signer_not_after: str = Field(description="When it stops being valid (ISO 8601)")
    iaca_not_after: str = Field(description="When the IACA stops being valid (ISO 8601)")
    valid_now: bool = Field(
        description="Whether the document signer and the IACA are both valid now; false: "
        "mdoc issuance is refused (credential_request_denied) until a new chain is uploaded"
    )
    problem: str | None = Field(
        description="Why mdocs cannot be signed now (which certificate, its dates, what to do); "
        "null when valid_now"
    )
    uploaded: bool = Field(
        description="Whether the IACA is the organization's own (uploaded); false: generated here"
    )


class MdocSigningRequestOut(Out):
    csr_pem: str = Field(
        description="PKCS#10 request (PEM) for the document signer key this service holds, for "
        "the organization's IACA to certify"
    )


class VerifierProfilePatch(Body):
    logo_uri: str | None = Field(
        default=None,
        max_length=2000,
        pattern=r"^https://\S+$",
        description="https address of the organization's logo (client_metadata.logo_uri); "
        "null clears it",
    )
    registration_certificate: str | None = Field(
        default=None,
        max_length=16 * 1024,
        description="The registrar's signed JWT, sent as verifier_info; null clears it",
    )


class SigningRequestOut(Out):
    csr_pem: str
    country: str
    dns_name: str | None
    created_at: datetime


class AccessCertificateOut(Out):
    client_id: str
    subject: str
    issuer: str
    not_before: datetime
    not_after: datetime
    sha256: str
    chain_pem: str
    activated_at: datetime


class VerifierIdentityOut(Out):
    organization_id: uuid.UUID
    uses: Literal["organization", "deployment"] = Field(
        description="Whose identity the organization's requests carry now"
    )
    client_name: str
    certificate: AccessCertificateOut | None
    pending_request: SigningRequestOut | None
    logo_uri: str | None
    registration_certificate: str | None


class VoucherIn(Body):
    code: str = Field(min_length=1, max_length=200)


class CheckoutIn(Body):
    plan: Literal["PRO", "PREMIUM_PLUS"]
    return_url: str | None = Field(default=None, max_length=2000, pattern=r"^https?://")


class PortalIn(Body):
    return_url: str | None = Field(default=None, max_length=2000, pattern=r"^https?://")


class RedirectOut(Out):
    url: str


# -- login --------------------------------------------------------------------------------


class AuthIn(Body):
    return_to: str | None = Field(
        default=None,
        max_length=2000,
        description="Where the callback sends the browser with code and state.",
    )


class AuthOut(Out):
    auth_url: str


class SessionIn(Body):
    code: str = Field(min_length=1, max_length=2000)
    state: str = Field(min_length=1, max_length=200)


class SessionOut(Out):
    token: str
    token_type: Literal["Bearer"] = "Bearer"
    expires_at: datetime


class HealthOut(Out):
    status: str
