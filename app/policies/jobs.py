"""Scheduled work of policy requests: reporting the ones that lapsed to webhooks."""

from __future__ import annotations

from app import jobs
from app.policies.operations import report_expired


@jobs.periodic(jobs.crontab(minute="*"), name="policies.report_expired")
def report_expired_policy_requests() -> None:
    report_expired()
