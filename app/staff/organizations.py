"""The dashboard's organizations: the user's memberships, creating and joining one, members,
and invitation codes.

This is the one section a user with no organization yet must be able to use (it is how they
get one), so its list and forms never ask for the acting organization. An invitation code
exists in clear only in the response that mints it: never a redirect, a flash or a URL.
"""

from __future__ import annotations

from typing import Any

from flask import flash, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from pydantic import ValidationError

from app.errors import (
    CodeNotFound,
    Forbidden,
    InvalidRequest,
    NotFound,
    describe_validation_error,
)
from app.issuance import prism_issuer
from app.organizations import operations as org_ops
from app.organizations.models import Membership, Role
from app.staff.blueprint import bp, navigate
from app.staff.page_kit import finished, refusal
from app.staff.session import ORGANIZATION_COOKIE, set_cookie
from app.web import shown_once
from app.web.access import acting_membership, current_user, require_staff, upgrade_prompt
from app.web.payloads.organizations import (
    CodeIn,
    IssuerSettingsIn,
    JoinIn,
    OrganizationIn,
    OrganizationPatch,
)
from app.web.requests import parse_id

GATED_ACTION = "Minting invitation codes"
WALLET_ATTESTATION_CHOICES = (
    ("optional", "Optional: checked when a wallet sends one (the default)"),
    ("required", "Required: wallets without one are refused"),
    ("off", "Off: not asked for, not read"),
)
MANAGING_ROLES = frozenset(org_ops.MANAGING_ROLES)


def list_page(status: int = 200, **extra: Any) -> ResponseReturnValue:
    """The memberships with the create and join forms; refused forms keep their input."""
    page = render_template(
        "staff/organizations/index.html",
        rows=org_ops.memberships_of(current_user()),
        values={"name": "", "code": "", **extra.pop("values", {})},
        **extra,
    )
    return page, status


@bp.get("/organizations")
@require_staff
def organizations() -> ResponseReturnValue:
    """Every organization the user belongs to, the acting one marked, a switch for the rest."""
    return list_page()


@bp.post("/organizations")
@require_staff
def organizations_create() -> ResponseReturnValue:
    """Create an organization (its creator is OWNER, it starts FREE) and act for it at once,
    setting the switcher's cookie exactly as ``switch_organization`` does."""
    values = {"name": request.form.get("name", "")}
    try:
        body = OrganizationIn.model_validate(values)
        created = org_ops.create_organization(current_user(), body.name)
    except (ValidationError, InvalidRequest) as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return list_page(status, create_error=message, values=values)
    flash(f"Created {created.name}; you are now acting for it.", "success")
    response = redirect(url_for("staff.organizations"), 303)
    set_cookie(response, ORGANIZATION_COOKIE, str(created.id), None)
    return response


@bp.post("/organizations/join")
@require_staff
def organizations_join() -> ResponseReturnValue:
    """Join with an invitation code; an unknown or expired one is a 404 on this page."""
    values = {"code": request.form.get("code", "")}
    try:
        body = JoinIn.model_validate(values)
        joined = org_ops.join_with_code(current_user(), body.code)
    except (ValidationError, CodeNotFound) as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return list_page(status, join_error=message, values=values)
    # A user's first organization is their default one, so they act for it at once.
    then = "You are now acting for it." if g.organization is None else "Switch to act for it."
    flash(
        f"You are a member of {joined.organization.name} as {joined.role.value.lower()}. {then}",
        "success",
    )
    return redirect(url_for("staff.organizations"), 303)


def member_of(organization_id: str) -> Membership:
    """The user's membership of the organization; to a non-member it does not exist."""
    found = org_ops.membership(current_user(), parse_id(organization_id))
    if found is None:
        raise NotFound()
    return found


