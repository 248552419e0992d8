"""The dashboard's Credentials page: issuing from a form built from the schema, the list and its
filter, revoking with confirmation, resending, the CSV upload, the recipient's page, the plan
gate, CSRF and tenant isolation. Offer emails go to a real SMTP server (aiosmtpd on loopback)."""

from __future__ import annotations

import logging
import re

import pytest
from factories import make_staff
from flask.testing import FlaskClient
from staff_support import csrf_of, issue_uploads, sign_in, submit, text_of, upload_nonce
from support.issuing import BASE, add_recipient, offer_credential, publish_schema
from support.smtp import smtp_server

from app.organizations.models import Plan

ISSUED = re.compile(r'/dashboard/credentials/([0-9a-f-]{36})"')


def setup(app, client: FlaskClient, owner) -> tuple[str, str]:
    """A published schema (licence_number TEXT, grade NUMBER) and one recipient."""
    return publish_schema(client, owner), add_recipient(app, client, owner, "ada@example.test")


def issue_form(schema: str, recipient: str, **extra) -> dict:
    return {
        "schema_id": schema,
        "recipient_id": recipient,
        "name": "Nurse licence",
        "description": "Registered nurse",
        "claim.licence_number": "RN-1234",
        "claim.grade": "3",
        **extra,
    }


def api_credentials(client: FlaskClient, owner, **query) -> list[dict]:
    response = client.get("/credentials", query_string=query, headers=owner.headers())
    assert response.status_code == 200, response.get_json()
    return response.get_json()["results"]


def offer_credential_for(app, client, owner, email: str = "ada@example.test") -> str:
    """A credential offered through the JSON API by ``owner``; its ID."""
    return offer_credential(app, client, owner=owner, recipient_email=email).credential["id"]


def signed_in_client(app, owner) -> FlaskClient:
    client = app.test_client()
    assert sign_in(client, owner.token).status_code == 302
    return client


# -- the page and the form --------------------------------------------------------------------


def test_credentials_is_a_section_of_the_dashboard(browser):
    page = text_of(browser.get("/dashboard/"))
    assert '<a href="/dashboard/credentials"' in page
    listing = browser.get("/dashboard/credentials")
    assert listing.status_code == 200
    assert "No credentials yet." in text_of(listing)


def test_the_form_has_one_typed_input_per_attribute_of_the_chosen_schema(
    app, client, browser, owner
):
    schema = client.post(
        "/schemas",
        json={
            "name": "Membership",
            "vct": "https://acme.test/member",
            "attributes": [
                {"name": "member_number", "type": "NUMBER"},
                {"name": "joined", "type": "DATETIME"},
                {"name": "active", "type": "BOOLEAN"},
                {"name": "email", "type": "EMAIL"},
                {"name": "homepage", "type": "URL"},
            ],
        },
        headers=owner.headers(),
    ).get_json()["id"]
    client.post(f"/schemas/{schema}/publish", headers=owner.headers())
    add_recipient(app, client, owner, "ada@example.test")
    page = text_of(browser.get(f"/dashboard/credentials/new?schema_id={schema}"))
    assert re.search(r'name="claim.member_number" type="number"', page)
    assert re.search(r'name="claim.joined" type="date"', page)
    assert re.search(r'<select id="claim-\d" name="claim.active">', page)
    assert re.search(r'name="claim.email" type="email"', page)
    assert re.search(r'name="claim.homepage" type="url"', page)
    assert "the schema's name if left empty" in page


def test_choosing_another_schema_without_javascript_redraws_the_claims(app, client, browser, owner):
    schema, recipient = setup(app, client, owner)
    page = submit(
        browser, "/dashboard/credentials/new", {**issue_form(schema, recipient), "action": "choose"}
    )
    assert page.status_code == 200
    assert 'name="claim.licence_number"' in text_of(page)
    assert 'value="RN-1234"' in text_of(page), "what was typed is kept"
    assert api_credentials(client, owner) == []


