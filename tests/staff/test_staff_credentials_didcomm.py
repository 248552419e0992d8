"""The dashboard's "How the wallet takes it" choice: a credential issued from the form or a CSV
upload with DIDComm is offered by an out-of-band invitation (the Socious Wallet's way in), the
offer email leads to it, and the form refuses what a DIDComm offer cannot carry with the reason.
The exchange itself is tested in ``tests/didcomm/test_didcomm_issuer.py``."""

from __future__ import annotations

import io
import uuid

import pytest
from factories import make_staff
from flask.testing import FlaskClient
from staff_support import issue_uploads, sign_in, submit, text_of, upload_nonce
from support.issuing import add_recipient, publish_schema
from support.smtp import smtp_server

INVITATION = "https://verity.test/didcomm/invitation?_oob="


def w3c_schema(client: FlaskClient, owner, *attributes: str, **fields: bool) -> str:
    """A published jwt_vc_json schema (what DIDComm carries) with TEXT attributes."""
    schema = client.post(
        "/schemas",
        json={
            "name": "Membership (W3C)",
            "format": "jwt_vc_json",
            "types": ["MembershipCredential"],
            "attributes": [
                {"name": name, "description": name, "type": "TEXT"}
                for name in attributes or ("member_name",)
            ],
            **fields,
        },
        headers=owner.headers(),
    )
    assert schema.status_code == 201, schema.get_json()
    schema_id = schema.get_json()["id"]
    published = client.post(f"/schemas/{schema_id}/publish", headers=owner.headers())
    assert published.status_code == 200, published.get_json()
    return schema_id


def didcomm_form(schema: str, recipient: str, **extra: str) -> dict[str, str]:
    return {
        "schema_id": schema,
        "recipient_id": recipient,
        "name": "Membership of Ada",
        "description": "",
        "claim.member_name": "Ada Lovelace",
        "protocol": "didcomm",
        **extra,
    }


def api_credentials(client: FlaskClient, owner) -> list[dict]:
    response = client.get("/credentials", headers=owner.headers())
    assert response.status_code == 200, response.get_json()
    return response.get_json()["results"]


def offer_page_of(client: FlaskClient, credential: dict) -> str:
    page = client.get(credential["offer_page"].removeprefix("https://verity.test"))
    assert page.status_code == 200
    return text_of(page)


def signed_in_client(app, owner) -> FlaskClient:
    client = app.test_client()
    assert sign_in(client, owner.token).status_code == 302
    return client


def test_the_form_offers_both_ways_openid4vci_first(app, client, browser, owner):
    w3c_schema(client, owner)
    add_recipient(app, client, owner, "ada@example.test")
    page = text_of(browser.get("/dashboard/credentials/new"))
    assert 'name="protocol" value="openid4vci" checked>' in page
    assert 'name="protocol" value="didcomm" >' in page


def test_issuing_with_didcomm_from_the_form_offers_the_invitation(app, client, browser, owner):
    schema = w3c_schema(client, owner)
    recipient = add_recipient(app, client, owner, "ada@example.test")
    response = submit(
        browser,
        "/dashboard/credentials/new",
        didcomm_form(schema, recipient),
        follow_redirects=True,
    )
    page = text_of(response)
    assert response.status_code == 200, page
    assert "Credential offered" in page
    [stored] = api_credentials(client, owner)
    assert stored["protocol"] == "didcomm"
    assert stored["status"] == "OFFERED"
    assert stored["offer_url"].startswith(INVITATION)
    assert stored["offer_page"] in page, "the dashboard shows the offer page to share"
    offer_page = offer_page_of(client, stored)
    assert stored["offer_url"] in offer_page.replace("&amp;", "&"), "its invitation"
    assert "openid-credential-offer://" not in offer_page
    invitation = client.get(stored["offer_url"].removeprefix("https://verity.test"))
    assert invitation.status_code == 200, "the invitation address answers a browser too"


