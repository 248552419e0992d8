"""The person's page in words that hold in every language: staff's own text keeps its own
direction on a right-to-left page, claims without display names read as words, a revoked
credential is not sent round "Try again", and the docs say who sees an outcome."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from pages_support import open_individual

from app.extensions import db
from app.presentations.reasons import not_again_for_person
from app.verifications.models import Individual, Status

ROOT = Path(__file__).resolve().parents[2]
REVOKED = "Credential has been revoked by its issuer"


def fail_with(app, individual_id: str, reason: str) -> None:
    """The individual as a refused presentation leaves it (status and reason)."""
    with app.app_context():
        individual = db.session.get(Individual, uuid.UUID(individual_id))
        individual.status = Status.FAILED
        individual.validation_error = reason
        db.session.commit()
        db.session.remove()


def test_an_english_fallback_purpose_keeps_its_direction_on_an_arabic_page(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path, headers={"Accept-Language": "ar"}).get_data(as_text=True)
    assert 'dir="rtl"' in page
    # Isolated, the English sentence is laid out left to right: its full stop at its end.
    assert (
        '<bdi data-testid="purpose">We check that you are of age and live in the EU.</bdi>' in page
    )
    assert "<bdi>Adult residents</bdi>" in page


def test_claims_without_display_names_read_as_words_not_keys(app, client):
    from app.schemas.models import Schema

    schema = Schema(name="Membership", attributes=[{"name": "member_number"}, {"name": "x"}])
    assert schema.shown_to_person("member_number") == "member number"
    assert schema.shown_to_person("address.country") == "address: country"


def test_the_issuing_tutorial_shows_how_to_give_attributes_display_names():
    text = (ROOT / "docs/tutorials/first-issued-credential.md").read_text()
    assert '"description": "Member number"' in text
    assert '"description_translations"' in text
    assert "display name" in text


def test_a_revoked_credential_is_told_what_will_not_work_and_what_will(app, client):
    opened = open_individual(app, client)
    fail_with(app, opened.individual_id, REVOKED)
    page = client.get(opened.path).get_data(as_text=True)
    said = re.search(r'<p data-testid="not-again">([^<]+)</p>', page)
    assert said is not None, page
    assert "will not work" in said.group(1) and "another valid credential" in said.group(1)
    assert "Next step: try again with your wallet below." not in page
    # In the person's language too.
    german = client.get(opened.path, headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert "wird nicht funktionieren" in german


def test_another_refusal_still_offers_to_try_again(app, client):
    opened = open_individual(app, client)
    fail_with(app, opened.individual_id, "Credential has expired")
    page = client.get(opened.path).get_data(as_text=True)
    assert 'data-testid="not-again"' not in page
    assert not_again_for_person("Credential has expired") is None
    assert not_again_for_person(REVOKED) is not None


def test_any_browser_with_the_address_sees_the_outcome_and_the_docs_say_so(app, client):
    """The page address is the secret, as the individual ID is for the status API: the
    outcome is no more than GET /verifications/{id}/verify tells anyone holding the ID."""
    opened = open_individual(app, client)
    fail_with(app, opened.individual_id, REVOKED)
    other_browser = app.test_client()
    page = other_browser.get(opened.path).get_data(as_text=True)
    assert "Not verified." in page
    text = " ".join((ROOT / "docs/reference/person-pages.md").read_text().split())
    assert "only that browser sees the result" not in text
    assert "any browser that opens the page address sees the outcome" in text
