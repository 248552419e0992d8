"""The dashboard's credentials: issue one to a recipient, many from a CSV, follow their status,
resend an offer, revoke.

The issue form is built from the chosen schema's attributes (one typed input each) and sends
the body ``POST /credentials`` accepts, validated by the same model and issued by the same
operations. Each form's POST redirects (303) to a page a reload cannot post again; a
transaction code exists in clear only in the POST that created it, so it rides to that page
sealed in the session (``app.web.shown_once``), never in the URL, and is shown once. A CSV
upload is only read and checked here, then recorded for a background job to issue
(``app.issuance.uploads``, ``app.staff.upload_jobs``); its codes, too many for a cookie, are
kept sealed with it, and its form's claimed nonce keeps the same form from being recorded twice
(``app.staff.upload_results``). Offer emails leave
after the issuance is committed (``app.mail``); a relay failure is shown on the page and the
offer page link stays there to share another way.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from flask import render_template, request, url_for
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app import clock, mail
from app.audit import operations as audit
from app.database import reading
from app.errors import ApiError, InvalidRequest, NotFound, describe_validation_error
from app.extensions import db
from app.issuance import operations as issuing
from app.issuance import search
from app.issuance import uploads as bulk
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialStatus, CredentialUpload
from app.issuance.operations import IssueCredential, IssuedOffer
from app.issuance.search import CredentialFilter
from app.organizations.models import Organization
from app.organizations.operations import require_paid_plan
from app.recipients.models import Recipient
from app.recipients.operations import list_recipients
from app.schemas.models import Schema
from app.schemas.operations import list_schemas
from app.staff import upload_jobs
from app.staff import upload_results as uploads
from app.staff.blueprint import bp, navigate
from app.staff.credential_upload import (
    MAX_ROWS,
    UploadRefused,
    read_csv,
    resolve_recipients,
    typed_claims,
)
from app.staff.mail_words import email_offer, mail_outcome
from app.staff.page_kit import finished, refusal
from app.web import shown_once
from app.web.access import acting_organization, require_staff
from app.web.csv_export import csv_download
from app.web.paging import page_args, pager
from app.web.requests import base_url, parse_id

GATED_ACTION = "Issuing a credential"
STATUSES = ("OFFERED", "ISSUED", "REVOKED", "EXPIRED")
STATUS_WORDS = {
    "OFFERED": "Offered",
    "ISSUED": "In the wallet",
    "REVOKED": "Revoked",
    "EXPIRED": "Offer expired",
}
# The upload form's box confirming that a file uploaded before is to be issued again; its
# value is the earlier upload's ID, so one confirmation covers that one repeat.
REPEAT_FIELD = "repeat_of"
# Choices in the form's selects; both lists are paginated and nobody scrolls past these.
SCHEMA_CHOICES, RECIPIENT_CHOICES = 100, 500
# The recipient's page lists this many of their credentials; the list page filters the rest.
RECIPIENT_CREDENTIALS = 100
FORM_FIELDS = ("schema_id", "recipient_id", "name", "description")
CLAIM_PREFIX = "claim."
INPUT_TYPES = {
    "TEXT": "text",
    "NUMBER": "number",
    "BOOLEAN": "select",
    "URL": "url",
    "DATETIME": "date",
    "EMAIL": "email",
}


def links() -> IssuerLinks:
    return IssuerLinks(base_url())


# -- the list -------------------------------------------------------------------------------


def status_filter() -> str | None:
    """``?status=`` when it is one of the four, else no filter (a link is not a form error)."""
    status = request.args.get("status", "").upper()
    return status if status in STATUSES else None


def credential_filter() -> CredentialFilter:
    """``?recipient=`` (part of a name or email) and ``?status=``."""
    status = status_filter()
    recipient = request.args.get("recipient", "").strip()[:200]
    return CredentialFilter(
        recipient=recipient or None, status=CredentialStatus(status) if status else None
    )


def chosen_filters() -> dict[str, str]:
    """The filters as given, kept in the pager's and the export's links."""
    chosen = credential_filter()
    kept = {"recipient": chosen.recipient, "status": chosen.status}
    return {name: str(value) for name, value in kept.items() if value}


@bp.get("/credentials")
@require_staff
def credentials() -> ResponseReturnValue:
    """Newest first, found by recipient and status; the links to issue one or many, and to
    export what the filters found."""
    organization = acting_organization()
    offset, limit = page_args()
    rows, total = search.find_credentials(organization.id, credential_filter(), offset, limit)
    chosen = chosen_filters()
    return render_template(
        "staff/credentials/index.html",
        rows=rows,
        status=chosen.get("status"),
        recipient=chosen.get("recipient", ""),
        chosen=chosen,
        statuses=STATUSES,
        status_words=STATUS_WORDS,
        pages=pager("staff.credentials", offset, limit, total, **chosen),
    )


@bp.get("/credentials/export.csv")
@require_staff
def credentials_export() -> ResponseReturnValue:
    """The credentials the filters find, as CSV; claim values only with ``?claims=1``."""
    organization_id = acting_organization().id
    chosen = credential_filter()
    with_claims = request.args.get("claims") == "1"
    header = [
        "id",
        "name",
        "status",
        "recipient",
        "recipient_email",
        "schema_id",
        "created_at",
        "issued_at",
        "revoked_at",
        "offer_expires_at",
    ]

    def rows() -> Iterator[list[Any]]:
        with reading():
            for batch in search.each_credential(organization_id, chosen):
                for c in batch:
                    row = [
                        c.id,
                        c.name,
                        c.status.value,
                        f"{c.recipient.first_name} {c.recipient.last_name}",
                        c.recipient.email,
                        c.schema_id,
                        c.created_at,
                        c.issued_at,
                        c.revoked_at,
                        c.offer_expires_at,
                    ]
                    yield [*row, json.dumps(c.claims, ensure_ascii=False)] if with_claims else row

    return csv_download("credentials.csv", [*header, "claims"] if with_claims else header, rows())


# -- issuing one ----------------------------------------------------------------------------


def issuable_schemas(organization: Organization) -> list[Schema]:
    """Published schemas the organization sees: its own and the public ones."""
    return [s for s in list_schemas(organization, 0, SCHEMA_CHOICES)[0] if s.published]


def form_values() -> dict[str, str]:
    values = {name: request.values.get(name, "") for name in FORM_FIELDS}
    values["tx_code"] = "on" if request.values.get("tx_code") else ""
    values["protocol"] = "didcomm" if request.values.get("protocol") == "didcomm" else "openid4vci"
    for name, value in request.values.items():
        if name.startswith(CLAIM_PREFIX):
            values[name] = value
    return values


def claim_values(values: dict[str, str]) -> dict[str, str]:
    return {
        k.removeprefix(CLAIM_PREFIX): v for k, v in values.items() if k.startswith(CLAIM_PREFIX)
    }


def form_page(
    organization: Organization, values: dict[str, str], status: int = 200, error: str | None = None
) -> tuple[str, int]:
    schemas = issuable_schemas(organization)
    schema = next((s for s in schemas if str(s.id) == values.get("schema_id")), None)
    if schema is None and schemas and not values.get("schema_id"):
        schema = schemas[0]
        values = {**values, "schema_id": str(schema.id)}
    page = render_template(
        "staff/credentials/new.html",
        values=values,
        claims=claim_values(values),
        schemas=schemas,
        schema=schema,
        recipients=list_recipients(organization, 0, RECIPIENT_CHOICES)[0],
        input_types=INPUT_TYPES,
        error=error,
        mail_delivers=mail.delivers(),
    )
    return page, status


@bp.get("/credentials/new")
@require_staff
def credentials_new() -> ResponseReturnValue:
    """The issue form, on the first published schema or the one chosen; gated like the API."""
    organization = acting_organization()
    require_paid_plan(organization, GATED_ACTION)
    return form_page(organization, form_values())


@bp.get("/credentials/attributes")
@require_staff
def credentials_attributes() -> ResponseReturnValue:
    """htmx: the inputs of the chosen schema's attributes, keeping what was typed."""
    organization = acting_organization()
    values = form_values()
    schemas = issuable_schemas(organization)
    schema = next((s for s in schemas if str(s.id) == values.get("schema_id")), None)
    return render_template(
        "staff/credentials/_attributes.html",
        schema=schema,
        claims=claim_values(values),
        input_types=INPUT_TYPES,
    )


