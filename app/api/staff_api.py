"""The staff's JSON API, authenticated by session token: what the
dashboard's pages (``app.staff``) do, for scripts and other clients.

Verification definitions, schemas, organizations and integrations are reachable this way only.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, current_app, request

from app.api import render
from app.api.common import (
    PAGING_QUERY,
    base_url,
    deleted,
    documented,
    json_response,
    list_args,
    listing,
    parse_body,
    parse_id,
    refuse_unknown_args,
)
from app.billing import operations as billing
from app.deployment import REGISTRAR_EXTENSION
from app.errors import NotFound
from app.integrations import operations as integrations
from app.issuance import certificates as issuer_certificates
from app.issuance import mdoc_signer
from app.issuance.links import IssuerLinks
from app.organizations import operations as organizations
from app.organizations.models import Plan, Role
from app.presentations import issuers_seen
from app.schemas import operations as schemas
from app.verifications import operations as verifications
from app.verifier_identity import operations as verifier_identity
from app.verifier_identity import registration, shown
from app.verifier_identity.operations import eu_details
from app.vouchers import operations as vouchers
from app.web.access import (
    acting_membership,
    acting_organization,
    current_user,
    require_session,
    tier_gated,
)
from app.web.idempotency import idempotent
from app.web.links import links
from app.web.payloads.base import ErrorOut
from app.web.payloads.billing import CheckoutIn, PortalIn, RedirectOut, VoucherIn
from app.web.payloads.certificates import (
    AccessCertificateChainIn,
    CertificateChainIn,
    IssuerCertificateOut,
    MdocSignerOut,
    MdocSigningRequestOut,
    RegistrationCertificateIn,
    RegistrationCertificateList,
    RegistrationCertificateOut,
    SigningRequestIn,
    SigningRequestOut,
    VerifierIdentityOut,
    VerifierProfilePatch,
)
from app.web.payloads.individuals import IndividualList
from app.web.payloads.integrations import IntegrationCreated, IntegrationIn, IntegrationList
from app.web.payloads.organizations import (
    CodeIn,
    CodeOut,
    IssuerSettingsIn,
    JoinIn,
    MembershipOut,
    MeOut,
    OrganizationDetail,
    OrganizationIn,
    OrganizationList,
    OrganizationOut,
    OrganizationPatch,
)
from app.web.payloads.schemas import SchemaIn, SchemaList, SchemaOut, SchemaPatch
from app.web.payloads.verifications import (
    IssuersSeenList,
    TrustIssuerIn,
    VerificationIn,
    VerificationList,
    VerificationOut,
    VerificationPatch,
)

bp = Blueprint("staff_api", __name__)


# -- the signed-in user and their organizations -------------------------------------------


@bp.get("/me")
@require_session
@documented(
    "The signed-in user, memberships, default and acting organization",
    responses={200: MeOut},
    tags=("organizations",),
)
def me():
    """What the dashboard needs to draw its organization switcher."""
    user = current_user()
    memberships = organizations.memberships_of(user)
    acting = acting_organization() if memberships else None
    return json_response(
        {
            "user": {"id": str(user.id), "email": user.email, "name": user.name},
            "memberships": [render.membership(m) for m in memberships],
            "default_organization_id": str(memberships[0].organization_id) if memberships else None,
            "acting_organization_id": str(acting.id) if acting else None,
        }
    )


@bp.get("/organizations")
@require_session
@documented(
    "Organizations the user belongs to",
    responses={200: OrganizationList},
    tags=("organizations",),
)
def list_organizations():
    """Oldest membership first: that one is the default organization."""
    refuse_unknown_args()
    memberships = organizations.memberships_of(current_user())
    return json_response(listing(memberships, len(memberships), render.membership))


@bp.post("/organizations")
@require_session
@documented(
    "Create an organization (the creator is OWNER; new ones are FREE)",
    body=OrganizationIn,
    responses={201: OrganizationOut},
    tags=("organizations",),
)
def create_organization():
    """New organizations start on the Free plan."""
    body = parse_body(OrganizationIn)
    return json_response(
        render.organization(organizations.create_organization(current_user(), body.name)), 201
    )


@bp.get("/organizations/<organization_id>")
@require_session
@documented(
    "One organization with its members",
    responses={200: OrganizationDetail},
    tags=("organizations",),
)
def get_organization(organization_id: str):
    """Only members see an organization; to anyone else it does not exist."""
    member = organizations.membership(current_user(), parse_id(organization_id))
    if member is None:
        raise NotFound()
    return json_response(organization_detail(member))


def organization_detail(member) -> dict:
    return {
        **render.organization(member.organization),
        "role": member.role.value,
        "members": [render.member(m) for m in organizations.members_of(member.organization)],
    }


@bp.patch("/organizations/<organization_id>")
@require_session
@documented(
    "Change an organization's settings (owners and admins): its support contact, the "
    "answer shape of its API (api_compatibility) and the transaction data types its backend "
    "may attach (transaction_data_types)",
    body=OrganizationPatch,
    responses={200: OrganizationDetail},
    tags=("organizations",),
)
def patch_organization(organization_id: str):
    """A member that is not an owner or admin is refused (403); to others it does not exist.
    A member left out keeps its value."""
    member = organizations.membership(current_user(), parse_id(organization_id))
    if member is None:
        raise NotFound()
    body = parse_body(OrganizationPatch)
    if "support_contact" in body.model_fields_set:
        organizations.set_support_contact(member, body.support_contact)
    if "api_compatibility" in body.model_fields_set:
        organizations.set_api_compatibility(member, body.api_compatibility)
    if "transaction_data_types" in body.model_fields_set:
        organizations.set_transaction_data_types(member, list(body.transaction_data_types))
    return json_response(organization_detail(member))


@bp.post("/organizations/<organization_id>/codes")
@require_session
@tier_gated("Minting organization codes")
@documented(
    "Mint an invitation code for the acting organization (tier-gated; shown once)",
    body=CodeIn,
    responses={201: CodeOut},
    tags=("organizations",),
)
def mint_code(organization_id: str):
    """The path must name the acting organization, the one whose plan was checked."""
    member = acting_membership()
    organizations.require_acting(member, parse_id(organization_id))
    body = parse_body(CodeIn)
    value, code = organizations.mint_code(member, body.days, Role(body.role))
    return json_response(
        {
            "code": value,
            "organization_id": str(code.organization_id),
            "role": code.role.value,
            "expires_at": code.expires_at.isoformat(),
        },
        201,
    )


@bp.put("/organizations/<organization_id>/issuer")
@require_session
@documented(
    "Settings of the organization's credential issuer (owners and admins): wallet_attestation "
    "required, optional (the default) or off",
    body=IssuerSettingsIn,
    responses={200: OrganizationOut},
    tags=("organizations",),
)
def set_issuer_settings(organization_id: str):
    """The path must name the acting organization."""
    member = acting_membership()
    organizations.require_acting(member, parse_id(organization_id))
    body = parse_body(IssuerSettingsIn)
    return json_response(
        render.organization(organizations.set_issuer_settings(member, body.wallet_attestation))
    )


@bp.post("/organizations/join")
@require_session
@documented(
    "Join an organization with an invitation code (404 when unknown or expired)",
    body=JoinIn,
    responses={200: MembershipOut},
    tags=("organizations",),
)
def join_organization():
    """Joining twice is harmless and returns the existing membership."""
    body = parse_body(JoinIn)
    return json_response(render.membership(organizations.join_with_code(current_user(), body.code)))


# -- integrations -------------------------------------------------------------------------


@bp.get("/integrations")
@require_session
@documented(
    "Integrations of the acting organization (keys are never shown again)",
    responses={200: IntegrationList},
    tags=("integrations",),
)
def list_integrations():
    """Prefix and last use only: the key itself was shown once."""
    refuse_unknown_args()
    rows = integrations.list_integrations(acting_organization())
    return json_response(listing(rows, len(rows), render.integration))


@bp.post("/integrations")
@require_session
@tier_gated("Creating an integration key")
@documented(
    "Create an integration and its key (tier-gated; the key is shown once)",
    body=IntegrationIn,
    responses={201: IntegrationCreated},
    tags=("integrations",),
)
def create_integration():
    """The only response that ever contains the Secret Key."""
    body = parse_body(IntegrationIn)
    key, row = integrations.create_integration(acting_organization(), body.name)
    return json_response({**render.integration(row), "key": key}, 201)


@bp.delete("/integrations/<integration_id>")
@require_session
@documented(
    "Delete an integration; its key fails with 401 from then on",
    responses={204: None},
    tags=("integrations",),
)
def delete_integration(integration_id: str):
    """Rotation: add a second integration, move traffic, delete the first."""
    return deleted(integrations.delete_integration, integration_id)


# -- schemas ------------------------------------------------------------------------------


@bp.get("/schemas")
@require_session
@documented(
    "The organization's schemas and the public ones",
    responses={200: SchemaList},
    query=PAGING_QUERY,
    tags=("schemas",),
)
def list_schemas():
    """Public schemas that ship with the service come first."""
    rows, total = schemas.list_schemas(acting_organization(), *list_args())
    return json_response(listing(rows, total, render.schema))


@bp.post("/schemas")
@require_session
@documented(
    "Create a schema (a draft until published)",
    body=SchemaIn,
    responses={201: SchemaOut},
    tags=("schemas",),
)
def create_schema():
    """Drafts can be edited freely; publishing makes them usable for issuing."""
    body = parse_body(SchemaIn)
    return json_response(
        render.schema(schemas.create_schema(acting_organization(), body.model_dump(), base_url())),
        201,
    )


@bp.get("/schemas/<schema_id>")
@require_session
@documented("One schema", responses={200: SchemaOut}, tags=("schemas",))
def get_schema(schema_id: str):
    """The organization's own or a public one."""
    return json_response(
        render.schema(schemas.get_schema(acting_organization(), parse_id(schema_id)))
    )


