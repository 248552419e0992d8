"""The dashboard's verifier identity page, under the acting organization's settings: generate
a key and CSR, download the CSR for the registrar, upload the chain it returns, set the logo
that travels with the organization's requests, and upload the registration certificates its
verifications are made under (each listed with what it permits).

The same operations as the staff API (``/verifier-identity``); the private key is never on a
page, in a download or in a notice.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import Response, current_app, render_template, request
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.deployment import REGISTRAR_EXTENSION
from app.errors import ApiError
from app.organizations.operations import MANAGING_ROLES
from app.staff.blueprint import bp
from app.staff.page_kit import finished, refusal
from app.verifier_identity import operations as identity_ops
from app.verifier_identity import registration
from app.verifier_identity import shown as shown_identity
from app.verifier_identity.operations import eu_details
from app.web.access import acting_membership, acting_organization, require_staff
from app.web.payloads.certificates import (
    CertificateChainIn,
    RegistrationCertificateIn,
    SigningRequestIn,
    VerifierProfilePatch,
)
from app.web.requests import base_url

MAX_UPLOAD = 64 * 1024


def deployment_host() -> str:
    return (urlsplit(base_url()).hostname or "").lower()


def identity_page(status: int = 200, **extra: Any) -> ResponseReturnValue:
    organization = acting_organization()
    identity = identity_ops.identity_of(
        organization, registrar=current_app.extensions.get(REGISTRAR_EXTENSION) is not None
    )
    page = render_template(
        "staff/verifier_identity.html",
        organization=organization,
        shown=shown_identity.describe(identity),
        can_manage=acting_membership().role in MANAGING_ROLES,
        host=deployment_host(),
        values={"country": "", **extra.pop("values", {})},
        **extra,
    )
    return page, status


@bp.get("/verifier-identity")
@require_staff
def verifier_identity() -> ResponseReturnValue:
    """Whose identity the organization's requests carry, and the steps to hold its own."""
    return identity_page()


@bp.post("/verifier-identity/signing-request")
@require_staff
def verifier_identity_signing_request() -> ResponseReturnValue:
    """Generate a key and its CSR; the certificate in use keeps signing meanwhile."""
    values = {
        "country": request.form.get("country", ""),
        "name_host": request.form.get("name_host") == "on",
    }
    eu = {
        name: request.form.get(name, "").strip() or None
        for name in ("organization_identifier", "contact_uri", "contact_email")
    }
    try:
        # An organization identifier makes it an EU access certificate request.
        body = SigningRequestIn.model_validate(
            {**values, "eu_access_certificate": eu if eu["organization_identifier"] else None}
        )
        identity_ops.request_certificate(
            acting_membership(), body.country, body.name_host, deployment_host(), eu_details(body)
        )
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return identity_page(status, csr_error=message, values={**values, **eu})
    return finished(
        "A certificate signing request was made: download it and send it to your registrar.",
        "staff.verifier_identity",
    )


@bp.get("/verifier-identity/signing-request.csr")
@require_staff
def verifier_identity_csr_download() -> ResponseReturnValue:
    """The waiting CSR as a PEM file for the registrar."""
    pem = identity_ops.csr_of(acting_organization())
    return Response(
        pem,
        mimetype="application/pkcs10",
        headers={"Content-Disposition": 'attachment; filename="verifier-identity.csr"'},
    )


@bp.post("/verifier-identity/certificate")
@require_staff
def verifier_identity_certificate() -> ResponseReturnValue:
    """The chain the registrar returned, pasted or as a file; checked before it is used."""
    chain = request.form.get("chain_pem", "")
    uploaded = request.files.get("chain_file")
    if uploaded is not None and uploaded.filename:
        chain = uploaded.read(MAX_UPLOAD + 1).decode("utf-8", errors="replace")
    try:
        body = CertificateChainIn.model_validate({"chain_pem": chain})
        identity_ops.upload_chain(acting_membership(), body.chain_pem, deployment_host())
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return identity_page(status, chain_error=message)
    return finished(
        "The certificate is in use: your organization's requests are signed with it.",
        "staff.verifier_identity",
    )


@bp.post("/verifier-identity/certificate/remove")
@require_staff
def verifier_identity_remove() -> ResponseReturnValue:
    """Back to the deployment's identity."""
    try:
        identity_ops.stop_using(acting_membership())
    except ApiError as exc:
        message, status = refusal(exc)
        return identity_page(status, chain_error=message)
    return finished(
        "Your organization's requests carry this deployment's identity again.",
        "staff.verifier_identity",
    )


@bp.post("/verifier-identity/profile")
@require_staff
def verifier_identity_profile() -> ResponseReturnValue:
    """The logo and privacy policy; an empty field clears it."""
    values = {
        "logo_uri": request.form.get("logo_uri", "").strip() or None,
        "privacy_policy_uri": request.form.get("privacy_policy_uri", "").strip() or None,
    }
    try:
        body = VerifierProfilePatch.model_validate(values)
        identity_ops.update_profile(acting_membership(), body.model_dump())
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return identity_page(status, profile_error=message)
    return finished("Saved.", "staff.verifier_identity")


@bp.post("/verifier-identity/registration-certificates")
@require_staff
def verifier_identity_registration_upload() -> ResponseReturnValue:
    """A registration certificate from the registrar, checked before it is kept."""
    token = request.form.get("registration_certificate", "")
    try:
        body = RegistrationCertificateIn.model_validate({"registration_certificate": token})
        registration.upload(acting_membership(), body.registration_certificate)
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return identity_page(status, registration_error=message)
    return finished("The registration certificate is checked and kept.", "staff.verifier_identity")


@bp.post("/verifier-identity/registration-certificates/<certificate_id>/remove")
@require_staff
def verifier_identity_registration_remove(certificate_id: str) -> ResponseReturnValue:
    """Refused while a verification is made under it."""
    try:
        registration.delete(acting_membership(), certificate_id)
    except ApiError as exc:
        message, status = refusal(exc)
        return identity_page(status, registration_error=message)
    return finished("The registration certificate is removed.", "staff.verifier_identity")
