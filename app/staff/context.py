"""What every dashboard template can use, and the checks every dashboard request passes."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, g, request

from app.organizations.operations import memberships_of
from app.staff import csrf

# The sections in the navigation, in order: (endpoint, label).
SECTIONS = (
    ("staff.overview", "Overview"),
    ("staff.verifications", "Verifications"),
    ("staff.credentials", "Credentials"),
    ("staff.integrations", "Integrations"),
    ("staff.webhooks", "Webhooks"),
    ("staff.recipients", "Recipients"),
    ("staff.schemas", "Schemas"),
    ("staff.trust", "Trust"),
    ("staff.plan", "Plan"),
    ("staff.organizations", "Organizations"),
    ("staff.audit_events", "Audit"),
)


def navigation() -> list[tuple[str, str]]:
    """Sections whose pages this deployment serves."""
    served = [(e, label) for e, label in SECTIONS if e in current_app.view_functions]
    if g.get("organization") is None:
        # Without an organization, only the overview and creating or joining one make sense.
        return [(e, label) for e, label in served if e in ("staff.overview", "staff.organizations")]
    return served


def staff_context() -> dict[str, Any]:
    user = g.get("user")
    return {
        "csrf_token": csrf.csrf_token,
        "csrf_field": csrf.CSRF_FIELD,
        "navigation": navigation,
        "user": user,
        "acting": g.get("organization"),
        "acting_role": g.membership.role.value if g.get("membership") else None,
        "all_memberships": (lambda: memberships_of(user)) if user else (lambda: []),
        "section": (request.endpoint or "").split(".")[-1],
    }


def register_context(bp: Blueprint) -> None:
    bp.before_request(csrf.check_csrf)
    bp.after_request(csrf.remember_seed)
    bp.app_context_processor(staff_context)