@bp.put("/schemas/<schema_id>")
@require_session
@documented("Update a schema", body=SchemaPatch, responses={200: SchemaOut}, tags=("schemas",))
def update_schema(schema_id: str):
    """Fields left out keep their value; public schemas cannot be changed."""
    body = parse_body(SchemaPatch)
    row = schemas.update_schema(
        acting_organization(),
        parse_id(schema_id),
        body.model_dump(exclude_unset=True),
        base_url(),
    )
    return json_response(render.schema(row))


@bp.post("/schemas/<schema_id>/publish")
@require_session
@documented("Publish a schema", responses={200: SchemaOut}, tags=("schemas",))
def publish_schema(schema_id: str):
    """Publishing is idempotent."""
    return json_response(
        render.schema(schemas.publish_schema(acting_organization(), parse_id(schema_id)))
    )


# -- verification definitions -------------------------------------------------------------


@bp.get("/verifications")
@require_session
@documented(
    "Verification definitions of the acting organization",
    responses={200: VerificationList},
    query=PAGING_QUERY,
    tags=("verifications",),
)
def list_verifications():
    """Newest first."""
    rows, total = verifications.list_verifications(acting_organization(), *list_args())
    return json_response(listing(rows, total, render.verification))


@bp.post("/verifications")
@require_session
@tier_gated("Creating a verification")
@idempotent()
@documented(
    "Create a verification request (tier-gated)",
    body=VerificationIn,
    responses={201: VerificationOut},
    tags=("verifications",),
)
def create_verification():
    """Conditions are checked against the schema here, not at presentation time."""
    body = parse_body(VerificationIn)
    organization = acting_organization()
    row = verifications.create_verification(
        organization, body.model_dump(), IssuerLinks(base_url()).issuer(organization.id)
    )
    return json_response(render.verification_answer(row), 201)


