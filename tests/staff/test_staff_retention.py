"""The dashboard's side of retention: the verification form's two settings, and a revoked
credential and deleted claims shown among the individuals."""

from __future__ import annotations

import uuid

from factories import make_verification
from sqlalchemy import update
from staff_support import text_of
from test_staff_verifications import NEW, created_id, form_data

from app import clock
from app.extensions import db
from app.presentations.decide import Decision
from app.presentations.operations import connect, consume, record
from app.verifications.models import Individual
from app.verifications.operations import open_individual


def test_the_form_creates_and_edits_retention_and_the_re_check_interval(browser, client, owner):
    new_form = text_of(browser.get(NEW))
    assert 'name="retention_days" type="number" min="0" max="3650"' in new_form
    assert 'value="30"' in new_form and 'value="24"' in new_form
    made = created_id(
        browser.post(NEW, data=form_data(browser, retention_days="7", status_check_hours="12"))
    )
    path = f"/dashboard/verifications/{made}"
    body = client.get(f"/verifications/{made}", headers=owner.headers()).get_json()
    assert (body["retention_days"], body["status_check_hours"]) == (7, 12)
    page = text_of(browser.get(path))
    assert "7 days after the decision" in page and "Every 12 hours" in page

    saved = browser.post(path, data=form_data(browser, path, retention_days="0"))
    assert saved.status_code == 303, text_of(saved)
    body = client.get(f"/verifications/{made}", headers=owner.headers()).get_json()
    assert (body["retention_days"], body["status_check_hours"]) == (0, 12)
    assert "None: the decision only" in text_of(browser.get(path))


def test_a_bad_retention_is_refused_with_the_field_named_and_the_input_kept(browser):
    response = browser.post(NEW, data=form_data(browser, retention_days="forever"))
    assert response.status_code == 400
    page = text_of(response)
    assert "retention_days" in page
    assert 'value="forever"' in page


def test_the_individuals_page_shows_a_revoked_credential_and_claims_not_kept(
    app, browser, client, owner
):
    made = make_verification(client, owner)
    with app.app_context():
        for customer in ("kept-1", "revoked-1"):
            individual, _ = open_individual(uuid.UUID(made["id"]), customer)
            request = connect(individual, 120, 600)
            record(consume(request.id), Decision(True, None, "https://issuer.example", {}))
        db.session.execute(
            update(Individual)
            .where(Individual.customer_id == "revoked-1")
            .values(revoked_at=clock.now(), claims=None)
        )
        db.session.commit()
        db.session.remove()
    page = text_of(browser.get(f"/dashboard/verifications/{made['id']}/individuals"))
    assert page.count('data-testid="revoked"') == 1
    assert "Credential revoked" in page
    assert "Not kept" in page