def test_an_empty_name_is_the_schemas(app, client, browser, owner):
    schema, recipient = setup(app, client, owner)
    response = submit(browser, "/dashboard/credentials/new", issue_form(schema, recipient, name=""))
    assert response.status_code == 303
    assert api_credentials(client, owner)[0]["name"] == "Nurse licence"


def test_the_htmx_fragment_is_the_chosen_schemas_inputs(app, client, browser, owner):
    schema, _ = setup(app, client, owner)
    fragment = text_of(browser.get(f"/dashboard/credentials/attributes?schema_id={schema}"))
    assert fragment.lstrip().startswith('<fieldset id="attributes">')
    assert "<html" not in fragment
    assert 'name="claim.grade" type="number"' in fragment


def test_issuing_from_the_form_offers_the_credential_with_typed_claims(app, client, browser, owner):
    schema, recipient = setup(app, client, owner)
    response = submit(
        browser, "/dashboard/credentials/new", issue_form(schema, recipient), follow_redirects=True
    )
    page = text_of(response)
    assert response.status_code == 200, page
    assert len(response.history) == 1 and response.history[0].status_code == 303
    assert "Credential offered" in page
    assert 'data-testid="credential-status">Offered<' in page
    [stored] = api_credentials(client, owner)
    assert stored["status"] == "OFFERED"
    assert stored["recipient_id"] == recipient
    assert stored["claims"] == [
        {"name": "licence_number", "value": "RN-1234"},
        {"name": "grade", "value": 3},
    ]
    assert stored["offer_page"] in page
    assert "tx-code" not in page


def test_a_tx_code_is_shown_once_on_the_page_the_issue_redirects_to(app, client, browser, owner):
    schema, recipient = setup(app, client, owner)
    posted = submit(
        browser, "/dashboard/credentials/new", issue_form(schema, recipient, tx_code="on")
    )
    assert posted.status_code == 303
    [stored] = api_credentials(client, owner)
    assert posted.headers["Location"] == f"/dashboard/credentials/{stored['id']}"
    landing = text_of(browser.get(posted.headers["Location"]))
    code = re.search(r'data-testid="tx-code">(\d+)<', landing).group(1)
    assert code not in posted.headers["Location"]
    assert code.encode() not in (posted.headers.get("Set-Cookie") or "").encode()
    assert "tx_code" not in stored
    assert code not in text_of(browser.get(f"/dashboard/credentials/{stored['id']}"))


def test_reloading_the_page_after_issuing_changes_nothing(app, client, browser, owner):
    schema, recipient = setup(app, client, owner)
    posted = submit(browser, "/dashboard/credentials/new", issue_form(schema, recipient))
    landing = posted.headers["Location"]
    first = browser.get(landing)
    assert "Credential offered" in text_of(first)
    reload = browser.get(landing)
    assert reload.status_code == 200
    assert "Credential offered" not in text_of(reload)
    assert len(api_credentials(client, owner)) == 1


def test_without_a_mail_server_the_page_says_the_email_was_only_logged(make_app):
    app = make_app(MAIL_URL="", ENV="development")
    owner = make_staff(app)
    client = app.test_client()
    schema, recipient = setup(app, client, owner)
    browser = signed_in_client(app, owner)
    page = text_of(
        submit(
            browser,
            "/dashboard/credentials/new",
            issue_form(schema, recipient),
            follow_redirects=True,
        )
    )
    assert 'data-testid="mail-logged"' in page
    assert "no mail server is configured" in page
    assert "on its way" not in page and 'data-testid="mail-sent"' not in page


def test_without_a_mail_server_the_form_promises_no_email(make_app):
    app = make_app(MAIL_URL="", ENV="development")
    owner = make_staff(app)
    schema, _ = setup(app, app.test_client(), owner)
    form = signed_in_client(app, owner).get(f"/dashboard/credentials/new?schema_id={schema}")
    page = form.get_data(as_text=True)
    assert ">Issue the offer</button>" in page and "Issue and email" not in page
    assert 'data-testid="no-mail-server"' in page


