"""The dashboard's home and its organization switcher."""

from __future__ import annotations

from dataclasses import dataclass

from flask import g, redirect, render_template, request
from flask.typing import ResponseReturnValue

from app import clock
from app.organizations.operations import resolve_acting_membership
from app.presentations.reasons import Family, family_of
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
        families=failures_by_family(reports.failure_reasons(organization, today)),
        funnels=reports.funnels(organization),
    )


# What staff read for each family of reasons (the person reads ``reasons.FOR_PERSON``).
FAMILY_WORDS: dict[Family, str] = {
    Family.CONDITION: "Conditions not met",
    Family.MISSING_CLAIM: "Claims not shared",
    Family.UNTRUSTED_ISSUER: "Untrusted issuer",
    Family.NO_ISSUER: "No issuer named",
    Family.WRONG_TYPE: "Wrong credential type",
    Family.REVOKED: "Revoked",
    Family.SUSPENDED: "Suspended",
    Family.STATUS_UNCHECKED: "Status could not be checked",
    Family.EXPIRED: "Expired",
    Family.NOT_YET_VALID: "Not valid yet",
    Family.LATE: "Answer too late",
    Family.INVALID: "Malformed or invalid",
}


@dataclass(frozen=True)
class FamilyCount:
    family: str
    label: str
    count: int


def failures_by_family(reasons: list[tuple[str | None, int]]) -> list[FamilyCount]:
    """Failures grouped by family of reason, the most first; a reason of no known family
    reads as malformed or invalid."""
    totals: dict[Family, int] = {}
    for reason, count in reasons:
        family = family_of(reason) or Family.INVALID
        totals[family] = totals.get(family, 0) + count
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0].value))
    return [FamilyCount(f.value, FAMILY_WORDS[f], count) for f, count in ranked]


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