def issue_body(organization: Organization, values: dict[str, str]) -> IssueCredential:
    """The JSON API's body from the form; a value that does not fit its type is refused
    before anything is stored."""
    schemas = issuable_schemas(organization)
    schema = next((s for s in schemas if str(s.id) == values["schema_id"]), None)
    if schema is None:
        raise InvalidRequest("Choose one of the published schemas in the list")
    try:
        claims = typed_claims(schema.attributes, claim_values(values))
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None
    return IssueCredential.model_validate(
        {
            "name": values["name"] or schema.name,
            "description": values["description"],
            "schema_id": values["schema_id"],
            "recipient_id": values["recipient_id"],
            "claims": claims,
            "tx_code": bool(values["tx_code"]),
            "protocol": values.get("protocol") or "openid4vci",
        }
    )


def commit_and_mail(offers: list[IssuedOffer]) -> list[str]:
    """Commit the issuance here rather than at the request's end, so the page can say whether
    each email left; returns the IDs of the credentials whose email failed."""
    for offer in offers:
        email_offer(offer.credential, links())
    db.session.commit()
    return mail.undelivered()


def form_refusal(exc: ValidationError | ApiError) -> tuple[str, int]:
    """A recipient or schema that is not the organization's is the form's problem here."""
    if isinstance(exc, NotFound):
        db.session.rollback()
        return "Choose one of your recipients and one of the schemas in the list.", 400
    return refusal(exc, missing_record_is_a_page=False)


