"""Individuals: opening one (``POST /verifications/individuals``, public and backend), and the
answers of the connect, open and lookup calls, with the Socious Verify compatibility fields."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.verifications.models import (
    Status,
)
from app.web.payloads.base import (
    Body,
    Out,
)

TRANSACTION_DATA_IN = (
    "OpenID4VP 1.0 transaction data the person is asked to authorize with the credential they "
    "present (a payment, a signature): objects with a type the organization enabled "
    "(transaction_data_types: urn:eudi:sca:payment:1, qes_authorization, "
    "qcert_creation_acceptance), each checked against its type's definition. credential_ids "
    'may be left out (the request\'s one credential query, "credential"); '
    'transaction_data_hashes_alg defaults to ["sha-256"]. Only an SD-JWT VC (dc+sd-jwt) '
    "verification offered over OpenID4VP takes it; the answer is VERIFIED only when the "
    "wallet's key binding confirms every entry (transaction_data_hashes). Refused with 400: "
    "a type the service does not send (TRANSACTION_DATA_TYPE_UNKNOWN) or the organization has "
    "not enabled (TRANSACTION_DATA_TYPE_NOT_ENABLED), an entry its type's definition refuses "
    "(INVALID_TRANSACTION_DATA), a verification whose credential cannot confirm it "
    "(TRANSACTION_DATA_FORMAT_UNSUPPORTED)."
)
TRANSACTION_DATA_OUT = (
    "The transaction data the wallet confirmed, as sent (each entry's object), when VERIFIED; "
    "null otherwise, and when none was attached."
)


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
    transaction_data: list[dict[str, Any]] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description=TRANSACTION_DATA_IN
        + " Needs the apikey (401 APIKEY_REQUIRED without it). Kept by the first open: a "
        "repeat with other transaction_data is refused (400 TRANSACTION_DATA_MISMATCH), one "
        "without the field is answered as before.",
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
    transaction_data: list[dict[str, Any]] | None = Field(
        default=None, description=TRANSACTION_DATA_OUT
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