def test_with_a_mail_server_the_form_says_it_emails_the_offer(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=f"smtp://127.0.0.1:{inbox.port}")
        owner = make_staff(app)
        schema, _ = setup(app, app.test_client(), owner)
        form = signed_in_client(app, owner).get(f"/dashboard/credentials/new?schema_id={schema}")
        page = form.get_data(as_text=True)
    assert ">Issue and email the offer</button>" in page
    assert 'data-testid="no-mail-server"' not in page


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"claim.grade": "three"}, "grade: “three” is not a number"),
        ({"recipient_id": ""}, "recipient_id"),
        ({"schema_id": "00000000-0000-0000-0000-000000000000"}, "Choose one of the published"),
    ],
)
def test_a_refused_form_comes_back_with_the_reason_and_nothing_is_issued(
    app, client, browser, owner, change, message
):
    schema, recipient = setup(app, client, owner)
    response = submit(
        browser, "/dashboard/credentials/new", issue_form(schema, recipient, **change)
    )
    assert response.status_code == 400
    page = text_of(response)
    assert message in page
    assert 'data-testid="form-error"' in page
    assert api_credentials(client, owner) == []


def test_a_draft_schema_is_not_offered(app, client, browser, owner):
    response = client.post(
        "/schemas",
        json={
            "name": "Draft thing",
            "vct": "https://acme.test/draft",
            "attributes": [{"name": "x", "type": "TEXT"}],
        },
        headers=owner.headers(),
    )
    assert response.status_code == 201, response.get_json()
    schema, _ = setup(app, client, owner)
    page = text_of(browser.get("/dashboard/credentials/new"))
    assert "Draft thing" not in page
    assert f'value="{schema}"' in page


# -- mail -------------------------------------------------------------------------------------


def test_the_offer_email_reaches_the_recipient_after_the_issuance_is_stored(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=f"smtp://127.0.0.1:{inbox.port}", MAIL_FROM="creds@acme.test")
        owner = make_staff(app)
        client = app.test_client()
        schema, recipient = setup(app, client, owner)
        browser = signed_in_client(app, owner)
        page = text_of(
            submit(
                browser,
                "/dashboard/credentials/new",
                issue_form(schema, recipient, tx_code="on"),
                follow_redirects=True,
            )
        )
    [received] = inbox.messages
    [stored] = api_credentials(client, owner)
    assert received.recipients == ["ada@example.test"]
    assert received.message["Subject"] == "Acme offers you a credential: Nurse licence"
    body = received.message.get_content()
    assert stored["offer_page"] in body
    code = re.search(r'data-testid="tx-code">(\d+)<', page).group(1)
    assert code not in body
    assert 'data-testid="mail-sent"' in page


def test_a_relay_that_is_down_leaves_the_credential_offered_and_says_so(make_app, caplog):
    with smtp_server() as inbox:
        down = f"smtp://127.0.0.1:{inbox.port}"
    app = make_app(MAIL_URL=down, MAIL_TIMEOUT=2)
    owner = make_staff(app)
    client = app.test_client()
    schema, recipient = setup(app, client, owner)
    browser = signed_in_client(app, owner)
    caplog.set_level(logging.ERROR, logger="app.mail")
    response = submit(
        browser, "/dashboard/credentials/new", issue_form(schema, recipient), follow_redirects=True
    )
    assert response.status_code == 200
    assert 'data-testid="mail-failed"' in text_of(response)
    [stored] = api_credentials(client, owner)
    assert stored["status"] == "OFFERED"
    assert f"offer email for credential {stored['id']} not sent" in caplog.text


# -- one credential ---------------------------------------------------------------------------


