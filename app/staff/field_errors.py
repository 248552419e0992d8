"""A refused form's problems in words, each at the field it is about.

The JSON API's models validate the dashboard's forms too (one rule, two surfaces), and their
messages are for developers: "schema_id: Input should be a valid UUID, invalid length: found
0". A person filling in a form reads instead, next to the field, what to do ("Choose a
credential schema."). The words come from pydantic's stable error ``type`` and its context,
never from its message text, so an upgrade of pydantic does not change them.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

# Above the form when any field has its own message.
SUMMARY = "Some fields need a change: each one says what, below it."

# Where the kind of value alone does not say what to do.
BY_FIELD = {
    "schema_id": "Choose a credential schema.",
    "trust_sources": "Choose trust sources from the list.",
    "registration_certificate_id": "Choose a registration certificate from the list.",
    "return_url": "Enter an address that starts with https:// (or http://), or leave it empty.",
    "wallet_protocols": "Choose one of the wallet protocols.",
    "recommended_wallets": "Write each wallet as a name, then |, then its https:// address.",
}


def _words(error: Any) -> str:
    """One error of pydantic's, as a sentence for the person filling in the form."""
    kind = error["type"]
    context = error.get("ctx") or {}
    if kind == "missing":
        return "Fill this in."
    if kind == "string_too_short":
        minimum = context.get("min_length", 1)
        return "Fill this in." if minimum <= 1 else f"Use at least {minimum} characters."
    if kind == "string_too_long":
        return f"Use at most {context.get('max_length')} characters."
    if kind == "too_long":
        return f"At most {context.get('max_length')} entries."
    if kind == "too_short":
        return f"At least {context.get('min_length')} entry needed."
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "Enter a whole number."
    if kind in ("greater_than_equal", "greater_than"):
        return f"Enter {context.get('ge', context.get('gt'))} or more."
    if kind in ("less_than_equal", "less_than"):
        return f"Enter {context.get('le', context.get('lt'))} or less."
    if kind in ("literal_error", "enum"):
        options = str(context.get("expected", "the options shown")).replace("'", "")
        return f"Choose one of: {options}."
    if kind in ("uuid_parsing", "uuid_type"):
        return "Choose one from the list."
    if kind in ("url_parsing", "url_scheme", "string_pattern_mismatch"):
        return "Enter an address that starts with https://."
    if kind == "value_error":
        # Our own validators' messages are written for people already.
        text = str(context.get("error") or error.get("msg", ""))
        return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
    return "Check this value."


def field_errors(exc: ValidationError) -> dict[str, str]:
    """Each refused field's message, by the field's name in the body; the first per field."""
    found: dict[str, str] = {}
    for error in exc.errors(include_input=False, include_url=False):
        where = str(error["loc"][0]) if error["loc"] else "body"
        if where in found:
            continue
        words = BY_FIELD.get(where) or _words(error)
        if where == "attributes" and len(error["loc"]) > 1 and isinstance(error["loc"][1], int):
            # The form numbers its conditions from 1.
            words = f"Condition {error['loc'][1] + 1}: {words}"
        if where == "description_translations" and len(error["loc"]) > 1:
            # One field per language: say which.
            words = f"Purpose in {error['loc'][1]}: {words}"
        found[where] = words
    return found
