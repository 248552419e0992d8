"""The dashboard's verifications: definitions, their builder form, and who was verified.

The form posts strings; ``app.staff.verification_form`` turns them into the JSON API's body,
which is validated by the same pydantic models and saved by the same operations as
``POST /verifications`` and ``PUT /verifications/<id>``. Every page works without JavaScript:
the builder's "Choose" and "Add a condition" buttons re-render the form server-side, and htmx
only spares the reload (fragments from ``verifications_builder`` and ``verifications_row``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from pydantic import BaseModel, ValidationError

from app.database import reading
from app.errors import ApiError, InvalidRequest, NotFound
from app.integrations.operations import list_integrations
from app.issuance.links import IssuerLinks
from app.organizations.models import Organization
from app.presentations import issuers_seen
from app.schemas.models import Schema
from app.schemas.operations import list_schemas
from app.staff.blueprint import bp, navigate
from app.staff.field_errors import SUMMARY, field_errors
from app.staff.page_kit import refusal
from app.staff.verification_form import (
    OPERATOR_LABELS,
    ConditionRow,
    FormError,
    VerificationForm,
    describe_condition,
    readable_message,
    shown_claims,
)
from app.trust_sources.models import ISSUER_KINDS
from app.trust_sources.operations import KIND_WORDS, list_sources
from app.trust_sources.use import chosen_sources
from app.verifications import operations as verification_ops
from app.verifications import reports, search
from app.verifications.conditions import known_attribute
from app.verifications.models import Status, Verification
from app.verifications.search import IndividualFilter
from app.verifier_identity import registration
from app.web.access import acting_organization, require_staff, tier_gated
from app.web.csv_export import csv_download
from app.web.filters import day_arg, midnight
from app.web.paging import page_args, pager
from app.web.payloads.verifications import VerificationIn, VerificationPatch
from app.web.requests import base_url, parse_id

GATED_ACTION = "Creating a verification"
# Schemas offered in the select; list_schemas is paginated and nobody scrolls past this.
SCHEMA_CHOICES = 100
# Form buttons that re-render the form instead of saving it (the no-JavaScript builder).
CHOOSE, ADD_CONDITION = "choose", "add-condition"

# How an individual was first opened, as the individuals page says it.
OPENER_WORDS = {
    "backend": "Your backend (integration key)",
    "link": "The no-code link",
    "anonymous": "Without a key (anyone knowing the verification ID)",
}
STATUS_WORDS = {
    "CREATED": "Opened",
    "REQUESTED": "Link handed out",
    "VERIFIED": "Verified",
    "FAILED": "Failed",
}


# -- list -----------------------------------------------------------------------------------


@bp.get("/verifications")
@require_staff
def verifications() -> ResponseReturnValue:
    """The acting organization's definitions, newest first."""
    offset, limit = page_args()
    rows, total = verification_ops.list_verifications(acting_organization(), offset, limit)
    return render_template(
        "staff/verifications/list.html",
        rows=rows,
        pages=pager("staff.verifications", offset, limit, total),
    )


# -- the builder form -----------------------------------------------------------------------


def schema_choices(organization: Organization) -> list[Schema]:
    return list_schemas(organization, 0, SCHEMA_CHOICES)[0]


def chosen_schema(form: VerificationForm, schemas: list[Schema]) -> Schema | None:
    return next((s for s in schemas if str(s.id) == form.schema_id), None)


def form_context(form: VerificationForm, schemas: list[Schema]) -> dict[str, Any]:
    schema = chosen_schema(form, schemas)
    return {
        "form": form,
        "schemas": schemas,
        "schema": schema,
        "attribute_names": schema.attribute_names() if schema else [],
        "operators": OPERATOR_LABELS,
        "known_attribute": known_attribute,
        "trust_sources": [s for s in list_sources(acting_organization()) if s.kind in ISSUER_KINDS],
        "source_kinds": KIND_WORDS,
        "registration_certificates": registration.list_for(acting_organization()),
    }


def submitted_form(schemas: list[Schema]) -> VerificationForm:
    """The posted form, and the builder action (choose a schema, add a row) applied to it."""
    form = VerificationForm.from_submission(request.values)
    form.for_schema(chosen_schema(form, schemas))
    if request.values.get("action") == ADD_CONDITION:
        form.conditions.append(ConditionRow())
    return form