def detail_page(member: Membership, status: int = 200, **extra: Any) -> ResponseReturnValue:
    organization = member.organization
    acting = g.organization is not None and g.organization.id == organization.id
    page = render_template(
        "staff/organizations/detail.html",
        organization=organization,
        member=member,
        members=org_ops.members_of(organization),
        is_acting=acting,
        # Read only: the DID is made by the first credential issued over DIDComm.
        prism_issuer=prism_issuer.existing_prism_issuer(organization.id) if acting else None,
        can_manage=member.role in MANAGING_ROLES,
        wallet_attestation_choices=WALLET_ATTESTATION_CHOICES,
        upgrade=upgrade_prompt(organization, GATED_ACTION) if acting else None,
        roles=[Role.MEMBER, Role.ADMIN],
        values={"role": Role.MEMBER.value, "days": 7, **extra.pop("values", {})},
        **extra,
    )
    return page, status


@bp.get("/organizations/<organization_id>")
@require_staff
def organizations_detail(organization_id: str) -> ResponseReturnValue:
    """Members and their roles; owners and admins of the acting one can mint codes here.
    Right after minting one, the code, this once."""
    member = member_of(organization_id)
    return detail_page(member, **shown_once.take(f"codes:{member.organization_id}"))


@bp.post("/organizations/<organization_id>/issuer")
@require_staff
def organizations_issuer(organization_id: str) -> ResponseReturnValue:
    """The issuer's settings, for the acting organization, by its owners and admins (the
    operation checks the role, as in the JSON API)."""
    member = member_of(organization_id)
    acting = acting_membership()
    try:
        org_ops.require_acting(acting, member.organization_id)
    except Forbidden:
        return detail_page(
            member, 403, error=f"Switch to {member.organization.name} to change its issuer."
        )
    values = {"wallet_attestation": request.form.get("wallet_attestation", "")}
    try:
        body = IssuerSettingsIn.model_validate(values)
    except ValidationError as exc:
        return detail_page(acting, 400, error=describe_validation_error(exc))
    org_ops.set_issuer_settings(acting, body.wallet_attestation)
    flash("Issuer settings saved.")
    return redirect(url_for("staff.organizations_detail", organization_id=organization_id), 303)


@bp.post("/organizations/<organization_id>/support-contact")
@require_staff
def organizations_support_contact(organization_id: str) -> ResponseReturnValue:
    """Owners and admins set the support contact; a refused one is shown with what was typed."""
    member = member_of(organization_id)
    values = {"support_contact": request.form.get("support_contact", "")}
    try:
        body = OrganizationPatch.model_validate(values)
        org_ops.set_support_contact(member, body.support_contact)
    except (ValidationError, InvalidRequest, Forbidden) as exc:
        message, status = refusal(exc, missing_record_is_a_page=False)
        return detail_page(member, status, values=values, contact_error=message)
    return finished(
        "Support contact saved.",
        "staff.organizations_detail",
        organization_id=member.organization_id,
    )


@bp.post("/organizations/<organization_id>/codes")
@require_staff
def organizations_mint_code(organization_id: str) -> ResponseReturnValue:
    """Mint an invitation code for the acting organization and show it once, on the page this
    redirects to.

    As in the JSON API, the code is for the acting organization, the one whose plan is checked;
    another organization of the user's is refused with the way to switch to it.
    """
    member = member_of(organization_id)
    acting = acting_membership()
    try:
        org_ops.require_acting(acting, member.organization_id)
    except Forbidden:
        return detail_page(
            member,
            403,
            error=f"Invitation codes are minted for the acting organization; switch to "
            f"{member.organization.name} first.",
        )
    org_ops.require_paid_plan(acting.organization, GATED_ACTION)
    # Fields left out take the model's defaults, as they do in the JSON API.
    values = {name: request.form[name] for name in ("role", "days") if name in request.form}
    try:
        body = CodeIn.model_validate(values)
    except ValidationError as exc:
        return detail_page(acting, 400, error=describe_validation_error(exc), values=values)
    # An ordinary member is refused here (403 page), by the operation's own role check.
    value, code = org_ops.mint_code(acting, body.days, Role(body.role))
    shown_once.keep_for_next_page(
        f"codes:{acting.organization_id}",
        minted=value,
        minted_role=code.role.value,
        minted_expires_at=code.expires_at.isoformat(),
    )
    return navigate(url_for("staff.organizations_detail", organization_id=acting.organization_id))
