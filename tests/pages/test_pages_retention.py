"""The person's page says how long the organization keeps what they share."""

from __future__ import annotations

import re

import pytest
from pages_support import open_individual, open_policy


def sentence(page: str) -> str:
    match = re.search(r'<p class="retention">(.*?)</p>', page, re.DOTALL)
    assert match, "the page says nothing about how long claims are kept"
    return " ".join(re.sub(r"<[^>]+>", "", match.group(1)).split())


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, "Acme keeps what you share for 30 days after the check, then it is deleted"),
        ({"retention_days": 1}, "Acme keeps what you share for 1 day after the check"),
        ({"retention_days": 0}, "Acme keeps only the outcome of the check, not what you share."),
    ],
)
def test_the_individual_page_says_how_long_claims_are_kept(app, client, settings, expected):
    opened = open_individual(app, client, **settings)
    assert expected in sentence(client.get(opened.path).get_data(as_text=True))


def test_the_policy_request_page_says_it_too(app, client):
    created = open_policy(app, client, retention_days=7)
    page = client.get(f"/p/{created['token']}").get_data(as_text=True)
    assert "keeps what you share for 7 days" in sentence(page)
