"""The overview shows what happened; lists are found and exported; the Audit page."""

from __future__ import annotations

import csv
import html
import io
import re
import uuid
from datetime import timedelta

from factories import make_staff, make_verification
from staff_support import submit, text_of

from app import clock
from app.extensions import db
from app.presentations import operations as presentations
from app.presentations.decide import Decision
from app.verifications.operations import open_individual

CONDITION = "Attribute birthdate does not satisfy AGE_AT_LEAST 18"
UNTRUSTED = "Credential issuer https://rogue.example is not trusted by this verification"


def presented(app, verification_id: str, customer_id: str, decision: Decision | None) -> None:
    """Open an individual; hand out a link; record a presentation unless ``decision`` is None."""
    with app.app_context():
        individual, _ = open_individual(uuid.UUID(verification_id), customer_id)
        request = presentations.connect(individual, 120, 300)
        if decision is not None:
            presentations.record(presentations.consume(request.id), decision)
        db.session.commit()
        db.session.remove()


def rows_of(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.get_data(as_text=True))))


# -- the overview ------------------------------------------------------------------------------


def test_the_overview_draws_todays_outcomes_and_gives_them_in_a_table(app, client, browser, owner):
    made = make_verification(client, owner)
    presented(app, made["id"], "ok-1", Decision(True, None, "https://issuer.example"))
    presented(app, made["id"], "no-1", Decision(False, CONDITION, "https://issuer.example"))
    presented(app, made["id"], "no-2", Decision(False, UNTRUSTED, "https://rogue.example"))
    page = text_of(browser.get("/dashboard/"))
    today = clock.now().date().isoformat()
    assert '<svg viewBox="0 0 600 200"' in page
    assert page.count('class="bar-verified"') == 1 and page.count('class="bar-failed"') == 1
    assert f"<title>{today}: 1 verified, 2 failed</title>" in page
    # The table holds every one of the 30 days, today with its numbers.
    table = page[page.index('data-testid="outcome-table"') :]
    table = table[: table.index("</table>")]
    assert table.count('<tr><th scope="row">') == 30
    assert f"{today}</time></th><td>1</td><td>2</td>" in table


def test_the_overview_counts_failures_by_reason_family(app, client, browser, owner):
    made = make_verification(client, owner)
    for n in range(2):
        presented(app, made["id"], f"c-{n}", Decision(False, CONDITION, None))
    presented(app, made["id"], "u-1", Decision(False, UNTRUSTED, None))
    page = text_of(browser.get("/dashboard/"))
    families = page[page.index('data-testid="failure-families"') :]
    assert '<th scope="row">Conditions not met</th><td>2</td>' in families
    assert '<th scope="row">Untrusted issuer</th><td>1</td>' in families
    assert families.index("Conditions not met") < families.index("Untrusted issuer")


def test_the_funnel_counts_each_step_per_verification(app, client, browser, owner):
    made = make_verification(client, owner)
    with app.app_context():
        open_individual(uuid.UUID(made["id"]), "only-opened")
        db.session.commit()
        db.session.remove()
    presented(app, made["id"], "took-link", None)
    presented(app, made["id"], "failed", Decision(False, CONDITION, None))
    presented(app, made["id"], "verified", Decision(True, None, None))
    page = text_of(browser.get("/dashboard/"))
    funnel = page[page.index('data-testid="funnels"') :]
    assert (
        '<td data-label="Opened">4</td><td data-label="Link taken">3</td>'
        '<td data-label="Presented">2</td><td data-label="Verified">1</td>'
    ) in funnel


def test_each_recent_outcome_links_to_that_individual_only(app, client, browser, owner):
    """cust-1's row opens cust-1, not every customer ID containing "cust-1" (cust-10)."""
    made = make_verification(client, owner)
    presented(app, made["id"], "cust-10", Decision(True, None, None))
    presented(app, made["id"], "cust-1", Decision(False, CONDITION, None))
    page = text_of(browser.get("/dashboard/"))
    base = f"/dashboard/verifications/{made['id']}/individuals"
    links = re.findall(rf'href="({re.escape(base)}\?[^"]+)">cust-1</a>', page)
    assert len(links) == 1
    target = text_of(browser.get(html.unescape(links[0])))
    assert '<code class="customer-id" title="cust-1">cust-1</code>' in target
    assert 'data-testid="one-individual"' in target
    assert "cust-10" not in target
    everyone = text_of(browser.get(base))
    assert '<code class="customer-id" title="cust-10">cust-10</code>' in everyone


def test_an_individual_link_that_is_not_an_id_is_refused(client, browser, owner):
    made = make_verification(client, owner)
    base = f"/dashboard/verifications/{made['id']}/individuals"
    assert browser.get(f"{base}?individual=cust-1").status_code == 400


# -- finding individuals and credentials ------------------------------------------------------