@bp.post("/credentials/new")
@require_staff
def credentials_create() -> ResponseReturnValue:
    """Issue, or re-render on "Choose"; the offer email leaves once the issuance is stored."""
    organization = acting_organization()
    require_paid_plan(organization, GATED_ACTION)
    values = form_values()
    if request.form.get("action") == "choose":
        return form_page(organization, values)
    try:
        offer = issuing.issue_credential(organization, issue_body(organization, values), links())
    except (ValidationError, ApiError) as exc:
        message, status = form_refusal(exc)
        return form_page(organization, values, status, message)
    return shown_on_detail(offer, created=True)


# -- one credential -------------------------------------------------------------------------


def the_credential(credential_id: str) -> Credential:
    """The acting organization's credential; anyone else's reads as not found (404 page)."""
    return issuing.get_credential(acting_organization(), parse_id(credential_id))


def detail_page(credential: Credential, status: int = 200, **extra: Any) -> tuple[str, int]:
    page = render_template(
        "staff/credentials/detail.html",
        credential=credential,
        status_words=STATUS_WORDS,
        offer_page=links().offer_page(credential),
        **extra,
    )
    return page, status


def shown_on_detail(offer: IssuedOffer, **what: bool) -> ResponseReturnValue:
    """Commit, mail, and send the browser to the credential's page with the tx_code sealed
    for that one view."""
    undelivered = commit_and_mail([offer])
    credential = offer.credential
    shown_once.keep_for_next_page(
        f"credential:{credential.id}",
        tx_code=offer.tx_code,
        mail_outcome=mail_outcome(credential, undelivered),
        **what,
    )
    return navigate(url_for("staff.credentials_detail", credential_id=credential.id))


@bp.get("/credentials/<credential_id>")
@require_staff
def credentials_detail(credential_id: str) -> ResponseReturnValue:
    """Its status, recipient, claims, and what can still be done with it; after issuing or
    resending, the offer and its code once."""
    credential = the_credential(credential_id)
    return detail_page(credential, **shown_once.take(f"credential:{credential.id}"))


