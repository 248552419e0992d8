"""The dashboard's side of who may open an individual: the form's ``anonymous_open`` with a
sentence per choice, the link secret shown once, the no-code link to copy, and who opened
each individual (page and CSV)."""

from __future__ import annotations

import csv
import io
import re

from factories import make_apikey, make_verification
from staff_support import submit, text_of
from test_staff_verifications import NEW, created_id, form_data

SECRET = re.compile(r'<code id="link-secret">(vls_[^<]+)</code>')


def test_the_form_explains_each_choice_and_saves_it(browser, client, owner):
    page = text_of(browser.get(NEW))
    for value in ("allowed", "signed", "refused"):
        assert f'name="anonymous_open" value="{value}"' in page
        assert f'data-testid="anonymous-open-{value}"' in page
    assert "ID can open any customer ID and present for it" in page
    made = created_id(browser.post(NEW, data=form_data(browser, anonymous_open="refused")))
    body = client.get(f"/verifications/{made}", headers=owner.headers()).get_json()
    assert body["anonymous_open"] == "refused"
    detail = text_of(browser.get(f"/dashboard/verifications/{made}"))
    assert "Never: only your backend opens, with its integration key" in detail
    assert 'value="refused" checked' in detail
    assert "link answers with a page saying it is not valid" in detail


def test_choosing_signed_shows_the_link_secret_once_and_the_recipe(browser, client, owner):
    created = browser.post(NEW, data=form_data(browser, anonymous_open="signed"))
    assert created.status_code == 201
    page = text_of(created)
    secret = SECRET.search(page).group(1)
    made = re.search(r'<code id="verification-id">([0-9a-f-]{36})</code>', page).group(1)
    # The secret shown is the one that signs.
    from app.verifications.link_secret import customer_sig

    opened = client.post(
        "/verifications/individuals",
        json={
            "customer_id": "crm-1",
            "verification_id": made,
            "customer_sig": customer_sig(secret, "crm-1"),
        },
    )
    assert opened.status_code == 201
    again = text_of(browser.get(f"/dashboard/verifications/{made}"))
    assert secret not in again and 'data-testid="link-secret"' not in again
    assert 'data-testid="customer-sig-recipe"' in again
    assert f"/connect/redirect/{made}?customer=&lt;customer_id&gt;&amp;customer_sig=" in again

    rotated = submit(browser, f"/dashboard/verifications/{made}/link-secret")
    assert rotated.status_code == 200
    new = SECRET.search(text_of(rotated)).group(1)
    assert new != secret
    stale = client.post(
        "/verifications/individuals",
        json={
            "customer_id": "crm-2",
            "verification_id": made,
            "customer_sig": customer_sig(secret, "crm-2"),
        },
    )
    assert stale.status_code == 401


def test_the_verification_page_shows_the_no_code_link_to_copy(browser, client, owner):
    made = make_verification(client, owner)["id"]
    page = text_of(browser.get(f"/dashboard/verifications/{made}"))
    assert (
        f'<code id="no-code-link" data-testid="no-code-link">https://verity.test/connect/redirect/'
        f"{made}?customer=&lt;customer_id&gt;</code>" in page
    )
    assert 'data-copy="no-code-link"' in page
    assert "By anyone who knows this verification's ID" in page


def test_the_individuals_page_and_export_say_who_opened_each(app, browser, client, owner):
    made = make_verification(client, owner)["id"]
    key = make_apikey(app, owner.organization_id, name="crm-sync")
    client.post(
        "/verifications/individuals",
        json={"customer_id": "by-backend", "verification_id": made},
        headers={"apikey": key},
    )
    client.post(
        "/verifications/individuals", json={"customer_id": "by-anyone", "verification_id": made}
    )
    client.get(f"/connect/redirect/{made}?customer=by-link")
    page = text_of(browser.get(f"/dashboard/verifications/{made}/individuals"))
    cells = re.findall(r'data-testid="opened-by">(.*?)</small>', page, re.S)
    assert sorted(cells) == sorted(
        [
            "Your backend (integration key): <code>crm-sync</code>",
            "Without a key (anyone knowing the verification ID)",
            "The no-code link",
        ]
    )
    exported = browser.get(f"/dashboard/verifications/{made}/individuals/export.csv")
    rows = list(csv.reader(io.StringIO(exported.get_data(as_text=True))))
    header = rows[0]
    by_customer = {row[1]: dict(zip(header, row, strict=True)) for row in rows[1:]}
    assert by_customer["by-backend"]["opened_by"] == "backend"
    assert by_customer["by-backend"]["opened_by_integration_id"]
    assert by_customer["by-anyone"]["opened_by"] == "anonymous"
    assert by_customer["by-link"]["opened_by"] == "link"
    assert by_customer["by-link"]["opened_by_integration_id"] == ""


def test_an_edit_that_leaves_the_choice_out_keeps_it(browser, client, owner):
    made = make_verification(client, owner, anonymous_open="refused")["id"]
    path = f"/dashboard/verifications/{made}"
    saved = browser.post(path, data=form_data(browser, path, name="Renamed"))
    assert saved.status_code == 303, text_of(saved)
    body = client.get(f"/verifications/{made}", headers=owner.headers()).get_json()
    assert body["name"] == "Renamed" and body["anonymous_open"] == "refused"
    allowed = browser.post(path, data=form_data(browser, path, anonymous_open="allowed"))
    assert allowed.status_code == 303
    body = client.get(f"/verifications/{made}", headers=owner.headers()).get_json()
    assert body["anonymous_open"] == "allowed"
