"""No secret in any log line: a whole flow runs, then every secret it handled is looked for.

Secrets travel in headers, bodies, paths (a policy page's token) and query strings (the
``response_code`` that lets the person's browser see a result, an ``apikey`` sent the way
the contract allows). The request log records paths and queries, so it must redact them.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

from factories import make_apikey, make_staff, make_verification
from hardening_support import csrf_of, sign_in, submit
from wallets import Issuer, post_response, python_presentation, read_request

from app.extensions import db
from app.organizations.models import Plan
from app.vouchers.operations import mint_vouchers

WALLET = ("sd_jwt", "jwcrypto")


def voucher(app) -> str:
    with app.app_context():
        (code,) = mint_vouchers(Plan.PRO, 30, 1)
        db.session.commit()
        db.session.remove()
    return code


def test_a_whole_flow_leaves_no_secret_in_the_log(app, client, caplog):
    caplog.set_level(logging.DEBUG)
    staff = make_staff(app, plan=Plan.PRO)
    newcomer = make_staff(app, "newcomer@example.test", plan=Plan.FREE, org_name="Newcomer")
    apikey = make_apikey(app, staff.organization_id)
    secrets = {"session token": staff.token, "integration key": apikey}

    # The organization's backend and the person, through a real presentation.
    verification = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-7", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    answered = post_response(client, request, python_presentation(request, Issuer()))
    assert answered.status_code == 200, answered.get_json()
    redirect_uri = answered.get_json()["redirect_uri"]
    response_code = parse_qs(urlsplit(redirect_uri).query)["response_code"][0]
    secrets["response code"] = response_code
    secrets["state"] = request.state
    secrets["nonce"] = request.nonce
    assert (
        client.get(f"{urlsplit(redirect_uri).path}?response_code={response_code}").status_code
        == 200
    )
    lookup = f"/verifications/{verification['id']}/individuals/crm-7"
    assert client.get(f"{lookup}?apikey={apikey}").get_json()["status"] == "VERIFIED"

    # A policy page: its token is its address.
    policy = client.post(
        "/policy-requests", json={"verification_id": verification["id"]}, headers={"apikey": apikey}
    ).get_json()
    secrets["policy token"] = policy["token"]
    assert client.get(f"/p/{policy['token']}").status_code == 200
    assert client.get(f"/p/{policy['token']}/status").status_code in (200, 286)
    assert client.get(f"/p/{policy['token']}?response_code={response_code}").status_code < 500

    # Invitation and voucher codes, and the dashboard's session and CSRF token.
    code = client.post(
        f"/organizations/{staff.organization_id}/codes", json={"days": 7}, headers=staff.headers()
    ).get_json()["code"]
    secrets["invitation code"] = code
    client.post("/organizations/join", json={"code": code}, headers=newcomer.headers())
    secrets["voucher"] = voucher(app)
    client.post("/vouchers/exchange", json={"code": secrets["voucher"]}, headers=newcomer.headers())
    browser = app.test_client()
    sign_in(browser, staff.token)
    secrets["dashboard session"] = browser.get_cookie("verity_session", path="/dashboard").value
    secrets["csrf token"] = csrf_of(browser, "/dashboard/")
    submit(browser, "/dashboard/organizations", {"name": "Second"})
    submit(browser, "/dashboard/logout")

    # The service's log, not the test wallet's (PyPI sd-jwt logs its own disclosures).
    text = "\n".join(
        record.getMessage() for record in caplog.records if not record.name.startswith(WALLET)
    )
    assert "/p/[redacted]" in text and "response_code=[redacted]" in text  # the flow was logged
    leaked = {name for name, value in secrets.items() if value and value in text}
    assert not leaked, f"secrets in the log: {sorted(leaked)}"
