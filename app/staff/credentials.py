"""The dashboard's credentials: issue one to a recipient, many from a CSV, follow their status,
resend an offer, revoke.

The issue form is built from the chosen schema's attributes (one typed input each) and sends
the body ``POST /credentials`` accepts, validated by the same model and issued by the same
operations. Each form's POST redirects (303) to a page a reload cannot post again; a
transaction code exists in clear only in the POST that created it, so it rides to that page
sealed in the session (``app.web.shown_once``), never in the URL, and is shown once. A CSV
upload's codes, too many for a cookie, are kept sealed with the claim of its form's nonce, which
also keeps the same form from issuing twice (``app.staff.upload_results``). Offer emails leave
after the issuance is committed (``app.mail``); a relay failure is shown on the page and the
offer page link stays there to share another way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from flask import render_template, request, url_for
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app import mail
from app.database import reading
from app.errors import ApiError, InvalidRequest, NotFound, describe_validation_error
from app.extensions import db
from app.issuance import operations as issuing
from app.issuance import search
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialStatus
from app.issuance.operations import IssueCredential, IssuedOffer
from app.issuance.search import CredentialFilter
from app.organizations.models import Organization
from app.organizations.operations import require_paid_plan
from app.recipients.models import Recipient
from app.recipients.operations import list_recipients
from app.schemas.models import Schema
from app.schemas.operations import list_schemas
from app.staff import upload_results as uploads
from app.staff.blueprint import bp, navigate
from app.staff.credential_upload import (
    MAX_ROWS,
    UploadRefused,
    read_csv,
    resolve_recipients,
    typed_claims,
)
from app.staff.mail_words import mail_outcome
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
# Rows issued per transaction of a CSV upload: long enough to amortize a commit, short
# enough that another writer of the same SQLite file is not held up noticeably.
ISSUE_BATCH = 20
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
        }
    )


def email_offer(credential: Credential) -> None:
    """Queue the email with the offer page's link; it leaves when the issuance commits."""
    recipient = credential.recipient
    if not recipient.email:
        return
    mail.send_offer(
        to=recipient.email,
        recipient_name=f"{recipient.first_name} {recipient.last_name}",
        organization=credential.organization.name,
        credential=credential.name,
        offer_page=links().offer_page(credential) or "",
        expires_at=credential.offer_expires_at,
        tx_code_required=credential.tx_code_hash is not None,
        reference=str(credential.id),
    )


def commit_and_mail(offers: list[IssuedOffer]) -> list[str]:
    """Commit the issuance here rather than at the request's end, so the page can say whether
    each email left; returns the IDs of the credentials whose email failed."""
    for offer in offers:
        email_offer(offer.credential)
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
) -> tuple[str, int]:
    page = render_template(
        "staff/credentials/upload.html",
        values=values,
        schemas=issuable_schemas(organization),
        problems=problems or [],
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
    upload = read_csv(sent.read(), schema.attributes)
    recipients, problems = resolve_recipients(organization, upload)
    found = Bodies(problems=problems)
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
    """Every row is checked before anything is issued, and outside any write transaction;
    then the form's nonce is claimed and the rows are issued ``ISSUE_BATCH`` at a time, each
    batch committed on its own; the browser is sent to the results (Post/Redirect/Get).

    On SQLite every organization writes to one file: an upload issued in one transaction
    held the write lock for seconds, and every other writer (a person opening their page)
    waited that long. Now another writer waits for one batch at most. The same form sent
    again issues nothing (``upload_results``): its nonce is claimed, and committed, first.
    """
    organization = acting_organization()
    require_paid_plan(organization, GATED_ACTION)
    values = form_values()
    nonce = uploads.sent_nonce()
    if nonce is None:
        return upload_page(organization, values, 400, [uploads.STALE_FORM])
    if uploads.already_sent(organization.id, nonce):
        return uploads.to_results(nonce, uploads.SENT_TWICE)
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
        db.session.commit()
    claimed = uploads.claim(organization.id, nonce)
    if claimed is None:
        return uploads.to_results(nonce, uploads.SENT_TWICE)
    db.session.commit()  # from here on the same form sent again finds the claim
    issued = issue_in_batches(organization, found)
    uploads.keep_results(claimed, issued.offers, issued.undelivered, issued.stopped)
    return uploads.to_results(nonce)


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


@dataclass
class Issued:
    offers: list[IssuedOffer] = field(default_factory=list)
    undelivered: list[str] = field(default_factory=list)
    # Why issuing stopped before the last row (the rows before it are issued), if it did.
    stopped: str | None = None


def issue_in_batches(organization: Organization, found: Bodies) -> Issued:
    """Issue checked rows in short transactions. A batch that fails now (a recipient deleted
    since the checks, the storage gone) is rolled back and the rest left unissued; the page
    says from which line."""
    issued = Issued()
    for start in range(0, len(found.bodies), ISSUE_BATCH):
        bodies = found.bodies[start : start + ISSUE_BATCH]
        lines = found.lines[start : start + ISSUE_BATCH]
        try:
            offers = issuing.issue_many(organization, bodies, links())
        except ApiError as exc:
            db.session.rollback()
            reasons = by_line(exc.message, lines) if isinstance(exc, InvalidRequest) else []
            issued.stopped = f"Line {lines[0]} and the lines after it were not issued: " + (
                "; ".join(reasons) or exc.message
            )
            break
        issued.offers.extend(offers)
        issued.undelivered.extend(commit_and_mail(offers))
    return issued


# -- on a recipient's page ------------------------------------------------------------------


def of_recipient(organization: Organization, recipient: Recipient) -> dict[str, Any]:
    """What the recipient's page shows of their credentials, newest first."""
    rows, _ = issuing.list_credentials(
        organization, recipient_id=recipient.id, page=1, limit=RECIPIENT_CREDENTIALS
    )
    return {"credentials": rows, "status_words": STATUS_WORDS}
