"""A credential's claims checked against its schema's attribute types.

The claims end up signed in a credential that verifiers compare by type, so a
NUMBER must be a JSON number, a BOOLEAN a JSON boolean, a DATETIME an ISO 8601 date or
date-time, a URL an http(s) URL and an EMAIL an address; a claim the schema does not name is
refused rather than signed.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

from app.oid4vci.credential import claim_problems
from app.schemas.models import Schema

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
MAX_TEXT = 5000


def check_claims(schema: Schema, claims: list[dict[str, Any]]) -> list[str]:
    """Every problem with ``claims`` (``[{"name", "value"}]``), each naming its claim."""
    types = {a["name"]: a.get("type", "TEXT") for a in schema.attributes}
    problems: list[str] = []
    seen: set[str] = set()
    if not claims:
        problems.append("claims: at least one claim is needed")
    for claim in claims:
        name, value = claim["name"], claim["value"]
        if name in seen:
            problems.append(f"claims: {name} is given twice")
            continue
        seen.add(name)
        if name not in types:
            problems.append(f"claims: {name} is not an attribute of schema {schema.name}")
            continue
        problem = _type_problem(types[name], value)
        if problem:
            problems.append(f"claims: {name} {problem}")
    if not problems:
        # Names the signer would refuse (``status``, ``iss``, colliding dotted paths) are the
        # issuer's problem now, not the wallet's at the credential endpoint.
        named = {claim["name"]: claim["value"] for claim in claims}
        problems.extend(f"claims: {problem}" for problem in claim_problems(named))
    return problems


def _type_problem(kind: str, value: Any) -> str | None:
    if kind == "NUMBER":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok and math.isfinite(value) else "must be a number"
    if kind == "BOOLEAN":
        return None if isinstance(value, bool) else "must be true or false"
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    if len(value) > MAX_TEXT:
        return f"must be at most {MAX_TEXT} characters"
    if kind == "DATETIME" and not _is_iso_time(value):
        return "must be an ISO 8601 date (2000-01-31) or date-time"
    if kind == "URL" and not _is_url(value):
        return "must be an http or https URL"
    if kind == "EMAIL" and not EMAIL.fullmatch(value):
        return "must be an email address"
    return None


def _is_iso_time(value: str) -> bool:
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            parse(value)
            return True
        except ValueError:
            continue
    return False


def _is_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