@bp.get("/verifications/<record:verification_id>")
@require_session
@documented(
    "One verification definition", responses={200: VerificationOut}, tags=("verifications",)
)
def get_verification(verification_id: str):
    """Another organization's verification reads as missing."""
    return json_response(
        render.verification(
            verifications.get_verification(acting_organization(), parse_id(verification_id))
        )
    )


@bp.route("/verifications/<record:verification_id>", methods=["PATCH", "PUT"])
@require_session
@documented(
    "Update a verification definition: the fields sent change, the others keep their value",
    body=VerificationPatch,
    responses={200: VerificationOut},
    tags=("verifications",),
)
def update_verification(verification_id: str):
    """A partial update, under PATCH (its documented method) and PUT (which clients already use)."""
    body = parse_body(VerificationPatch)
    row = verifications.update_verification(
        acting_organization(), parse_id(verification_id), body.model_dump(exclude_unset=True)
    )
    return json_response(render.verification_answer(row))


@bp.post("/verifications/<verification_id>/link-secret")
@require_session
@documented(
    'A new link secret for customer_sig (anonymous_open "signed"); the old one stops working',
    responses={200: VerificationOut},
    tags=("verifications",),
)
def rotate_link_secret(verification_id: str):
    """The answer is the only place the new secret is shown."""
    row = verifications.rotate_link_secret(acting_organization(), parse_id(verification_id))
    return json_response(render.verification_answer(row))


