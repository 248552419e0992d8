"""The organization's certificates: the issuer root and chain, the mdoc document signer and
its IACA, and the verifier's access certificate and profile (signing requests, uploaded
chains)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.web.payloads.base import (
    Body,
    Out,
)


class EuAccessCertificateIn(Body):
    organization_identifier: str = Field(
        min_length=6,
        max_length=64,
        description="The subject's organizationIdentifier as EN 319 412-1 §5.1.4 writes it "
        "(TS 119 411-8 GEN-6.6.1-05): VAT, NTR, PSD or LEI, a country code, '-', then the "
        "identifier, such as VATDE-123456789 or LEIXG-5493001KJTIIGC8Y1R12",
    )
    contact_uri: str | None = Field(
        default=None,
        max_length=2000,
        pattern=r"^https://\S+$",
        description="A website where the relying party is reached for support, put in "
        "subjectAltName (GEN-6.6.1-07); this or contact_email is required",
    )
    contact_email: str | None = Field(
        default=None,
        max_length=254,
        pattern=r"^[^@\s]+@[^@\s]+$",
        description="An e-mail address for the relying party's registration and use of "
        "wallets, put in subjectAltName (GEN-6.6.1-07)",
    )


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
    relying_party: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="For an intermediary: the relying party it acts for, whose name the "
        "certificate carries (CN and O) in place of the organization's; one certificate is "
        "held per relying party, and a verification names the one it is for "
        "(relying_party)",
    )
    eu_access_certificate: EuAccessCertificateIn | None = Field(
        default=None,
        description="Request an EU access certificate: the CSR carries what ETSI TS 119 411-8 "
        "asks of the subject, and the chain uploaded for it is checked against that profile "
        "(400 ACCESS_CERTIFICATE_PROFILE lists each unmet requirement by name)",
    )


class CertificateChainIn(Body):
    chain_pem: str = Field(
        min_length=1,
        max_length=64 * 1024,
        description="The chain the registrar or CA returned, PEM, leaf first",
    )


class AccessCertificateChainIn(CertificateChainIn):
    relying_party: str | None = Field(
        default=None,
        max_length=64,
        description="The intermediated relying party whose signing request the chain answers; "
        "left out: the organization's own",
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


class RegistrationCertificateIn(Body):
    registration_certificate: str = Field(
        min_length=1,
        max_length=32 * 1024,
        description="The registrar's registration certificate (ETSI TS 119 475): a compact "
        "JWT of typ rc-wrp+jwt whose x5c leads to a registrar the organization trusts "
        "(trust source kind REGISTRARS), for the relying party of its access certificate",
    )


class LocalisedTextOut(Out):
    lang: str
    value: str


class PermittedCredentialOut(Out):
    format: str = Field(description="dc+sd-jwt, mso_mdoc or jwt_vc_json")
    meta: dict[str, Any] = Field(description="DCQL meta: vct_values, doctype_value or type_values")
    claims: list[list[str | int | None]] | None = Field(
        description="DCQL claim paths it permits; null: every claim of the credential"
    )


class RegistrationCertificateOut(Out):
    id: uuid.UUID
    name: str = Field(description="The relying party's name as registered")
    sub: str = Field(description="Whom it is for: the access certificate's relying party")
    intended_use_id: str | None
    purpose: list[LocalisedTextOut] = Field(description="The purpose wallets show")
    credentials: list[PermittedCredentialOut] = Field(
        description="What a verification made under it may ask for"
    )
    registrar: str = Field(description="Subject of the registrar certificate that signed it")
    issued_at: datetime
    expires_at: datetime | None
    expired: bool
    status: dict[str, Any] | None = Field(description="Its status list reference, if any")
    created_at: datetime
    token: str = Field(description="The JWT as uploaded, sent in verifier_info")


class RegistrationCertificateList(Out):
    results: list[RegistrationCertificateOut]


class VerifierProfilePatch(Body):
    logo_uri: str | None = Field(
        default=None,
        max_length=2000,
        pattern=r"^https://\S+$",
        description="https address of the organization's logo (client_metadata.logo_uri); "
        "null clears it",
    )
    privacy_policy_uri: str | None = Field(
        default=None,
        max_length=2000,
        pattern=r"^https://\S+$",
        description="https address of the organization's privacy policy, bound with its name "
        "and logo in its Google Wallet registrar certificate; null clears it",
    )


class SigningRequestOut(Out):
    csr_pem: str
    country: str
    dns_name: str | None
    relying_party: str | None = Field(
        description="The intermediated relying party the request is for; null: the organization"
    )
    profile: Literal["ts-119-411-8"] | None = Field(
        description="ts-119-411-8: an EU access certificate request, its chain checked against "
        "that profile at upload"
    )
    created_at: datetime


class UnmetRequirementOut(Out):
    requirement: str = Field(
        description="The clause that asks for it, such as "
        "'TS 119 411-8 GEN-6.6.1-05 organizationIdentifier'"
    )
    problem: str = Field(description="What the certificate lacks")


class GoogleWalletOut(Out):
    client_id: str | None = Field(
        description="x509_hash client identifier of the organization's registrar leaf; null "
        "before the first one is issued"
    )
    subject: str | None
    not_after: datetime | None
    metadata_sha256: str | None = Field(
        description="Hex SHA-256 of the RelyingPartyMetadataBytes the leaf binds (its "
        "1.3.6.1.4.1.11129.10.1 extension)"
    )
    missing: list[str] = Field(
        description="What the organization still has to set before a leaf can be issued"
    )


class AccessCertificateOut(Out):
    client_id: str
    subject: str
    issuer: str
    not_before: datetime
    not_after: datetime
    sha256: str
    chain_pem: str
    activated_at: datetime
    ts_119_411_8_unmet: list[UnmetRequirementOut] = Field(
        description="What of the ETSI TS 119 411-8 access certificate profile (legal person) "
        "the leaf does not meet; empty when it meets it all"
    )


class RelyingPartyIdentityOut(Out):
    name: str = Field(description="The intermediated relying party, as its certificate names it")
    certificate: AccessCertificateOut | None
    pending_request: SigningRequestOut | None


class VerifierIdentityOut(Out):
    organization_id: uuid.UUID
    uses: Literal["organization", "deployment"] = Field(
        description="Whose identity the organization's requests carry now"
    )
    client_name: str
    certificate: AccessCertificateOut | None
    pending_request: SigningRequestOut | None
    logo_uri: str | None
    privacy_policy_uri: str | None
    registration_certificates: list[RegistrationCertificateOut] = Field(
        description="The registration certificates uploaded, each for an intended use"
    )
    relying_parties: list[RelyingPartyIdentityOut] = Field(
        description="An intermediary's access certificates, one per relying party it acts for"
    )
    google_wallet: GoogleWalletOut | None = Field(
        description="The organization's Google Wallet registrar leaf; null when this "
        "deployment holds no registrar CA"
    )