def test_the_choice_is_kept_when_the_form_comes_back(app, client, browser, owner):
    schema = w3c_schema(client, owner)
    recipient = add_recipient(app, client, owner, "ada@example.test")
    response = submit(
        browser,
        "/dashboard/credentials/new",
        didcomm_form(schema, recipient, **{"claim.member_name": ""}),
    )
    assert response.status_code == 400
    assert 'name="protocol" value="didcomm" checked' in text_of(response)


@pytest.mark.parametrize(
    ("w3c", "extra", "reason"),
    [
        (False, {}, "DIDComm carries W3C VC-JWT credentials only"),
        (True, {"tx_code": "on"}, "a DIDComm offer has no transaction code"),
        (True, {"claim.type": "verification"}, "the Socious Wallet's identity check"),
    ],
    ids=["an SD-JWT VC schema", "a transaction code", "the wallet's KYC type"],
)
def test_the_form_refuses_what_didcomm_cannot_carry_with_the_reason(
    app, client, browser, owner, w3c, extra, reason
):
    recipient = add_recipient(app, client, owner, "ada@example.test")
    if w3c:
        schema = w3c_schema(client, owner, "member_name", "type")
        form = didcomm_form(schema, recipient, **extra)
    else:
        schema = publish_schema(client, owner)  # dc+sd-jwt
        form = {
            **didcomm_form(schema, recipient),
            "claim.licence_number": "RN-1234",
            "claim.grade": "3",
        }
        form.pop("claim.member_name")
    response = submit(browser, "/dashboard/credentials/new", form)
    page = text_of(response)
    assert response.status_code == 400, page[:500]
    assert 'data-testid="form-error"' in page
    assert reason in page.replace("&#39;", "'").replace("&#34;", '"')
    assert 'name="protocol" value="didcomm" checked' in page
    assert api_credentials(client, owner) == []


def upload(browser: FlaskClient, schema: str, data: bytes, **fields: str):
    return submit(
        browser,
        "/dashboard/credentials/upload",
        {
            "schema_id": schema,
            "name": "",
            "description": "",
            "upload_nonce": upload_nonce(browser),
            **fields,
            "file": (io.BytesIO(data), "members.csv", "text/csv"),
        },
        content_type="multipart/form-data",
    )


def test_a_csv_upload_with_didcomm_offers_each_row_by_invitation(app, client, browser, owner):
    schema = w3c_schema(client, owner)
    add_recipient(app, client, owner, "ada@example.test")
    add_recipient(app, client, owner, "grace@example.test")
    upload_form = text_of(browser.get("/dashboard/credentials/upload"))
    assert 'name="protocol" value="didcomm"' in upload_form
    response = upload(
        browser,
        schema,
        b"recipient_email,member_name\nada@example.test,Ada\ngrace@example.test,Grace\n",
        protocol="didcomm",
    )
    assert response.status_code == 303, text_of(response)
    issue_uploads(app)
    results = text_of(browser.get(response.location))
    assert "2 credentials offered" in results
    stored = api_credentials(client, owner)
    assert len(stored) == 2
    assert {c["protocol"] for c in stored} == {"didcomm"}
    assert all(c["offer_url"].startswith(INVITATION) for c in stored)
    assert len({c["offer_url"] for c in stored}) == 2, "one invitation per offer"


def test_a_csv_upload_refuses_didcomm_for_another_format_and_issues_nothing(
    app, client, browser, owner
):
    schema = publish_schema(client, owner)  # dc+sd-jwt
    add_recipient(app, client, owner, "ada@example.test")
    response = upload(
        browser,
        schema,
        b"recipient_email,licence_number,grade\nada@example.test,RN-1,1\n",
        protocol="didcomm",
    )
    assert response.status_code == 400, "the issuing checks run before anything is recorded"
    page = text_of(response)
    assert "Nothing was issued." in page
    assert "Line 2: protocol: DIDComm carries W3C VC-JWT credentials only" in page
    assert api_credentials(client, owner) == []