def test_individuals_are_found_by_customer_id_status_and_day(app, client, browser, owner):
    made = make_verification(client, owner)
    presented(app, made["id"], "alpha-1", Decision(True, None, None))
    presented(app, made["id"], "alpha-2", Decision(False, CONDITION, None))
    presented(app, made["id"], "beta-1", Decision(False, CONDITION, None))
    base = f"/dashboard/verifications/{made['id']}/individuals"
    alpha = text_of(browser.get(f"{base}?customer_id=alpha"))
    assert "alpha-1" in alpha and "alpha-2" in alpha and "beta-1" not in alpha
    failed_alpha = text_of(browser.get(f"{base}?customer_id=alpha&status=FAILED"))
    assert "alpha-2" in failed_alpha and "alpha-1" not in failed_alpha
    today = clock.now().date()
    assert "beta-1" in text_of(browser.get(f"{base}?from={today}&to={today}"))
    tomorrow = today + timedelta(days=1)
    assert "No individual matches these filters" in text_of(browser.get(f"{base}?from={tomorrow}"))
    assert browser.get(f"{base}?from=soon").status_code == 400


def test_the_filters_stay_in_the_pagination_links(app, client, browser, owner):
    made = make_verification(client, owner)
    for n in range(3):
        presented(app, made["id"], f"kept-{n}", Decision(False, CONDITION, None))
    presented(app, made["id"], "other", Decision(False, CONDITION, None))
    base = f"/dashboard/verifications/{made['id']}/individuals"
    page = text_of(browser.get(f"{base}?customer_id=kept&status=FAILED&limit=2"))
    assert "Page 1 of 2 (3 in all)" in page
    assert "customer_id=kept" in page and "status=FAILED" in page
    second = text_of(browser.get(f"{base}?customer_id=kept&status=FAILED&limit=2&page=2"))
    assert "other" not in second and "Page 2 of 2" in second


def test_credentials_are_found_by_recipient_and_status(app, client, browser):
    from issuance.issuance_support import issue, make_org
    from staff_support import sign_in

    org = make_org(app)
    issued = issue(client, org)
    client.post(f"/credentials/{issued['id']}/revoke", headers=org.headers)
    kept = issue(client, org, name="Second diploma")
    sign_in(browser := app.test_client(), org.staff.token)
    found = text_of(browser.get("/dashboard/credentials?recipient=lovelace&status=OFFERED"))
    assert kept["id"] in found and issued["id"] not in found
    assert 'value="lovelace"' in found
    assert "No credential matches" in text_of(
        browser.get("/dashboard/credentials?recipient=nobody-by-that-name")
    )
    by_email = text_of(browser.get("/dashboard/credentials?recipient=ADA@EXAMPLE"))
    assert kept["id"] in by_email


# -- export ------------------------------------------------------------------------------------