@bp.post("/credentials/<credential_id>/resend")
@require_staff
def credentials_resend(credential_id: str) -> ResponseReturnValue:
    """A fresh offer (the old link and code stop working) and a fresh email."""
    organization = acting_organization()
    credential = the_credential(credential_id)
    offer = issuing.resend_offer(organization, credential.id, links())
    return shown_on_detail(offer, resent=True)


@bp.get("/credentials/<credential_id>/revoke")
@require_staff
def credentials_confirm_revoke(credential_id: str) -> ResponseReturnValue:
    """Without JavaScript, the confirmation ``hx-confirm`` would have asked for."""
    return render_template(
        "staff/credentials/revoke.html", credential=the_credential(credential_id)
    )


@bp.post("/credentials/<credential_id>/revoke")
@require_staff
def credentials_revoke(credential_id: str) -> ResponseReturnValue:
    """Idempotent, as the API: the status list shows it from the next fetch on."""
    credential = issuing.revoke_credential(acting_organization(), parse_id(credential_id))
    return finished(
        f"“{credential.name}” revoked.", "staff.credentials_detail", credential_id=credential.id
    )


# -- issuing many ---------------------------------------------------------------------------


def upload_page(
    organization: Organization,
    values: dict[str, str],
    status: int = 200,
    problems: list[str] | None = None,
    repeat: CredentialUpload | None = None,
) -> tuple[str, int]:
    page = render_template(
        "staff/credentials/upload.html",
        values=values,
        schemas=issuable_schemas(organization),
        problems=problems or [],
        repeat=repeat,
        repeat_field=REPEAT_FIELD,
        max_rows=MAX_ROWS,
        nonce_field=uploads.NONCE_FIELD,
        nonce=uploads.new_form_nonce(),
    )
    return page, status


@bp.get("/credentials/upload")
@require_staff
def credentials_upload_form() -> ResponseReturnValue:
    """The CSV form and what the file must look like; gated like issuing one."""
    organization = acting_organization()
    require_paid_plan(organization, GATED_ACTION)
    return upload_page(organization, form_values())


@dataclass
class Bodies:
    """One API body per row that passed the form's own checks, and each one's file line."""

    bodies: list[IssueCredential] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    file_name: str = ""
    # SHA-256 of the file's bytes: the same file uploaded again is named before it issues.
    file_sha256: str = ""

    def rows(self) -> Iterator[tuple[int, IssueCredential]]:
        return zip(self.lines, self.bodies, strict=True)

    def add(self, line: int, body: dict[str, Any]) -> None:
        try:
            self.bodies.append(IssueCredential.model_validate(body))
            self.lines.append(line)
        except ValidationError as exc:
            self.problems.append(f"Line {line}: {describe_validation_error(exc)}")


def upload_bodies(organization: Organization, values: dict[str, str]) -> Bodies:
    """The API body of every row, and every problem of every row the form can see (file
    layout, recipients, value types) before the issuing checks see the rest."""
    schema = next(
        (s for s in issuable_schemas(organization) if str(s.id) == values["schema_id"]), None
    )
    if schema is None:
        raise UploadRefused(["Choose one of the published schemas in the list."])
    sent = request.files.get("file")
    if sent is None or not sent.filename:
        raise UploadRefused(["Choose a CSV file to upload."])
    data = sent.read()
    upload = read_csv(data, schema.attributes)
    recipients, problems = resolve_recipients(organization, upload)
    found = Bodies(
        problems=problems, file_name=sent.filename, file_sha256=hashlib.sha256(data).hexdigest()
    )
    for row in upload.rows:
        if row.overflow:
            found.problems.append(f"Line {row.line}: more cells than the header has columns.")
            continue
        try:
            claims = typed_claims(schema.attributes, row.values)
        except ValueError as exc:
            found.problems.append(f"Line {row.line}: {exc}")
            continue
        if row.line in recipients:
            body = {
                "name": values["name"] or schema.name,
                "description": values["description"],
                "schema_id": str(schema.id),
                "recipient_id": str(recipients[row.line]),
                "claims": claims,
                "tx_code": bool(values["tx_code"]),
                "protocol": values.get("protocol") or "openid4vci",
            }
            found.add(row.line, body)
    return found


