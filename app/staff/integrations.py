"""The dashboard's integrations: keys a backend sends in the ``apikey`` header.

A key exists in clear only in the response that creates it; only its hash is stored. So the
page that shows it is the POST's own response, never a redirect, a flash or a URL (the flash
lives in a cookie, a URL in the history).
"""

from __future__ import annotations

from typing import Any

from flask import render_template, url_for
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.errors import ApiError
from app.integrations import operations as keys
from app.organizations import operations as org_ops
from app.organizations.models import Organization
from app.staff.blueprint import bp, navigate
from app.staff.page_kit import finished, form_values, refusal
from app.web import shown_once
from app.web.access import (
    acting_membership,
    acting_organization,
    require_staff,
    tier_gated,
    upgrade_prompt,
)
from app.web.payloads.integrations import IntegrationIn
from app.web.payloads.organizations import OrganizationPatch
from app.web.requests import parse_id

GATED_ACTION = "Creating an integration key"


# The answer shapes staff choose between, with the words the page shows.
API_COMPATIBILITY_CHOICES = (
    ("verity", "Verity's answer (default)"),
    ("socious-verify", "Verity's answer plus Socious Verify's fields"),
)


def integrations_page(organization: Organization, status: int = 200, **extra: Any):
    page = render_template(
        "staff/integrations/index.html",
        rows=keys.list_integrations(organization),
        upgrade=upgrade_prompt(organization, GATED_ACTION),
        values=extra.pop("values", {"name": ""}),
        api_compatibility_choices=API_COMPATIBILITY_CHOICES,
        api_compatibility=organization.api_compatibility.value,
        **extra,
    )
    return page, status


@bp.get("/integrations")
@require_staff
def integrations() -> ResponseReturnValue:
    """The keys by name and prefix; on the Free plan the form gives way to the upgrade text.
    Right after creating one, its key, this once."""
    return integrations_page(acting_organization(), **shown_once.take("integrations"))


@bp.post("/integrations")
@require_staff
@tier_gated(GATED_ACTION)
def integrations_create() -> ResponseReturnValue:
    """Mint a key and show it once, on the page this redirects to (tier-gated)."""
    organization = acting_organization()
    values = form_values(("name",))
    try:
        body = IntegrationIn.model_validate(values)
        key, row = keys.create_integration(organization, body.name)
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return integrations_page(organization, status, values=values, error=message)
    shown_once.keep_for_next_page(
        "integrations", created={"name": row.name, "key_prefix": row.key_prefix}, key=key
    )
    return navigate(url_for("staff.integrations"))


@bp.post("/integrations/api-compatibility")
@require_staff
def integrations_api_compatibility() -> ResponseReturnValue:
    """The answer shape the keys get, for the acting organization, by its owners and admins
    (the operation checks the role, as ``PATCH /organizations/{id}`` does)."""
    organization = acting_organization()
    values = form_values(("api_compatibility",))
    try:
        body = OrganizationPatch.model_validate(values)
        org_ops.set_api_compatibility(acting_membership(), body.api_compatibility or "")
    except (ValidationError, ApiError) as exc:
        message, status = refusal(exc)
        return integrations_page(organization, status, compatibility_error=message)
    return finished("Answer shape saved.", "staff.integrations")


@bp.get("/integrations/<integration_id>/delete")
@require_staff
def integrations_confirm_delete(integration_id: str) -> ResponseReturnValue:
    """Without JavaScript, the confirmation ``hx-confirm`` would have asked for."""
    row = keys.get_integration(acting_organization(), parse_id(integration_id))
    return render_template("staff/integrations/delete.html", row=row)


@bp.post("/integrations/<integration_id>/delete")
@require_staff
def integrations_delete(integration_id: str) -> ResponseReturnValue:
    """Its key fails with 401 from the next request on."""
    organization = acting_organization()
    row = keys.get_integration(organization, parse_id(integration_id))
    name = row.name
    keys.delete_integration(organization, row.id)
    return finished(f"Integration {name} deleted; its key no longer works.", "staff.integrations")
