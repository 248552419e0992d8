"""Filters read from the query string (days, the audit trail's), alike for pages and the API."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from flask import request

from app.audit.operations import AuditFilter
from app.errors import InvalidRequest

FILTER_NAMES = ("actor", "action", "record_type", "record_id", "from", "to")


def day_arg(name: str) -> date | None:
    """A ``YYYY-MM-DD`` query parameter; a malformed one is a 400, never ignored."""
    value = request.args.get(name, "").strip()
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidRequest(f"{name} must be a date written YYYY-MM-DD") from None


def midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def audit_filter() -> AuditFilter:
    """``from`` and ``to`` are whole days in UTC, both included."""
    since, until = day_arg("from"), day_arg("to")
    text = {
        name: request.args.get(name, "").strip()[:320] or None
        for name in ("actor", "action", "record_type", "record_id")
    }
    return AuditFilter(
        since=midnight(since) if since else None,
        until=midnight(until) + timedelta(days=1) if until else None,
        **text,
    )


def chosen_filters() -> dict[str, str]:
    """The filters as given, for the form's values and the pager's links."""
    return {name: request.args[name] for name in FILTER_NAMES if request.args.get(name)}
