"""Conditions a verification puts on presented claims: read when a definition is saved,
evaluated when a credential is presented.

Operators: EQUAL, NOT, BIGGER, SMALLER (the names existing clients send; numbers and dates),
IN, EXISTS and AGE_AT_LEAST (reads a date claim such as ``birthdate``).

A condition's value is read by the type of the schema attribute it names (``values.read``)
when the definition is saved, so a value that cannot be one is refused then, naming the
condition, rather than failing every presentation later. The stored condition keeps what
the client sent (echoed back as sent, under the key it used) beside the value as read and
the type it is compared by.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from app.errors import InvalidRequest
from app.verifications import values
from app.verifications.values import Unreadable

OPERATORS = ("EQUAL", "NOT", "BIGGER", "SMALLER", "IN", "EXISTS", "AGE_AT_LEAST")
KEYS = ("attribute_id", "name")
MAX_IN_VALUES = 100
MAX_AGE = 150
MAX_VALUE_LENGTH = 2000
# Types BIGGER and SMALLER can order; a text attribute orders by what its value reads as.
ORDERED = ("NUMBER", "DATETIME")


def condition_name(condition: dict[str, Any]) -> str | None:
    return condition.get("name") or condition.get("attribute_id")


def known_attribute(name: str, schema_attributes: list[str]) -> bool:
    """A schema attribute, or a dotted path inside one (``address`` covers ``address.country``)."""
    return any(name == a or name.startswith(a + ".") for a in schema_attributes)


def attribute_type(name: str, schema_attributes: list[dict[str, Any]]) -> str | None:
    """The declared type of the attribute ``name`` names exactly; None for a path below one
    (``address.zip`` below ``address``), whose type the schema does not say."""
    for attribute in schema_attributes:
        if attribute.get("name") == name:
            return str(attribute.get("type") or "TEXT")
    return None


def check_conditions(
    conditions: list[dict[str, Any]], schema_attributes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Read conditions against the schema's attributes; return them in their stored form:
    ``{"name", "operator", "value" (as read), "type" (compared by), "keys", "sent"}``."""
    names = [str(a.get("name")) for a in schema_attributes]
    stored = []
    for index, condition in enumerate(conditions):
        where = f"attributes[{index}]"
        name, keys = _attribute(where, condition)
        if not known_attribute(name, names):
            raise InvalidRequest(f"{where}: attribute {name!r} is not in the verification's schema")
        operator = condition.get("operator")
        if operator not in OPERATORS:
            raise InvalidRequest(f"{where}: operator must be one of {', '.join(OPERATORS)}")
        sent = condition.get("value")
        declared = attribute_type(name, schema_attributes)
        kind, value = _read_value(where, name, operator, sent, declared)
        stored.append(
            {
                "name": name,
                "operator": operator,
                "value": value,
                "type": kind,
                "keys": keys,
                "sent": sent,
            }
        )
    return stored


def echoed(condition: dict[str, Any]) -> dict[str, Any]:
    """A stored condition as the client sent it: under the key it used, with its value as
    sent (``"17"`` stays ``"17"``). Conditions stored before keys were kept answer as name."""
    keys = condition.get("keys") or ["name"]
    sent = condition["sent"] if "sent" in condition else condition.get("value")
    return {
        **{key: condition["name"] for key in keys},
        "operator": condition["operator"],
        "value": sent,
    }


def _attribute(where: str, condition: dict[str, Any]) -> tuple[str, list[str]]:
    given = {key: condition.get(key) for key in KEYS if condition.get(key)}
    if not given:
        raise InvalidRequest(f"{where}: give the attribute as 'name' or 'attribute_id'")
    if len(set(given.values())) > 1:
        raise InvalidRequest(
            f"{where}: 'name' and 'attribute_id' name different attributes; give one of them"
        )
    return str(next(iter(given.values()))), list(given)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _read_value(
    where: str, name: str, operator: str, sent: Any, declared: str | None
) -> tuple[str, Any]:
    """The type the condition compares by and its value as read, or a 400 naming it."""
    label = f"{where}: {operator} on {name}"
    kind = declared or "TEXT"
    if operator == "EXISTS":
        if sent not in (None, True) and not (isinstance(sent, str) and sent.lower() == "true"):
            raise InvalidRequest(f"{label} takes no value")
        return kind, None
    if sent is None or sent == "":
        raise InvalidRequest(f"{label} needs a value")
    if operator == "AGE_AT_LEAST":
        return "DATETIME", _age(label, sent, kind)
    if operator in ("BIGGER", "SMALLER"):
        kind = _order_type(label, sent, kind, declared)
    if operator == "IN":
        if not isinstance(sent, list) or not sent or len(sent) > MAX_IN_VALUES:
            raise InvalidRequest(
                f"{label} needs a non-empty list of values (at most {MAX_IN_VALUES})"
            )
        return kind, [_typed(label, item, kind) for item in sent]
    return kind, _typed(label, sent, kind)