def save(
    form: VerificationForm,
    schemas: list[Schema],
    model: type[BaseModel],
    operation: Any,
) -> tuple[Verification | None, tuple[str, int, dict[str, str]] | None]:
    """Validate the form's body with the JSON API's model, then run its operation.

    Returns the saved verification, or what to re-render the form with: the message above it,
    the status, and each refused field's own message, drawn at that field.
    A failed operation may have changed the loaded record half-way; ``refusal`` undoes that
    before the page is drawn from it.
    """
    form.without_blank_rows()
    try:
        body = model.model_validate(form.body(chosen_schema(form, schemas)))
        return operation(body.model_dump(exclude_unset=True)), None
    except FormError as exc:
        return None, (str(exc), 400, {})
    except NotFound as exc:  # the schema chosen is not one of the organization's
        refusal(exc, missing_record_is_a_page=False)
        return None, (SUMMARY, 400, {"schema_id": "Choose one of the schemas in the list."})
    except ValidationError as exc:
        refusal(exc, missing_record_is_a_page=False)
        return None, (SUMMARY, 400, field_errors(exc))
    except ApiError as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return None, (readable_message(message), status, {})


EMPTIED_ISSUERS = (
    "Trusted issuers: name at least one, or tick “Accept any issuer” to accept any issuer "
    "whose signature checks out."
)


@bp.get("/verifications/new")
@require_staff
@tier_gated(GATED_ACTION)
def verifications_new() -> ResponseReturnValue:
    """The builder, on the first visible schema; FREE organizations see the upgrade prompt."""
    organization = acting_organization()
    schemas = schema_choices(organization)
    if request.args.get("schema_id"):
        form = submitted_form(schemas)
    else:
        form = VerificationForm(schema_id=str(schemas[0].id) if schemas else "")
    return render_template("staff/verifications/new.html", **form_context(form, schemas))


@bp.post("/verifications/new")
@require_staff
@tier_gated(GATED_ACTION)
def verifications_create() -> ResponseReturnValue:
    """Create, or re-render after a builder button; the same gate as ``POST /verifications``."""
    organization = acting_organization()
    schemas = schema_choices(organization)
    form = submitted_form(schemas)
    if request.form.get("action") in (CHOOSE, ADD_CONDITION):
        return render_template("staff/verifications/new.html", **form_context(form, schemas))
    created, error = save(
        form,
        schemas,
        VerificationIn,
        lambda fields: verification_ops.create_verification(
            organization, fields, IssuerLinks(base_url()).issuer(organization.id)
        ),
    )
    if created is None:
        assert error is not None
        page = render_template(
            "staff/verifications/new.html",
            error=error[0],
            field_errors=error[2],
            **form_context(form, schemas),
        )
        return page, error[1]
    flash(f"Verification “{created.name}” created.", "success")
    if created.fresh_link_secret is not None:  # shown once: on this page, not after a redirect
        return detail_page(created, VerificationForm.from_verification(created), schemas), 201
    return redirect(url_for("staff.verifications_detail", verification_id=created.id), 303)


@bp.get("/verifications/builder")
@require_staff
def verifications_builder() -> ResponseReturnValue:
    """htmx: the schema-dependent part of the form (claims and conditions) for the chosen
    schema, keeping what was already filled in."""
    schemas = schema_choices(acting_organization())
    form = submitted_form(schemas)
    return render_template("staff/verifications/_builder.html", **form_context(form, schemas))


@bp.get("/verifications/row")
@require_staff
def verifications_row() -> ResponseReturnValue:
    """htmx: one empty condition row, numbered after the rows already in the form."""
    schemas = schema_choices(acting_organization())
    form = VerificationForm.from_submission(request.values)
    return render_template(
        "staff/verifications/_row.html",
        index=form.last_index + 1,
        number=len(form.conditions) + 1,
        row=ConditionRow(),
        fragment=True,
        **form_context(form, schemas),
    )


# -- one definition ---------------------------------------------------------------------------


