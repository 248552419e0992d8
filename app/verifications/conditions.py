"""Conditions a verification puts on presented claims, checked when a definition is saved.

Operators: EQUAL, NOT, BIGGER, SMALLER (the names existing clients send; numbers and dates),
IN, EXISTS and AGE_AT_LEAST (reads a date claim such as ``birthdate``).
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from app.errors import InvalidRequest

OPERATORS = ("EQUAL", "NOT", "BIGGER", "SMALLER", "IN", "EXISTS", "AGE_AT_LEAST")


def condition_name(condition: dict[str, Any]) -> str | None:
    return condition.get("name") or condition.get("attribute_id")


def is_comparable(value: Any) -> bool:
    """Numbers, or ISO 8601 dates (``2000-01-31``), the two things BIGGER/SMALLER order."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        try:
            date.fromisoformat(value[:10])
        except ValueError:
            return False
        return True
    return False


def known_attribute(name: str, schema_attributes: list[str]) -> bool:
    """A schema attribute, or a dotted path inside one (``address`` covers ``address.country``)."""
    return any(name == a or name.startswith(a + ".") for a in schema_attributes)


def check_conditions(
    conditions: list[dict[str, Any]], schema_attributes: list[str]
) -> list[dict[str, Any]]:
    """Validate conditions against the schema; return them in their stored form."""
    stored = []
    for index, condition in enumerate(conditions):
        name = condition_name(condition)
        where = f"attributes[{index}]"
        if not name:
            raise InvalidRequest(f"{where}: give the attribute as 'name' or 'attribute_id'")
        if not known_attribute(name, schema_attributes):
            raise InvalidRequest(f"{where}: attribute {name!r} is not in the verification's schema")
        operator = condition.get("operator")
        if operator not in OPERATORS:
            raise InvalidRequest(f"{where}: operator must be one of {', '.join(OPERATORS)}")
        value = condition.get("value")
        _check_value(where, name, operator, value)
        stored.append({"name": name, "operator": operator, "value": value})
    return stored


def _check_value(where: str, name: str, operator: str, value: Any) -> None:
    if operator == "EXISTS":
        if value not in (None, True):
            raise InvalidRequest(f"{where}: EXISTS on {name} takes no value")
    elif operator in ("BIGGER", "SMALLER"):
        if not is_comparable(value):
            raise InvalidRequest(f"{where}: {operator} on {name} needs a number or an ISO date")
    elif operator == "IN":
        if not isinstance(value, list) or not value:
            raise InvalidRequest(f"{where}: IN on {name} needs a non-empty list of values")
    elif operator == "AGE_AT_LEAST":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 150:
            raise InvalidRequest(f"{where}: AGE_AT_LEAST on {name} needs a whole number of years")
    elif value is None:
        raise InvalidRequest(f"{where}: {operator} on {name} needs a value")


# -- evaluation -----------------------------------------------------------------------------

MISSING = object()


def claim_value(claims: dict[str, Any], name: str) -> Any:
    """The value at a dotted path (``address.country``), or MISSING."""
    value: Any = claims
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def _as_comparable(value: Any) -> float | date | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def _ordered(actual: Any, expected: Any, operator: str) -> bool:
    """BIGGER/SMALLER compare numbers with numbers and dates with dates, nothing else."""
    left, right = _as_comparable(actual), _as_comparable(expected)
    numbers = isinstance(left, int | float) and isinstance(right, int | float)
    dates = isinstance(left, date) and isinstance(right, date)
    if not (numbers or dates):
        return False
    return left > right if operator == "BIGGER" else left < right  # type: ignore[operator]


def age_on(birthdate: date, today: date) -> int:
    years = today.year - birthdate.year
    return years - ((today.month, today.day) < (birthdate.month, birthdate.day))


def _satisfied(actual: Any, operator: str, expected: Any, today: date) -> bool:
    if operator == "EXISTS":
        return actual is not None
    if operator == "EQUAL":
        return actual == expected
    if operator == "NOT":
        return actual != expected
    if operator == "IN":
        return actual in expected
    if operator in ("BIGGER", "SMALLER"):
        return _ordered(actual, expected, operator)
    if operator == "AGE_AT_LEAST":
        born = _as_comparable(actual)
        return isinstance(born, date) and age_on(born, today) >= expected
    return False


def failed_condition(
    conditions: list[dict[str, Any]], claims: dict[str, Any], today: date
) -> str | None:
    """The first unmet condition as a message naming the attribute and the operator, or None.

    INTERFACE.md 3: a failed condition's ``validation_error`` names both.
    """
    for condition in conditions:
        name, operator = condition["name"], condition["operator"]
        expected = condition.get("value")
        actual = claim_value(claims, name)
        if actual is MISSING:
            return f"Attribute {name} is missing, so {operator} cannot be satisfied"
        if not _satisfied(actual, operator, expected, today):
            shown = "" if operator == "EXISTS" else f" {json.dumps(expected)}"
            return f"Attribute {name} does not satisfy {operator}{shown}"
    return None
