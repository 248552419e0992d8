"""Conditions evaluated on disclosed claims: each operator, and messages naming attribute and operator."""

from __future__ import annotations

from datetime import date

import pytest

from app.verifications.conditions import failed_condition

TODAY = date(2026, 11, 22)
CLAIMS = {
    "given_name": "Erika",
    "birthdate": "2008-11-22",
    "score": 7.5,
    "address": {"country": "DE"},
    "age_over_18": True,
}


def cond(name, operator, value=None):
    return {"name": name, "operator": operator, "value": value}


@pytest.mark.parametrize(
    "condition",
    [
        cond("given_name", "EQUAL", "Erika"),
        cond("given_name", "NOT", "Max"),
        cond("score", "BIGGER", 7),
        cond("score", "SMALLER", 8),
        cond("birthdate", "BIGGER", "2000-01-01"),
        cond("birthdate", "SMALLER", "2010-01-01"),
        cond("address.country", "IN", ["FR", "DE"]),
        cond("address.country", "EXISTS"),
        cond("birthdate", "AGE_AT_LEAST", 18),
        cond("age_over_18", "EQUAL", True),
    ],
)
def test_satisfied_conditions_pass(condition):
    assert failed_condition([condition], CLAIMS, TODAY) is None


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (cond("given_name", "EQUAL", "Max"), 'Attribute given_name does not satisfy EQUAL "Max"'),
        (cond("given_name", "NOT", "Erika"), 'Attribute given_name does not satisfy NOT "Erika"'),
        (cond("score", "BIGGER", 8), "Attribute score does not satisfy BIGGER 8"),
        (cond("score", "SMALLER", 7), "Attribute score does not satisfy SMALLER 7"),
        (
            cond("birthdate", "SMALLER", "2000-01-01"),
            'Attribute birthdate does not satisfy SMALLER "2000-01-01"',
        ),
        (
            cond("address.country", "IN", ["FR"]),
            'Attribute address.country does not satisfy IN ["FR"]',
        ),
        (
            cond("birthdate", "AGE_AT_LEAST", 19),
            "Attribute birthdate does not satisfy AGE_AT_LEAST 19",
        ),
        (cond("given_name", "BIGGER", 3), "Attribute given_name does not satisfy BIGGER 3"),
        (
            cond("nationality", "EXISTS"),
            "Attribute nationality is missing, so EXISTS cannot be satisfied",
        ),
    ],
)
def test_unmet_conditions_name_the_attribute_and_the_operator(condition, message):
    assert failed_condition([condition], CLAIMS, TODAY) == message


def test_age_turns_on_the_birthday():
    condition = [cond("birthdate", "AGE_AT_LEAST", 18)]
    assert failed_condition(condition, {"birthdate": "2008-11-23"}, TODAY) is not None
    assert failed_condition(condition, {"birthdate": "2008-11-22"}, TODAY) is None