@bp.delete("/verifications/<record:verification_id>")
@require_session
@documented(
    "Delete a verification definition (its individuals' history is kept)",
    responses={204: None},
    tags=("verifications",),
)
def delete_verification(verification_id: str):
    """New individuals can no longer be opened against it."""
    return deleted(verifications.delete_verification, verification_id)


@bp.get("/verifications/<verification_id>/issuers-seen")
@require_session
@documented(
    "The issuers its presentations named, refused ones included, the most recently seen first",
    responses={200: IssuersSeenList},
    tags=("verifications",),
)
def list_issuers_seen(verification_id: str):
    """What "Trust this issuer" offers, with how often each was refused as untrusted."""
    seen = issuers_seen.issuers_seen(acting_organization(), parse_id(verification_id))
    return json_response({"results": [render.issuer_seen(row) for row in seen]})


@bp.post("/verifications/<verification_id>/trusted-issuers")
@require_session
@documented(
    "Trust an issuer its presentations named: added to trusted_issuers; a did:prism whose "
    "long form a presentation revealed is also pinned for the organization",
    body=TrustIssuerIn,
    responses={200: VerificationOut},
    tags=("verifications",),
)
def trust_issuer(verification_id: str):
    """Only an issuer seen (400 ``ISSUER_NOT_SEEN`` otherwise); trusting it twice changes
    nothing."""
    body = parse_body(TrustIssuerIn)
    row = issuers_seen.trust_issuer(acting_organization(), parse_id(verification_id), body.issuer)
    return json_response(render.verification(row))


@bp.get("/verifications/<verification_id>/individuals")
@require_session
@documented(
    "Individuals of a verification, newest first",
    responses={200: IndividualList},
    query=PAGING_QUERY,
    tags=("verifications",),
)
def list_individuals(verification_id: str):
    """With the claims each one disclosed."""
    rows, total = verifications.list_individuals(
        acting_organization(), parse_id(verification_id), *list_args()
    )
    here = links()
    return json_response(listing(rows, total, lambda row: render.individual_for_owner(row, here)))


# -- plan ---------------------------------------------------------------------------------


@bp.post("/vouchers/exchange")
@require_session
@documented(
    "Redeem a plan voucher for the acting organization (throttled per IP)",
    body=VoucherIn,
    responses={200: OrganizationOut},
    tags=("plan",),
)
def exchange_voucher():
    """404 unknown code, 409 already redeemed or already on a paid plan, 429 too many tries."""
    body = parse_body(VoucherIn)
    organization = vouchers.redeem_voucher(acting_organization(), current_user(), body.code)
    return json_response(render.organization(organization))


@bp.post("/billing/checkout")
@require_session
@documented(
    "Start a plan purchase with the payment processor",
    body=CheckoutIn,
    responses={200: RedirectOut},
    tags=("plan",),
)
def billing_checkout():
    """503 when billing is not configured, 502 when the processor fails, 409 when already paid."""
    body = parse_body(CheckoutIn)
    url = billing.start_checkout(
        current_app.extensions.get("billing"),
        acting_organization(),
        Plan(body.plan),
        body.return_url or base_url(),
    )
    return json_response({"url": url})


@bp.post("/billing/portal")
@require_session
@documented(
    "Open the payment processor's billing portal",
    body=PortalIn,
    responses={200: RedirectOut},
    tags=("plan",),
)
def billing_portal():
    """409 when the organization has no billing account yet."""
    body = parse_body(PortalIn)
    url = billing.open_portal(
        current_app.extensions.get("billing"), acting_organization(), body.return_url or base_url()
    )
    return json_response({"url": url})


# -- verifier identity --------------------------------------------------------------------


def deployment_host() -> str:
    """The host wallets reach this deployment at: the one a certificate may name."""
    return (urlsplit(base_url()).hostname or "").lower()


