"""ETSI TS 119 411-8 V1.1.1: the profile of an access certificate issued to a wallet-relying
party that is a legal person (NCP-l-eudiwrp or QCP-l-eudiwrp). No database here.

TS 119 411-8 §6.6.1 takes the certificate profile of EN 319 411-1 §6.6.1 (which points to
EN 319 412-2 and, for legal persons, EN 319 412-3) and adds its own requirements. What of it a
certificate shows is checked here, each unmet requirement named by the clause that asks for it,
so that staff can send the list to their access certificate provider as it stands. What a
certificate cannot show (the provider's registration checks, audits, archives) is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cryptography import x509
from cryptography.x509.oid import AuthorityInformationAccessOID, NameOID

# TS 119 411-8 §5.3: the ETSI policy identifiers, { 0 4 0 194118 1 n }.
NCP_NATURAL = "0.4.0.194118.1.1"
NCP_LEGAL = "0.4.0.194118.1.2"
QCP_NATURAL = "0.4.0.194118.1.3"
QCP_LEGAL = "0.4.0.194118.1.4"
# ITU-T X.520 §6.7.1 id-at-telephoneNumber, the otherName type-id GEN-6.6.1-07 names.
TELEPHONE_NUMBER = "2.5.4.20"
# EN 319 412-1 §5.1.4: VAT, NTR, PSD or LEI, a country, "-", the identifier; or a national
# scheme of two characters and ":" before the same. LEI is always under country XG.
ORGANIZATION_IDENTIFIER = re.compile(r"^(?:(VAT|NTR|PSD|LEI)|[A-Z]{2}:)([A-Z]{2})-(.+)$")
LEI_COUNTRY = "XG"


@dataclass(frozen=True)
class Unmet:
    """One requirement the certificate does not meet: the clause, and what is wrong."""

    requirement: str
    problem: str

    def as_dict(self) -> dict[str, str]:
        return {"requirement": self.requirement, "problem": self.problem}


def unmet_requirements(leaf: x509.Certificate) -> list[Unmet]:
    """Every requirement of the legal-person access certificate profile ``leaf`` misses."""
    return [
        *_version(leaf),
        *_subject(leaf),
        *_key_usage(leaf),
        *_policies(leaf),
        *_contact(leaf),
        *_authority_key_identifier(leaf),
        *_revocation_and_issuer_access(leaf),
        *_end_entity(leaf),
    ]


def _version(leaf: x509.Certificate) -> list[Unmet]:
    if leaf.version == x509.Version.v3:
        return []
    return [Unmet("RFC 5280 §4.1.2.1 version", "The certificate must be X.509 version 3")]


def _subject(leaf: x509.Certificate) -> list[Unmet]:
    """EN 319 412-3 §4.2.1 (legal person): C, O, organizationIdentifier and CN, the
    identifier as TS 119 411-8 GEN-6.6.1-05 asks (EN 319 412-1 §5.1.4)."""
    subject = leaf.subject
    unmet = []
    for oid, name in (
        (NameOID.COUNTRY_NAME, "countryName"),
        (NameOID.ORGANIZATION_NAME, "organizationName"),
        (NameOID.COMMON_NAME, "commonName"),
    ):
        if not subject.get_attributes_for_oid(oid):
            unmet.append(
                Unmet(
                    f"EN 319 412-3 §4.2.1 subject {name}",
                    f"The subject has no {name}",
                )
            )
    identifiers = subject.get_attributes_for_oid(NameOID.ORGANIZATION_IDENTIFIER)
    if not identifiers:
        unmet.append(
            Unmet(
                "TS 119 411-8 GEN-6.6.1-05 organizationIdentifier",
                "The subject has no organizationIdentifier (such as VATDE-123456789 or "
                "NTRFR-552100554)",
            )
        )
    else:
        problem = organization_identifier_problem(str(identifiers[0].value))
        if problem:
            unmet.append(Unmet("TS 119 411-8 GEN-6.6.1-05 organizationIdentifier", problem))
    return unmet


def organization_identifier_problem(value: str) -> str | None:
    """Why ``value`` is not an organizationIdentifier as EN 319 412-1 §5.1.4 writes one."""
    match = ORGANIZATION_IDENTIFIER.match(value)
    if match is None:
        return (
            f"organizationIdentifier {value!r} is not of the form of EN 319 412-1 §5.1.4: "
            "VAT, NTR, PSD or LEI (or a national scheme of two characters and ':'), a "
            "two-letter country code, '-', then the identifier"
        )
    kind, country, _ = match.groups()
    if kind == "LEI" and country != LEI_COUNTRY:
        return f"A Legal Entity Identifier is written under country {LEI_COUNTRY}: LEIXG-..."
    if country == "GR":
        return "TS 119 411-8 GEN-6.6.1-05: Greece is written EL in organizationIdentifier"
    return None


def _key_usage(leaf: x509.Certificate) -> list[Unmet]:
    """EN 319 412-3 §4.3.1 (through EN 319 412-2 §4.3.2): a critical keyUsage; the request
    signatures this key makes need digitalSignature."""
    requirement = "EN 319 412-2 §4.3.2 keyUsage"
    try:
        extension = leaf.extensions.get_extension_for_class(x509.KeyUsage)
    except x509.ExtensionNotFound:
        return [Unmet(requirement, "The certificate has no keyUsage extension")]
    unmet = []
    if not extension.critical:
        unmet.append(Unmet(requirement, "keyUsage must be marked critical"))
    if not extension.value.digital_signature:
        unmet.append(
            Unmet(requirement, "keyUsage must include digitalSignature: the key signs requests")
        )
    return unmet


def _policies(leaf: x509.Certificate) -> list[Unmet]:
    """TS 119 411-8 GEN-6.6.1-03 (a policy identifier) and GEN-6.6.1-06 (the cpsURI)."""
    try:
        policies = leaf.extensions.get_extension_for_class(x509.CertificatePolicies).value
    except x509.ExtensionNotFound:
        return [
            Unmet(
                "TS 119 411-8 GEN-6.6.1-03 certificatePolicies",
                f"The certificate has no certificatePolicies: it needs {NCP_LEGAL} "
                f"(NCP-l-eudiwrp), {QCP_LEGAL} (QCP-l-eudiwrp) or its provider's own policy",
            ),
            Unmet(
                "TS 119 411-8 GEN-6.6.1-06 cpsURI",
                "The certificate policies name no cpsURI of the provider's CPS",
            ),
        ]
    unmet = []
    if not list(policies):
        unmet.append(
            Unmet(
                "TS 119 411-8 GEN-6.6.1-03 certificatePolicies",
                "certificatePolicies holds no policy identifier",
            )
        )
    has_cps = any(
        isinstance(qualifier, str)
        for policy in policies
        for qualifier in policy.policy_qualifiers or ()
    )
    if not has_cps:
        unmet.append(
            Unmet(
                "TS 119 411-8 GEN-6.6.1-06 cpsURI",
                "The certificate policies name no cpsURI of the provider's CPS",
            )
        )
    return unmet


def _contact(leaf: x509.Certificate) -> list[Unmet]:
    """TS 119 411-8 GEN-6.6.1-07: a website (URI), telephone (otherName) or e-mail
    (rfc822Name) where the relying party is reached, in subjectAltName."""
    requirement = "TS 119 411-8 GEN-6.6.1-07 subjectAltName contact"
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        names = x509.SubjectAlternativeName([])
    contacts = [
        *names.get_values_for_type(x509.UniformResourceIdentifier),
        *names.get_values_for_type(x509.RFC822Name),
        *(
            name
            for name in names.get_values_for_type(x509.OtherName)
            if name.type_id.dotted_string == TELEPHONE_NUMBER
        ),
    ]
    if contacts:
        return []
    return [
        Unmet(
            requirement,
            "subjectAltName names no contact of the relying party: a support website "
            "(uniformResourceIdentifier), an e-mail address (rfc822Name) or a telephone "
            "number (otherName id-at-telephoneNumber)",
        )
    ]


def _authority_key_identifier(leaf: x509.Certificate) -> list[Unmet]:
    try:
        leaf.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    except x509.ExtensionNotFound:
        return [
            Unmet(
                "EN 319 412-2 §4.3.1 authorityKeyIdentifier",
                "The certificate has no authorityKeyIdentifier",
            )
        ]
    return []


def _revocation_and_issuer_access(leaf: x509.Certificate) -> list[Unmet]:
    """EN 319 412-2 §4.4.1 (caIssuers, and OCSP where it is the only status source) and
    §4.3.11 (a CRL without OCSP); TS 119 411-8 §6.6.1 NOTE: no short-term certificates."""
    try:
        access = list(
            leaf.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
        )
    except x509.ExtensionNotFound:
        access = []
    methods = {description.access_method for description in access}
    unmet = []
    if AuthorityInformationAccessOID.CA_ISSUERS not in methods:
        unmet.append(
            Unmet(
                "EN 319 412-2 §4.4.1 authorityInfoAccess caIssuers",
                "authorityInfoAccess names no caIssuers location of the issuing CA's certificate",
            )
        )
    try:
        leaf.extensions.get_extension_for_class(x509.CRLDistributionPoints)
        has_crl = True
    except x509.ExtensionNotFound:
        has_crl = False
    if not has_crl and AuthorityInformationAccessOID.OCSP not in methods:
        unmet.append(
            Unmet(
                "EN 319 412-2 §4.3.11 cRLDistributionPoints",
                "The certificate names neither a CRL distribution point nor an OCSP "
                "responder: wallets cannot learn that it was revoked",
            )
        )
    return unmet


def _end_entity(leaf: x509.Certificate) -> list[Unmet]:
    try:
        constraints = leaf.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        return []
    if constraints.ca:
        return [
            Unmet(
                "TS 119 411-8 §1 end-entity certificate",
                "The certificate is a CA certificate; an access certificate is an end-entity "
                "certificate for electronic seals",
            )
        ]
    return []


def etsi_policy(leaf: x509.Certificate) -> str | None:
    """The TS 119 411-8 policy identifier the certificate names, if any."""
    try:
        policies = leaf.extensions.get_extension_for_class(x509.CertificatePolicies).value
    except x509.ExtensionNotFound:
        return None
    for policy in policies:
        if policy.policy_identifier.dotted_string in (
            NCP_NATURAL,
            NCP_LEGAL,
            QCP_NATURAL,
            QCP_LEGAL,
        ):
            return policy.policy_identifier.dotted_string
    return None