ROW = re.compile(r"(?:^|; )row (\d+): ")


def by_line(message: str, lines: list[int]) -> list[str]:
    """``issue_many`` numbers bad rows from 1 among those it was given; say their file lines."""
    parts = ROW.split(message)
    if len(parts) < 3:
        return [message]
    pairs = zip(parts[1::2], parts[2::2], strict=True)
    return [f"Line {lines[int(number) - 1]}: {text}" for number, text in pairs]


def line_number(problem: str) -> int:
    head = problem.split(":", 1)[0]
    return int(head.removeprefix("Line ")) if head.startswith("Line ") else 0


@bp.post("/credentials/upload")
@require_staff
def credentials_upload() -> ResponseReturnValue:
    """Read and check the whole file, outside any write transaction; then, in one short
    transaction, claim the form's nonce and record the checked rows for the upload's job,
    and send the browser to the results page, which follows the job (Post/Redirect/Get).

    The request never issues: a thousand rows would hold a web worker for their whole
    length, and every other person's page would wait for a free one. A file this
    organization already uploaded (the same bytes) is named and issued again only when the
    form confirms that repeat (``REPEAT_FIELD`` naming the earlier upload).
    """
    organization = acting_organization()
    require_paid_plan(organization, GATED_ACTION)
    values = form_values()
    nonce = uploads.sent_nonce()
    if nonce is None:
        return upload_page(organization, values, 400, [uploads.STALE_FORM])
    sent = uploads.sent_before(organization.id, nonce)
    if sent is not None:
        return uploads.to_results(sent, uploads.SENT_TWICE)
    db.session.commit()  # the sign-in's transaction ends here; the checks below only read
    with reading():
        try:
            found = checked_upload(organization, values)
        except UploadRefused as exc:
            db.session.rollback()
            return upload_page(organization, values, 400, exc.problems)
        except ApiError as exc:
            message, status = form_refusal(exc)
            return upload_page(organization, values, status, [message])
        earlier = bulk.earlier_upload(organization.id, found.file_sha256)
        db.session.commit()
    if earlier is not None and request.form.get(REPEAT_FIELD) != str(earlier.id):
        return upload_page(organization, values, 409, repeat=earlier)
    claimed = uploads.claim(organization.id, nonce)
    if claimed is None:
        db.session.rollback()
        return uploads.to_results(uploads.sent_before(organization.id, nonce), uploads.SENT_TWICE)
    sender = audit.current_actor()
    assert sender is not None, "a signed-in staff member's POST"
    upload = bulk.create_upload(
        organization.id,
        sender,
        found.file_name,
        found.file_sha256,
        base_url(),
        [bulk.PendingRow(line, body.model_dump(mode="json")) for line, body in found.rows()],
        uploads.secret(),
        clock.now(),
    )
    uploads.keep_upload(claimed, upload)
    db.session.commit()
    upload_jobs.hand_over(upload.id)
    return uploads.to_results(str(upload.id))


def checked_upload(organization: Organization, values: dict[str, str]) -> Bodies:
    """The file's bodies after every check, the form's and the issuing's; raises
    ``UploadRefused`` listing every problem of every row."""
    found = upload_bodies(organization, values)
    if found.problems:
        raise UploadRefused(sorted(found.problems, key=line_number))
    try:
        issuing.check_many(organization, found.bodies)
    except InvalidRequest as exc:
        raise UploadRefused(by_line(exc.message, found.lines)) from None
    return found


# -- on a recipient's page ------------------------------------------------------------------


def of_recipient(organization: Organization, recipient: Recipient) -> dict[str, Any]:
    """What the recipient's page shows of their credentials, newest first."""
    rows, _ = issuing.list_credentials(
        organization, recipient_id=recipient.id, page=1, limit=RECIPIENT_CREDENTIALS
    )
    return {"credentials": rows, "status_words": STATUS_WORDS}
