"""The dashboard's mdoc signer page, under the acting organization's settings: the IACA root
verifiers trust for its mdocs and the document signer they carry, and the steps to use the
organization's own IACA instead of the generated one: download a signing request for the
document signer key this service holds, upload the chain the IACA returns.

The same operations as the staff API (``/issuer/mdoc-signer``); no private key is ever on a
page or in a download.
"""

from __future__ import annotations

from typing import Any

from flask import Response, render_template, request
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.errors import ApiError
from app.issuance import mdoc_signer
from app.issuance.links import IssuerLinks
from app.organizations.operations import MANAGING_ROLES
from app.staff.blueprint import bp
from app.staff.page_kit import finished, refusal
from app.web.access import acting_membership, require_staff
from app.web.payloads.certificates import CertificateChainIn
from app.web.requests import base_url

MAX_UPLOAD = 64 * 1024


def _issuer() -> str:
    return IssuerLinks(base_url()).issuer(acting_membership().organization_id)


def signer_page(status: int = 200, **extra: Any) -> ResponseReturnValue:
    membership = acting_membership()
    page = render_template(
        "staff/mdoc_signer.html",
        organization=membership.organization,
        shown=mdoc_signer.describe(membership, _issuer()),
        can_manage=membership.role in MANAGING_ROLES,
        **extra,
    )
    return page, status


@bp.get("/mdoc-signer")
@require_staff
def mdoc_signer_page() -> ResponseReturnValue:
    """The IACA and document signer in use, and how to put the organization's own in."""
    return signer_page()


@bp.get("/mdoc-signer/signing-request.csr")
@require_staff
def mdoc_signer_csr_download() -> ResponseReturnValue:
    """The signing request for the document signer key, as a PEM file for the IACA."""
    pem = mdoc_signer.signing_request(acting_membership(), _issuer())
    return Response(
        pem,
        mimetype="application/pkcs10",
        headers={"Content-Disposition": 'attachment; filename="mdoc-document-signer.csr"'},
    )


@bp.post("/mdoc-signer/certificate")
@require_staff
def mdoc_signer_certificate() -> ResponseReturnValue:
    """The chain the IACA returned, pasted or as a file; checked before it is used."""
    chain = request.form.get("chain_pem", "")
    uploaded = request.files.get("chain_file")
    if uploaded is not None and uploaded.filename:
        chain = uploaded.read(MAX_UPLOAD + 1).decode("utf-8", errors="replace")
    try:
        body = CertificateChainIn.model_validate({"chain_pem": chain})
        mdoc_signer.upload_chain(acting_membership(), body.chain_pem, _issuer())
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return signer_page(status, chain_error=message)
    return finished(
        "Your IACA's chain is in use: new mdocs carry its document signer.",
        "staff.mdoc_signer_page",
    )
