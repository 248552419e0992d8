"""Prometheus metrics: requests per route, decided presentations, issuer fetch failures and
limiter refusals.

Nothing here knows Flask, so domain and protocol code may count what happens to them. Under
gunicorn each worker is a process of its own; with ``PROMETHEUS_MULTIPROC_DIR`` set (the
project's ``gunicorn.conf.py`` makes a temporary one) every worker writes its values to files
there and a scrape, whichever worker answers it, adds them up. Without it (a development
server, the tests) the values live in this process.

The environment variable must be set before ``prometheus_client`` is first imported, which is
why gunicorn's master sets it before it forks any worker.
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
REGISTRY = CollectorRegistry()
# Methods a route label can carry; anything else is counted as OTHER, so a client inventing
# methods cannot add series.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# An address that matched no route: one series, whatever the path.
UNMATCHED = "unmatched"
# From a fast healthz (under a millisecond) to a presentation whose issuer is slow to answer.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "verity_http_requests",
    "HTTP requests answered, by route (the URL rule, not the path), method and status",
    ["route", "method", "status"],
    registry=REGISTRY,
)
LATENCY = Histogram(
    "verity_http_request_duration_seconds",
    "Time from the request's first hook to its response, by route and method",
    ["route", "method"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
PRESENTATIONS = Counter(
    "verity_presentations",
    "Presentations decided, by outcome and, for a failure, the family of its reason",
    ["outcome", "reason_family"],
    registry=REGISTRY,
)
ISSUER_FETCH_FAILURES = Counter(
    "verity_issuer_fetch_failures",
    "Fetches from issuer-controlled URLs (keys, metadata, status lists) that failed",
    registry=REGISTRY,
)
LIMITER_REFUSALS = Counter(
    "verity_limiter_refusals",
    "Requests the rate limiter refused: over the limit, or its storage unreachable",
    ["scope", "reason"],
    registry=REGISTRY,
)

# The labelled children of the request metrics, kept: ``labels()`` takes a lock and builds a
# key on every call, which is most of what counting one request costs.
_request_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def observe_request(route: str | None, method: str, status: int, seconds: float) -> None:
    key = (route or UNMATCHED, method if method in METHODS else "OTHER", status)
    children = _request_children.get(key)
    if children is None:
        children = (
            REQUESTS.labels(key[0], key[1], str(status)),
            LATENCY.labels(key[0], key[1]),
        )
        _request_children[key] = children
    children[0].inc()
    children[1].observe(seconds)


def count_presentation(verified: bool, reason_family: str | None) -> None:
    outcome = "VERIFIED" if verified else "FAILED"
    PRESENTATIONS.labels(outcome, "" if verified else (reason_family or "INVALID")).inc()


def count_issuer_fetch_failure() -> None:
    ISSUER_FETCH_FAILURES.inc()


def count_limiter_refusal(scope: str, reason: str) -> None:
    LIMITER_REFUSALS.labels(scope, reason).inc()


def exposition() -> tuple[bytes, str]:
    """The text a scrape answers, and its content type: every worker's values when they
    share a directory, else this process's."""
    if os.environ.get(MULTIPROCESS_DIR):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
