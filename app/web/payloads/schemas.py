"""Schemas: create and change (JSON API and dashboard) and the answer."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from app.web.payloads.base import (
    DISPLAY_NAME_LENGTH,
    Body,
    Name,
    Out,
    Text,
    language_map,
)


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
