"""The dashboard's home and its organization switcher."""

from __future__ import annotations

from flask import g, redirect, render_template, request
from flask.typing import ResponseReturnValue

from app import clock
from app.organizations.operations import resolve_acting_membership
from app.staff import chart
from app.staff.blueprint import bp
from app.staff.session import ORGANIZATION_COOKIE, set_cookie
from app.staff.signin import safe_next
from app.verifications import reports
from app.web.access import require_staff


@bp.get("/")
@require_staff
def overview() -> ResponseReturnValue:
    """Counts, the last 30 days, why people failed, each verification's funnel and the recent
    outcomes of the acting organization; what to do first when empty."""
    organization = g.organization
    if organization is None:
        return render_template("staff/welcome.html")
    today = clock.now().date()
    days = reports.outcomes_per_day(organization, today)
    return render_template(
        "staff/overview.html",
        summary=reports.overview(organization),
        outcomes=reports.recent_outcomes(organization),
        chart=chart.outcome_bars(days),
        days=days,
        families=reports.failures_by_family(organization, today),
        funnels=reports.funnels(organization),
    )


@bp.post("/switch")
@require_staff
def switch_organization() -> ResponseReturnValue:
    """Act for another organization: the same check as the ``current-identity`` header (403
    when the value is not an organization the user belongs to)."""
    chosen = request.form.get("organization_id", "")
    member = resolve_acting_membership(g.user, chosen)
    assert member is not None
    response = redirect(safe_next(request.form.get("next")))
    set_cookie(response, ORGANIZATION_COOKIE, str(member.organization_id), None)
    return response