def detail_page(
    verification: Verification,
    form: VerificationForm,
    schemas: list[Schema],
    error: str | None = None,
    field_errors: dict[str, str] | None = None,
) -> str:
    return render_template(
        "staff/verifications/detail.html",
        verification=verification,
        field_errors=field_errors or {},
        link_secret=verification.fresh_link_secret,
        base_url=base_url(),
        conditions=[
            describe_condition(c, verification.schema) for c in verification.attributes or []
        ],
        error=error,
        chosen_sources=chosen_sources(verification.organization_id, verification.trust_sources),
        issuers_seen=issuers_seen.issuers_seen(acting_organization(), verification.id),
        **form_context(form, schemas),
    )


def the_verification(verification_id: str) -> Verification:
    """The acting organization's verification; anyone else's reads as not found (404 page)."""
    return verification_ops.get_verification(acting_organization(), parse_id(verification_id))


@bp.get("/verifications/<verification_id>")
@require_staff
def verifications_detail(verification_id: str) -> ResponseReturnValue:
    """The definition in words, its ID for the backend, and the edit form."""
    verification = the_verification(verification_id)
    schemas = schema_choices(acting_organization())
    return detail_page(verification, VerificationForm.from_verification(verification), schemas)


@bp.post("/verifications/<verification_id>")
@require_staff
def verifications_update(verification_id: str) -> ResponseReturnValue:
    """Save the edit form through ``VerificationPatch`` and ``update_verification``."""
    organization = acting_organization()
    verification = the_verification(verification_id)
    schemas = schema_choices(organization)
    form = submitted_form(schemas)
    if request.form.get("action") in (CHOOSE, ADD_CONDITION):
        return detail_page(verification, form, schemas)
    if verification.trusted_issuers and form.leaves_issuers_unsaid():
        # Emptying the list would widen it to any issuer: only the box says that.
        return detail_page(verification, form, schemas, EMPTIED_ISSUERS), 400
    updated, error = save(
        form,
        schemas,
        VerificationPatch,
        lambda fields: verification_ops.update_verification(organization, verification.id, fields),
    )
    if updated is None:
        assert error is not None
        verification = the_verification(verification_id)
        return detail_page(verification, form, schemas, error[0], error[2]), error[1]
    flash("Changes saved.", "success")
    if updated.fresh_link_secret is not None:  # shown once: on this page, not after a redirect
        return detail_page(updated, VerificationForm.from_verification(updated), schemas)
    return redirect(url_for("staff.verifications_detail", verification_id=updated.id), 303)


@bp.post("/verifications/<verification_id>/link-secret")
@require_staff
def verifications_link_secret(verification_id: str) -> ResponseReturnValue:
    """A new link secret, shown on the page this answers with; the old one stops working."""
    organization = acting_organization()
    rotated = verification_ops.rotate_link_secret(organization, parse_id(verification_id))
    flash("A new link secret was made; signatures made with the old one no longer open.", "success")
    schemas = schema_choices(organization)
    return detail_page(rotated, VerificationForm.from_verification(rotated), schemas)


@bp.post("/verifications/<verification_id>/trusted-issuers")
@require_staff
def verifications_trust_issuer(verification_id: str) -> ResponseReturnValue:
    """ "Trust this issuer" on an issuer seen, as ``POST .../trusted-issuers`` does."""
    verification = the_verification(verification_id)
    issuer = request.form.get("issuer", "").strip()
    try:
        issuers_seen.trust_issuer(acting_organization(), verification.id, issuer)
    except ApiError as exc:
        message, status = refusal(exc)
        verification = the_verification(verification_id)
        schemas = schema_choices(acting_organization())
        form = VerificationForm.from_verification(verification)
        return detail_page(verification, form, schemas, message), status
    flash(f"{issuer} is now trusted by this verification.", "success")
    return redirect(url_for("staff.verifications_detail", verification_id=verification.id), 303)


@bp.get("/verifications/<verification_id>/delete")
@require_staff
def verifications_delete_confirm(verification_id: str) -> ResponseReturnValue:
    """Without JavaScript, the Delete button leads here to confirm (htmx asks in a dialog)."""
    return render_template(
        "staff/verifications/delete.html", verification=the_verification(verification_id)
    )


@bp.post("/verifications/<verification_id>/delete")
@require_staff
def verifications_delete(verification_id: str) -> ResponseReturnValue:
    """Hide the definition (its individuals' history is kept), as ``DELETE`` does."""
    verification = the_verification(verification_id)
    verification_ops.delete_verification(acting_organization(), verification.id)
    flash(f"Verification “{verification.name}” deleted.", "success")
    return navigate(url_for("staff.verifications"))