def test_revoking_without_javascript_asks_first_then_revokes(app, client, browser, owner):
    offered = offer_credential_for(app, client, owner)
    confirm = browser.get(f"/dashboard/credentials/{offered}/revoke")
    assert confirm.status_code == 200
    assert "Revoke “Nurse licence”?" in text_of(confirm)
    assert api_credentials(client, owner)[0]["status"] == "OFFERED", "asking changes nothing"
    done = submit(browser, f"/dashboard/credentials/{offered}/revoke")
    assert done.status_code == 303
    assert done.headers["Location"] == f"/dashboard/credentials/{offered}"
    assert api_credentials(client, owner)[0]["status"] == "REVOKED"
    page = text_of(browser.get(done.headers["Location"]))
    assert "“Nurse licence” revoked." in page
    assert ">Revoke</a>" not in page
    assert "Resend the offer" not in page
    again = submit(browser, f"/dashboard/credentials/{offered}/revoke")
    assert again.status_code == 303, "revoking is idempotent"


def test_the_detail_page_asks_through_htmx_and_htmx_is_sent_on(app, client, browser, owner):
    offered = offer_credential_for(app, client, owner)
    page = text_of(browser.get(f"/dashboard/credentials/{offered}"))
    assert f'hx-post="/dashboard/credentials/{offered}/revoke"' in page
    assert 'hx-confirm="Revoke “Nurse licence” of Ada Lovelace?' in page
    token = csrf_of(browser, "/dashboard/")
    done = browser.post(
        f"/dashboard/credentials/{offered}/revoke",
        headers={"HX-Request": "true", "X-CSRF-Token": token},
    )
    assert done.status_code == 204
    assert done.headers["HX-Redirect"] == f"/dashboard/credentials/{offered}"


def test_resending_makes_a_new_offer_and_the_old_page_stops(app, client, browser, owner):
    credential = offer_credential(app, client, owner=owner).credential
    old_page = credential["offer_page"].removeprefix(BASE)
    assert client.get(old_page).status_code == 200
    response = submit(
        browser, f"/dashboard/credentials/{credential['id']}/resend", follow_redirects=True
    )
    assert response.status_code == 200
    assert response.history[0].status_code == 303
    page = text_of(response)
    assert "A new offer was made" in page
    new_page = re.search(rf'<code id="offer-page">{BASE}(/o/[^<]+)</code>', page).group(1)
    assert new_page != old_page
    assert client.get(old_page).status_code == 404
    assert client.get(new_page).status_code == 200


def test_the_list_filters_by_status(app, client, browser, owner):
    kept = offer_credential_for(app, client, owner)
    gone = offer_credential_for(app, client, owner, email="grace@example.test")
    client.post(f"/credentials/{gone}/revoke", headers=owner.headers())
    everything = text_of(browser.get("/dashboard/credentials"))
    assert kept in everything and gone in everything
    revoked = text_of(browser.get("/dashboard/credentials?status=REVOKED"))
    assert gone in revoked and kept not in revoked
    assert '<option value="REVOKED" selected>' in revoked
    offered = text_of(browser.get("/dashboard/credentials?status=offered"))
    assert kept in offered and gone not in offered
    assert "No credential has the status “Offer expired”." in text_of(
        browser.get("/dashboard/credentials?status=EXPIRED")
    )


def test_an_offered_credential_shows_when_it_was_offered_and_no_issue_date(
    app, client, browser, owner
):
    offered = offer_credential_for(app, client, owner)
    recipient = api_credentials(client, owner)[0]["recipient_id"]
    for path in ("/dashboard/credentials", f"/dashboard/recipients/{recipient}"):
        page = text_of(browser.get(path))
        assert offered in page
        row = page[page.index(offered) :].split("</tr>")[0]
        assert re.search(r'data-label="Offered on"><time datetime="[^"]+">\d{4}-\d\d-\d\d<', row)
        assert re.search(r'data-label="Issued on">Not yet</td>', row), row