def test_the_individuals_export_is_streamed_filtered_and_formula_safe(app, client, browser, owner):
    made = make_verification(client, owner)
    hostile = ['=HYPERLINK("https://evil.example")', "+1+1", "-2", "@SUM(A1)", "\tx", "\rx"]
    for customer in [*hostile, "plain, with comma"]:
        presented(app, made["id"], customer, Decision(False, CONDITION, None))
    response = browser.get(
        f"/dashboard/verifications/{made['id']}/individuals/export.csv?status=FAILED"
    )
    assert response.status_code == 200
    assert response.is_streamed
    assert response.mimetype == "text/csv"
    assert 'attachment; filename="individuals.csv"' in response.headers["Content-Disposition"]
    rows = rows_of(response)
    assert rows[0][:3] == ["individual_id", "customer_id", "status"] and "claims" not in rows[0]
    customers = {row[1] for row in rows[1:]}
    assert customers == {"'" + value for value in hostile} | {"plain, with comma"}
    # No cell starts as a formula would, and every cell is quoted.
    assert not [c for row in rows for c in row if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert '"\'=HYPERLINK(""https://evil.example"")"' in response.get_data(as_text=True)
    none_verified = browser.get(
        f"/dashboard/verifications/{made['id']}/individuals/export.csv?status=VERIFIED"
    )
    assert len(rows_of(none_verified)) == 1


def test_claims_are_exported_only_when_asked_for(app, client, browser, owner):
    made = make_verification(client, owner)
    claims = {"given_name": "=cmd", "family_name": "Lovelace"}
    presented(app, made["id"], "with-claims", Decision(True, None, None, claims))
    base = f"/dashboard/verifications/{made['id']}/individuals/export.csv"
    without = browser.get(base).get_data(as_text=True)
    assert "Lovelace" not in without
    rows = rows_of(browser.get(f"{base}?claims=1"))
    assert rows[0][-1] == "claims"
    assert "Lovelace" in rows[1][-1]


def test_the_credentials_export_reads_in_batches_and_keeps_claims_out(app, client, monkeypatch):
    from issuance.issuance_support import issue, make_org
    from staff_support import sign_in

    from app.issuance import search

    monkeypatch.setattr(search, "EXPORT_BATCH", 2)
    monkeypatch.setattr(search.each_credential, "__defaults__", (2,))
    org = make_org(app)
    made = [issue(client, org, name=f"=Diploma {n}") for n in range(5)]
    sign_in(browser := app.test_client(), org.staff.token)
    response = browser.get("/dashboard/credentials/export.csv?recipient=ada")
    assert response.is_streamed
    rows = rows_of(response)
    assert sorted(row[0] for row in rows[1:]) == sorted(c["id"] for c in made)
    assert {row[1] for row in rows[1:]} == {f"'=Diploma {n}" for n in range(5)}
    assert "Mathematics" not in response.get_data(as_text=True)
    with_claims = rows_of(browser.get("/dashboard/credentials/export.csv?claims=1"))
    assert "Mathematics" in with_claims[1][-1]


def test_another_organizations_individuals_cannot_be_exported(app, client, owner):
    from staff_support import sign_in

    made = make_verification(client, owner)
    other = make_staff(app, "mallory@example.test", org_name="Other")
    sign_in(browser := app.test_client(), other.token)
    response = browser.get(f"/dashboard/verifications/{made['id']}/individuals/export.csv")
    assert response.status_code == 404


# -- the audit page ----------------------------------------------------------------------------


def test_each_audit_event_is_one_line_with_its_fields_on_demand(app, browser, owner):
    for number in range(12):
        response = submit(browser, "/dashboard/integrations", {"name": f"warehouse-{number}"})
        assert response.status_code in (201, 303)
    page = browser.get("/dashboard/audit").get_data(as_text=True)
    cells = re.findall(r'<td data-label="Fields">(.*?)</td>', page, re.S)
    assert len(cells) >= 12
    for cell in cells:
        # Folded: a summary naming the first field; the list (no stray commas) opens on demand.
        assert cell.startswith('<details class="audit-fields">'), cell
        summary = re.search(r"<summary>(.*?)</summary>", cell, re.S).group(1)
        assert re.fullmatch(r"\d+ fields?", summary), summary
        assert "<li>name = <code>warehouse-" in cell


def test_dashboard_writes_appear_on_the_audit_page_and_filter(app, browser, owner):
    response = submit(browser, "/dashboard/integrations", {"name": "warehouse"})
    assert response.status_code in (201, 303), response.get_data(as_text=True)
    page = text_of(browser.get("/dashboard/audit"))
    assert "integration.created" in page and owner.email in page and "127.0.0.1" in page
    assert "name = <code>warehouse</code>" in page and "key_hash" in page
    assert "integration.created" in text_of(browser.get("/dashboard/audit?record_type=integration"))
    assert "No change matches" in text_of(browser.get("/dashboard/audit?action=revoked"))
    assert "No change matches" in text_of(browser.get("/dashboard/audit?actor=nobody"))


# -- bulk upload: results to download --------------------------------------------------------


def test_upload_results_are_downloadable_with_their_codes_and_kept_nowhere(app, client):
    import base64
    import re

    from factories import make_staff as staff_of
    from staff_support import issue_uploads, sign_in, upload_nonce
    from support.issuing import add_recipient, publish_schema

    owner = staff_of(app)
    schema = publish_schema(client, owner)
    add_recipient(app, client, owner, "ada@example.test")
    sign_in(browser := app.test_client(), owner.token)
    data = b"recipient_email,licence_number\n" + b"ada@example.test,=RN-1\nada@example.test,RN-2\n"
    response = submit(
        browser,
        "/dashboard/credentials/upload",
        {"schema_id": schema, "name": "", "description": "", "tx_code": "on",
         "upload_nonce": upload_nonce(browser),
         "file": (io.BytesIO(data), "two.csv", "text/csv")},
        content_type="multipart/form-data",
    )  # fmt: skip
    assert response.status_code == 303, text_of(response)
    issue_uploads(app)
    page = text_of(browser.get(response.location))
    link = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)" download="([^"]+)"', page)
    assert link and link.group(2) == "issued-credentials.csv"
    rows = list(csv.reader(io.StringIO(base64.b64decode(link.group(1)).decode())))
    assert rows[0] == ["credential_id", "name", "recipient", "recipient_email", "code", "email"]
    codes = re.findall(r'<td data-label="Code"><code>(\d+)</code></td>', page)
    assert len(rows) == 3 and sorted(r[4] for r in rows[1:]) == sorted(codes)
    # No other answer carries the codes, nor does the results page or its file a second time.
    assert all(code not in text_of(browser.get("/dashboard/credentials")) for code in codes)
    again = text_of(browser.get(response.location))
    assert "2 credentials offered" in again and 'download="issued-credentials.csv"' in again
    assert all(code not in again for code in codes)