def test_the_offer_email_of_a_didcomm_offer_carries_and_leads_to_its_invitation(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=f"smtp://127.0.0.1:{inbox.port}", MAIL_FROM="creds@acme.test")
        owner = make_staff(app, f"owner-{uuid.uuid4().hex[:8]}@acme.test")
        client = app.test_client()
        schema = w3c_schema(client, owner)
        recipient = add_recipient(app, client, owner, "ada@example.test")
        browser = signed_in_client(app, owner)
        page = text_of(
            submit(
                browser,
                "/dashboard/credentials/new",
                didcomm_form(schema, recipient),
                follow_redirects=True,
            )
        )
    assert 'data-testid="mail-sent"' in page
    [received] = inbox.messages
    [stored] = api_credentials(client, owner)
    assert received.recipients == ["ada@example.test"]
    body = received.message.get_content()
    assert stored["offer_page"] in body, "the email links to the offer page"
    assert "openid-credential-offer" not in body
    assert "a code" not in body, "a DIDComm offer has no transaction code"
    [link, invitation] = [line for line in body.splitlines() if line.startswith("https://")]
    assert invitation == stored["offer_url"], "the email carries the invitation itself too"
    offer_page = offer_page_of(client, {"offer_page": link})
    assert stored["offer_url"].startswith(INVITATION)
    assert stored["offer_url"] in offer_page.replace("&amp;", "&"), (
        "the page the email links to carries the invitation"
    )


RULES = [
    pytest.param({"authorization_code_by_mail": True}, "authorization_code_by_mail", id="by-mail"),
    pytest.param({"key_attestations_required": True}, "key_attestations_required", id="key-att"),
    pytest.param({}, "wallet_attestation", id="wallet-attestation"),
]


def under_rule(client: FlaskClient, owner, schema_fields: dict[str, bool], rule: str) -> str:
    """A W3C schema, the rule set on it or on the organization."""
    if rule == "wallet_attestation":
        answer = client.put(
            f"/organizations/{owner.organization_id}/issuer",
            json={"wallet_attestation": "required"},
            headers=owner.headers(),
        )
        assert answer.status_code == 200, answer.get_json()
    return w3c_schema(client, owner, **schema_fields)


@pytest.mark.parametrize(("schema_fields", "rule"), RULES)
def test_the_form_refuses_didcomm_under_an_issuing_rule_it_cannot_honour(
    app, client, browser, owner, schema_fields, rule
):
    schema = under_rule(client, owner, schema_fields, rule)
    recipient = add_recipient(app, client, owner, "ada@example.test")

    response = submit(browser, "/dashboard/credentials/new", didcomm_form(schema, recipient))

    page = text_of(response)
    assert response.status_code == 400, page[:500]
    assert 'data-testid="form-error"' in page
    assert f"{rule}: " in page
    assert 'name="protocol" value="didcomm" checked' in page
    assert api_credentials(client, owner) == []


@pytest.mark.parametrize(("schema_fields", "rule"), RULES)
def test_a_csv_upload_refuses_didcomm_under_an_issuing_rule_it_cannot_honour(
    app, client, browser, owner, schema_fields, rule
):
    schema = under_rule(client, owner, schema_fields, rule)
    add_recipient(app, client, owner, "ada@example.test")
    add_recipient(app, client, owner, "grace@example.test")

    response = upload(
        browser,
        schema,
        b"recipient_email,member_name\nada@example.test,Ada\ngrace@example.test,Grace\n",
        protocol="didcomm",
    )

    assert response.status_code == 400, "the issuing checks run before anything is recorded"
    page = text_of(response)
    assert "Nothing was issued." in page
    assert f"Line 2: {rule}: " in page and f"Line 3: {rule}: " in page
    assert api_credentials(client, owner) == []


def test_resending_a_didcomm_offer_under_a_rule_set_since_is_refused_naming_it(
    app, client, browser, owner
):
    schema = w3c_schema(client, owner)
    recipient = add_recipient(app, client, owner, "ada@example.test")
    submit(browser, "/dashboard/credentials/new", didcomm_form(schema, recipient))
    [offered] = api_credentials(client, owner)
    under_rule(client, owner, {}, "wallet_attestation")

    response = submit(browser, f"/dashboard/credentials/{offered['id']}/resend")

    assert response.status_code == 400
    assert "wallet_attestation: " in text_of(response)
    [still] = api_credentials(client, owner)
    assert still["offer_url"] == offered["offer_url"], "nothing was resent"