def test_the_recipients_page_lists_their_credentials(app, client, browser, owner):
    offered = offer_credential_for(app, client, owner)
    recipient = api_credentials(client, owner)[0]["recipient_id"]
    other = add_recipient(app, client, owner, "someone@example.test")
    page = text_of(browser.get(f"/dashboard/recipients/{recipient}"))
    assert f'href="/dashboard/credentials/{offered}"' in page
    assert "Issue a credential to Ada" in page
    assert offered not in text_of(browser.get(f"/dashboard/recipients/{other}"))


# -- CSV upload -------------------------------------------------------------------------------


def upload(browser: FlaskClient, schema: str, data: bytes, **fields) -> object:
    """Send the upload form as the browser does, with the nonce of a form it just opened
    (or the one given)."""
    import io

    return submit(
        browser,
        "/dashboard/credentials/upload",
        {
            "schema_id": schema,
            "name": "",
            "description": "",
            "upload_nonce": fields.pop("upload_nonce", None) or upload_nonce(browser),
            **fields,
            "file": (io.BytesIO(data), "nurses.csv", "text/csv"),
        },
        content_type="multipart/form-data",
    )


def test_a_csv_issues_every_row_and_mails_each_person(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=f"smtp://127.0.0.1:{inbox.port}")
        owner = make_staff(app)
        client = app.test_client()
        schema, first = setup(app, client, owner)
        add_recipient(app, client, owner, "grace@example.test")
        browser = signed_in_client(app, owner)
        response = upload(
            browser,
            schema,
            b"recipient_email,licence_number,grade\n"
            b"ada@example.test,RN-1,1\nGRACE@example.test,RN-2,\n",
            tx_code="on",
        )
        assert response.status_code == 303, text_of(response)
        assert response.location == "/dashboard/credentials/upload/results"
        issue_uploads(app)
        page = text_of(browser.get(response.location))
    assert "2 credentials offered" in page
    assert len(re.findall(r'<td data-label="Code"><code>\d+</code></td>', page)) == 2, (
        "each code shown once"
    )
    assert page.count('<td data-label="Email">sent</td>') == 2, "handed to the mail server"
    stored = api_credentials(client, owner)
    assert sorted(c["claims"][0]["value"] for c in stored) == ["RN-1", "RN-2"]
    assert {c["name"] for c in stored} == {"Nurse licence"}, "the schema's name by default"
    assert sorted(m.recipients[0] for m in inbox.messages) == [
        "ada@example.test",
        "grace@example.test",
    ]
    assert first


def test_a_csv_with_problems_issues_nothing_and_lists_every_problem(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=f"smtp://127.0.0.1:{inbox.port}")
        owner = make_staff(app)
        client = app.test_client()
        schema, _ = setup(app, client, owner)
        browser = signed_in_client(app, owner)
        response = upload(
            browser,
            schema,
            b"recipient_email,licence_number,grade\n"
            b"ada@example.test,RN-1,1\n"
            b"nobody@example.test,RN-2,2\n"
            b"ada@example.test,RN-3,many\n"
            b"ada@example.test,RN-4,4,extra\n",
        )
    assert response.status_code == 400
    page = text_of(response)
    assert "Nothing was issued." in page
    assert "Line 3: no recipient of yours has the email “nobody@example.test”." in page
    assert "Line 4: grade: “many” is not a number" in page
    assert "Line 5: more cells than the header has columns." in page
    assert "Line 2" not in page
    assert api_credentials(client, owner) == []
    assert inbox.messages == []


def test_rows_the_issuing_checks_refuse_are_named_by_their_line(app, client, browser, owner):
    schema, _ = setup(app, client, owner)
    response = upload(
        browser,
        schema,
        b"recipient_email,licence_number,grade\nada@example.test,RN-1,1\n\nada@example.test,,\n",
    )
    assert response.status_code == 400
    page = text_of(response)
    assert "Line 4: claims: at least one claim is needed" in page
    assert "row 2" not in page
    assert api_credentials(client, owner) == []