def identity_response():
    registrar = current_app.extensions.get(REGISTRAR_EXTENSION) is not None
    return json_response(
        shown.describe(verifier_identity.identity_of(acting_organization(), registrar=registrar))
    )


@bp.get("/verifier-identity")
@require_session
@documented(
    "Whose identity the acting organization's requests carry: its certificate, the signing "
    "request waiting for a chain, its logo and registration certificate",
    responses={200: VerifierIdentityOut},
    tags=("verifier identity",),
)
def get_verifier_identity():
    """Without a certificate of its own, the organization's requests are the deployment's."""
    return identity_response()


@bp.post("/verifier-identity/signing-request")
@require_session
@documented(
    "Generate a P-256 key and a PKCS#10 certificate signing request for the registrar "
    "(owners and admins; the certificate in use keeps signing until a chain is uploaded)",
    body=SigningRequestIn,
    responses={201: SigningRequestOut},
    tags=("verifier identity",),
)
def create_signing_request():
    """CN and O are the organization's name; the private key never leaves the service."""
    body = parse_body(SigningRequestIn)
    key = verifier_identity.request_certificate(
        acting_membership(),
        body.country,
        body.name_host,
        deployment_host(),
        eu_details(body),
        body.relying_party or "",
    )
    return json_response(shown.signing_request(key), 201)


# -- issuer certificates --------------------------------------------------------------------


def _issuer_certificate():
    organization = acting_organization()
    issuer = IssuerLinks(base_url()).issuer(organization.id)
    return json_response(issuer_certificates.describe(organization, issuer))


@bp.get("/issuer/certificate")
@require_session
@documented(
    "The organization's issuer root certificate (made on first use) and the x5c chain its "
    "SD-JWT VCs and status lists carry",
    responses={200: IssuerCertificateOut},
    tags=("issuer certificates",),
)
def get_issuer_certificate():
    """Verifiers outside the deployment trust the root (a PEM trust source)."""
    return _issuer_certificate()


@bp.put("/issuer/certificate")
@require_session
@documented(
    "Upload a chain from the organization's CA for the current issuer key (PEM, issuing "
    "certificate first, root last; the first names the issuer URL as a URI subjectAltName); "
    "credentials carry it from now on (owners and admins)",
    body=CertificateChainIn,
    responses={200: IssuerCertificateOut},
    tags=("issuer certificates",),
)
def upload_issuer_certificate():
    """400 INVALID_CERTIFICATE_CHAIN for a chain not for the key, the issuer, or in order."""
    body = parse_body(CertificateChainIn)
    membership = acting_membership()
    issuer = IssuerLinks(base_url()).issuer(membership.organization_id)
    issuer_certificates.upload_chain(membership, body.chain_pem, issuer)
    return _issuer_certificate()


def _mdoc_signer():
    membership = acting_membership()
    issuer = IssuerLinks(base_url()).issuer(membership.organization_id)
    return json_response(mdoc_signer.describe(membership, issuer))


@bp.get("/issuer/mdoc-signer")
@require_session
@documented(
    "The organization's mdoc IACA root and document signer certificate (made on first use), "
    "and whether the IACA is the organization's own",
    responses={200: MdocSignerOut},
    tags=("issuer certificates",),
)
def get_mdoc_signer():
    """Verifiers trust the IACA; mdocs carry the document signer in x5chain."""
    return _mdoc_signer()


@bp.get("/issuer/mdoc-signer/signing-request")
@require_session
@documented(
    "A PKCS#10 signing request for the document signer key this service holds, for the "
    "organization's own IACA to certify (owners and admins); the key never leaves the service",
    responses={200: MdocSigningRequestOut},
    tags=("issuer certificates",),
)
def get_mdoc_signing_request():
    """The same key on every call: a request downloaded earlier stays good."""
    membership = acting_membership()
    issuer = IssuerLinks(base_url()).issuer(membership.organization_id)
    return json_response({"csr_pem": mdoc_signer.signing_request(membership, issuer)})