def _typed(label: str, sent: Any, kind: str) -> Any:
    if isinstance(sent, str) and len(sent) > MAX_VALUE_LENGTH:
        raise InvalidRequest(f"{label} takes values of at most {MAX_VALUE_LENGTH} characters")
    try:
        return values.stored(values.read(sent, kind))
    except Unreadable as exc:
        raise InvalidRequest(f"{label} ({kind}) cannot read {_shown(sent)}: give {exc}") from None


def _order_type(label: str, sent: Any, kind: str, declared: str | None) -> str:
    if kind in ORDERED:
        return kind
    if kind == "TEXT":  # declared text, or a path the schema gives no type
        guessed = values.guess_order_type(sent)
        if guessed is None:
            raise InvalidRequest(f"{label} needs a number or a date, not {_shown(sent)}")
        return guessed
    raise InvalidRequest(f"{label} cannot order {declared} values")


def _age(label: str, sent: Any, kind: str) -> int:
    if kind not in ("DATETIME", "TEXT"):
        raise InvalidRequest(f"{label} reads a date, and this attribute is {kind}")
    try:
        years = values.read(sent, "NUMBER")
    except Unreadable:
        years = None
    if not isinstance(years, int) or not 0 <= years <= MAX_AGE:
        raise InvalidRequest(
            f"{label} needs a whole number of years (0 to {MAX_AGE}), not {_shown(sent)}"
        )
    return years


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


def age_on(birthdate: date, today: date) -> int:
    years = today.year - birthdate.year
    return years - ((today.month, today.day) < (birthdate.month, birthdate.day))


def _read(value: Any, kind: str) -> Any:
    """A claim (or a stored value) as ``kind``; None when it cannot be one."""
    try:
        return values.read(value, kind)
    except Unreadable:
        return None


def _scalar_holds(actual: Any, operator: str, expected: Any, kind: str, today: date) -> bool:
    if operator == "AGE_AT_LEAST":
        born = _read(actual, "DATETIME")
        return born is not None and age_on(values.day(born), today) >= expected
    left = _read(actual, kind)
    if left is None:  # a claim that is not what the schema says is never a match
        return False
    if operator == "IN":
        return any(
            right is not None and values.compare(left, right) == 0
            for right in (_read(item, kind) for item in expected)
        )
    right = _read(expected, kind)
    if right is None:
        return False
    order = values.compare(left, right)
    return {"EQUAL": order == 0, "NOT": order != 0, "BIGGER": order > 0, "SMALLER": order < 0}.get(
        operator, False
    )


def holds(actual: Any, condition: dict[str, Any], today: date) -> bool:
    """Whether a present claim satisfies the condition, compared by the condition's type.

    A claim that is a list (``nationalities``) satisfies a condition when one of its
    elements does; NOT holds when none of them is the value.
    """
    operator, expected = condition["operator"], condition.get("value")
    if operator == "EXISTS":
        return actual is not None
    kind = condition.get("type") or values.guess_type(expected, operator)
    if isinstance(actual, list):
        if operator == "NOT":
            return all(_scalar_holds(item, operator, expected, kind, today) for item in actual)
        return any(_scalar_holds(item, operator, expected, kind, today) for item in actual)
    return _scalar_holds(actual, operator, expected, kind, today)


def failed_condition(
    conditions: list[dict[str, Any]], claims: dict[str, Any], today: date
) -> str | None:
    """The first unmet condition as a message naming the attribute and the operator, or None.

    The contract: a failed condition's ``validation_error`` names both.
    """
    unmet = failed_conditions(conditions, claims, today)
    return unmet[0] if unmet else None


def failed_conditions(
    conditions: list[dict[str, Any]], claims: dict[str, Any], today: date
) -> list[str]:
    """Every unmet condition, in the verification's order, each as its own message."""
    unmet: list[str] = []
    for condition in conditions:
        name, operator = condition["name"], condition["operator"]
        actual = claim_value(claims, name)
        if actual is MISSING:
            unmet.append(f"Attribute {name} is missing, so {operator} cannot be satisfied")
        elif not holds(actual, condition, today):
            shown = "" if operator == "EXISTS" else f" {json.dumps(condition.get('value'))}"
            unmet.append(f"Attribute {name} does not satisfy {operator}{shown}")
    return unmet