def test_a_csv_over_a_thousand_rows_is_refused(app, client, browser, owner):
    schema, _ = setup(app, client, owner)
    rows = b"".join(b"ada@example.test,RN\n" for _ in range(1001))
    response = upload(browser, schema, b"recipient_email,licence_number\n" + rows)
    assert response.status_code == 400
    assert "more than 1,000 rows" in text_of(response)
    assert api_credentials(client, owner) == []


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        (
            b"R" * 200_000,
            "Line 3, column licence_number: the value is 200,000 characters long; "
            "at most 5,000 are allowed.",
        ),
        (b"RN\x00-1", "Line 3, column licence_number: Text must not contain NUL characters."),
        (
            "RN-\u00e9".encode("latin-1"),
            "Line 3: the file is not UTF-8 text; save it as “CSV UTF-8”.",
        ),
    ],
    ids=["a cell over the csv module's 131,072 characters", "NUL", "not UTF-8"],
)
def test_a_cell_the_json_api_would_refuse_is_named_on_the_page_and_nothing_is_issued(
    app, client, browser, owner, cell, problem
):
    schema, _ = setup(app, client, owner)
    data = b"recipient_email,licence_number\nada@example.test,RN-0\nada@example.test," + cell
    response = upload(browser, schema, data + b"\n")
    assert response.status_code == 400, text_of(response)[:500]
    page = text_of(response)
    assert "Nothing was issued." in page
    assert problem in page
    assert api_credentials(client, owner) == []


# -- the plan, CSRF and other organizations -------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/dashboard/credentials/new"),
        ("post", "/dashboard/credentials/new"),
        ("get", "/dashboard/credentials/upload"),
        ("post", "/dashboard/credentials/upload"),
    ],
)
def test_a_free_organization_sees_the_upgrade_prompt(app, method, path):
    free = make_staff(app, "free@example.test", plan=Plan.FREE)
    browser = signed_in_client(app, free)
    response = browser.get(path) if method == "get" else submit(browser, path, {})
    assert response.status_code == 402
    assert 'data-testid="upgrade-prompt"' in text_of(response)
    assert "Issuing a credential" in text_of(response)


@pytest.mark.parametrize("action", ["new", "upload", "{id}/revoke", "{id}/resend"])
def test_every_form_needs_its_csrf_token(app, client, browser, owner, action):
    offered = offer_credential_for(app, client, owner)
    path = "/dashboard/credentials/" + action.format(id=offered)
    response = browser.post(path, data={"schema_id": "x"})
    assert response.status_code == 403
    assert api_credentials(client, owner)[0]["status"] == "OFFERED"
    assert len(api_credentials(client, owner)) == 1


@pytest.mark.parametrize("suffix", ["", "/revoke"])
def test_another_organizations_credential_is_not_found(app, client, browser, suffix):
    theirs = make_staff(app, "bob@example.test", org_name="Other")
    foreign = offer_credential_for(app, client, theirs)
    assert browser.get(f"/dashboard/credentials/{foreign}{suffix}").status_code == 404
    for action in ("revoke", "resend"):
        assert submit(browser, f"/dashboard/credentials/{foreign}/{action}").status_code == 404
    assert api_credentials(client, theirs)[0]["status"] == "OFFERED"
    assert foreign not in text_of(browser.get("/dashboard/credentials"))


def test_another_organizations_recipient_cannot_be_issued_to(app, client, browser, owner):
    schema, _ = setup(app, client, owner)
    theirs = make_staff(app, "bob@example.test", org_name="Other")
    stranger = add_recipient(app, client, theirs, "stranger@example.test")
    response = submit(browser, "/dashboard/credentials/new", issue_form(schema, stranger))
    assert response.status_code in (400, 404)
    assert api_credentials(client, owner) == []
    assert api_credentials(client, theirs) == []
