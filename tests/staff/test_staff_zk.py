"""The dashboard's choice of a zero-knowledge age check: the form says what it does, saves it,
shows it again, and a schema or claim no pinned circuit can prove is refused on the form."""

from __future__ import annotations

import pytest
from staff_support import text_of
from test_staff_verifications import NEW, created_id, form_data

from app.zk import available

pytestmark = pytest.mark.skipif(not available(), reason="needs the zk extra")

MDL_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"


def zk_form(browser, **overrides) -> dict:
    data = form_data(browser, schema_id=MDL_SCHEMA_ID, claims=["age_over_18"], zk="1")
    for key in [k for k in data if k.startswith("conditions-")]:
        del data[key]
    data.update(overrides)
    return data


def test_the_form_offers_the_proof_and_saves_it(browser, client, owner):
    page = text_of(browser.get(NEW))
    assert 'name="zk" value="1"' in page
    assert "you learn only the claim, who" in page
    made = created_id(browser.post(NEW, data=zk_form(browser)))
    assert client.get(f"/verifications/{made}", headers=owner.headers()).get_json()["zk"] is True
    detail = text_of(browser.get(f"/dashboard/verifications/{made}"))
    assert 'data-testid="zk" checked' in detail


def test_a_claim_no_circuit_proves_is_refused_on_the_form(browser):
    refused = browser.post(NEW, data=zk_form(browser, claims=["given_name"]))
    assert refused.status_code == 400
    assert "the pinned circuits prove one age claim" in text_of(refused)