# -- individuals ----------------------------------------------------------------------------


def individual_filter() -> IndividualFilter:
    """``?customer_id=`` (part of it), ``?status=`` and the days opened (``from``, ``to``);
    ``?individual=`` is one individual exactly, by its ID: the overview links to a row's
    individual that way, since part of a customer ID also finds longer ones (cust-10 for
    cust-1)."""
    status = request.args.get("status", "").upper()
    since, until = day_arg("from"), day_arg("to")
    return IndividualFilter(
        individual_id=_individual_arg(),
        customer_id=request.args.get("customer_id", "").strip()[:200] or None,
        status=Status(status) if status in STATUS_WORDS else None,
        since=midnight(since) if since else None,
        until=midnight(until) + timedelta(days=1) if until else None,
    )


def _individual_arg() -> uuid.UUID | None:
    """A malformed ID is a 400 naming the parameter, as a malformed day is."""
    value = request.args.get("individual", "").strip()
    if not value:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidRequest("individual must be an individual's ID") from None


def chosen_individual_filters() -> dict[str, str]:
    """The filters as given, kept in the pager's and the export's links."""
    names = ("individual", "customer_id", "from", "to")
    chosen = {n: request.args[n] for n in names if request.args.get(n)}
    if request.args.get("status", "").upper() in STATUS_WORDS:
        chosen["status"] = request.args["status"].upper()
    return chosen


@bp.get("/verifications/<verification_id>/individuals")
@require_staff
def verifications_individuals(verification_id: str) -> ResponseReturnValue:
    """Who was asked and what happened, newest first, each with their presentation attempts;
    found by customer ID, status and the day they were opened."""
    verification = the_verification(verification_id)
    offset, limit = page_args()
    rows, total = search.find_individuals(verification.id, individual_filter(), offset, limit)
    attempts = reports.attempts_by_individual([row.id for row in rows])
    chosen = chosen_individual_filters()
    return render_template(
        "staff/verifications/individuals.html",
        verification=verification,
        rows=rows,
        attempts=attempts,
        status_words=STATUS_WORDS,
        opener_words=OPENER_WORDS,
        integration_names=integration_names(rows),
        chosen=chosen,
        claims={row.id: shown_claims(row.claims, verification.schema) for row in rows},
        pages=pager(
            "staff.verifications_individuals",
            offset,
            limit,
            total,
            verification_id=verification.id,
            **chosen,
        ),
    )


def integration_names(rows: list[Any]) -> dict[uuid.UUID, str]:
    """The names of the integrations that opened the rows shown, by ID (a deleted one is
    missing: the page then shows its ID)."""
    ids = {row.opened_by_integration_id for row in rows if row.opened_by_integration_id}
    if not ids:
        return {}
    return {i.id: i.name for i in list_integrations(acting_organization()) if i.id in ids}


@bp.get("/verifications/<verification_id>/individuals/export.csv")
@require_staff
def verifications_individuals_export(verification_id: str) -> ResponseReturnValue:
    """The individuals the filters find, as CSV; the kept claims only with ``?claims=1``."""
    # Only the ID crosses into the stream: the records loaded here end with the view.
    found_id = the_verification(verification_id).id
    chosen = individual_filter()
    with_claims = request.args.get("claims") == "1"
    header = [
        "individual_id",
        "customer_id",
        "status",
        "validation_error",
        "issuer",
        "created_at",
        "connection_at",
        "verified_at",
        "revoked_at",
        "opened_by",
        "opened_by_integration_id",
    ]

    def rows() -> Iterator[list[Any]]:
        with reading():
            for batch in search.each_individual(found_id, chosen):
                for i in batch:
                    row = [
                        i.id,
                        i.customer_id,
                        i.status.value,
                        i.validation_error,
                        i.issuer,
                        i.created_at,
                        i.connection_at,
                        i.verified_at,
                        i.revoked_at,
                        i.opened_by,
                        i.opened_by_integration_id or "",
                    ]
                    if with_claims:
                        row.append(json.dumps(i.claims, ensure_ascii=False) if i.claims else "")
                    yield row

    return csv_download("individuals.csv", [*header, "claims"] if with_claims else header, rows())