@bp.put("/issuer/mdoc-signer")
@require_session
@documented(
    "Upload the chain the organization's IACA issued for the signing request (PEM, document "
    "signer first, IACA last); mdocs carry it from now on and /iaca serves the IACA (owners "
    "and admins)",
    body=CertificateChainIn,
    responses={200: MdocSignerOut},
    tags=("issuer certificates",),
)
def upload_mdoc_signer():
    """400 INVALID_CERTIFICATE_CHAIN for a chain not for the key, out of order, outside its
    validity, without the mdoc DS extended key usage, or whose root is not a CA."""
    body = parse_body(CertificateChainIn)
    membership = acting_membership()
    issuer = IssuerLinks(base_url()).issuer(membership.organization_id)
    mdoc_signer.upload_chain(membership, body.chain_pem, issuer)
    return _mdoc_signer()


@bp.put("/verifier-identity/certificate")
@require_session
@documented(
    "Upload the chain (PEM, leaf first) issued for the signing request; the organization's "
    "requests are signed with it from now on (owners and admins)",
    body=AccessCertificateChainIn,
    responses={200: VerifierIdentityOut, 409: ErrorOut},
    tags=("verifier identity",),
)
def upload_certificate():
    """400 INVALID_CERTIFICATE_CHAIN for a chain that is not the key's, out of order, or
    outside its validity; 400 ACCESS_CERTIFICATE_PROFILE (``unmet``: each requirement by name)
    for an EU access certificate request whose leaf misses ETSI TS 119 411-8; 409
    NO_SIGNING_REQUEST before any CSR."""
    body = parse_body(AccessCertificateChainIn)
    verifier_identity.upload_chain(
        acting_membership(), body.chain_pem, deployment_host(), body.relying_party or ""
    )
    return identity_response()


@bp.delete("/verifier-identity/certificate")
@require_session
@documented(
    "Stop using the organization's certificate: its requests carry the deployment's identity "
    "again (owners and admins)",
    query={
        "relying_party": "An intermediated relying party's certificate (left out: the "
        "organization's own)"
    },
    responses={204: None, 409: ErrorOut},
    tags=("verifier identity",),
)
def remove_certificate():
    """409 NO_ACTIVE_CERTIFICATE when none is in use; ``?relying_party=`` names an
    intermediated relying party's."""
    verifier_identity.stop_using(acting_membership(), request.args.get("relying_party", ""))
    return "", 204


@bp.put("/verifier-identity/profile")
@require_session
@documented(
    "Set the logo (client_metadata.logo_uri) sent with the organization's signed requests "
    "(owners and admins)",
    body=VerifierProfilePatch,
    responses={200: VerifierIdentityOut},
    tags=("verifier identity",),
)
def update_verifier_profile():
    """Fields left out keep their value; null clears one."""
    body = parse_body(VerifierProfilePatch)
    verifier_identity.update_profile(acting_membership(), body.model_dump(exclude_unset=True))
    return identity_response()


@bp.get("/verifier-identity/registration-certificates")
@require_session
@documented(
    "The organization's registration certificates (ETSI TS 119 475), each with what it "
    "permits a verification to ask for and the purpose it states",
    responses={200: RegistrationCertificateList},
    tags=("verifier identity",),
)
def list_registration_certificates():
    """Oldest first; each as checked at upload."""
    records = registration.list_for(acting_organization())
    return json_response({"results": [registration.describe(r) for r in records]})


@bp.post("/verifier-identity/registration-certificates")
@require_session
@documented(
    "Upload a registration certificate from the organization's registrar (owners and "
    "admins): checked against ETSI TS 119 475 (typ, alg, x5c to a trusted registrar, sub "
    "naming the access certificate's relying party, validity, status)",
    body=RegistrationCertificateIn,
    responses={201: RegistrationCertificateOut},
    tags=("verifier identity",),
)
def upload_registration_certificate():
    """400 INVALID_REGISTRATION_CERTIFICATE with the reason for one a wallet would refuse."""
    body = parse_body(RegistrationCertificateIn)
    record = registration.upload(acting_membership(), body.registration_certificate)
    return json_response(registration.describe(record), 201)


@bp.delete("/verifier-identity/registration-certificates/<certificate_id>")
@require_session
@documented(
    "Remove a registration certificate (owners and admins); refused while a verification names it",
    responses={204: None, 409: ErrorOut},
    tags=("verifier identity",),
)
def delete_registration_certificate(certificate_id: str):
    """409 REGISTRATION_CERTIFICATE_IN_USE while a verification is made under it."""
    registration.delete(acting_membership(), parse_id(certificate_id))
    return "", 204
