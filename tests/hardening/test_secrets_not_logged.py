"""No secret in any log line: a whole flow runs, then every secret it handled is looked for.

Secrets travel in headers, bodies, paths (a policy page's token) and query strings (the
``response_code`` that lets the person's browser see a result, an ``apikey`` sent the way
the contract allows). The request log records paths and queries, so it must redact them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from secrets import token_urlsafe
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from factories import make_apikey, make_staff, make_verification
from hardening_support import csrf_of, sign_in, submit
from served import flask, prepare, served, service_env
from wallets import Issuer, post_response, python_presentation, read_request

from app.didcomm import invitation as oob
from app.extensions import db
from app.holder.issuance import receive
from app.holder.presentation import present
from app.holder.store import Wallet
from app.holder.transport import Http
from app.organizations.models import Plan
from app.request_log import SECRET_ROUTES, SECRET_VARIABLES, redacted_path, redacted_uri
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


# A served deployment: gunicorn with its access log on, the request log on, production mode
# (an unset MAIL_URL logs no offer link there), the issuer on this machine's loopback.
SCHEMA = {
    "name": "Library card",
    "description": "A library card",
    "vct": "urn:example:library-card:1",
    "attributes": [
        {"name": "given_name", "description": "Given name", "type": "TEXT"},
        {"name": "card_number", "description": "Card number", "type": "NUMBER"},
    ],
}


MEMBERSHIP = {
    "name": "Membership (W3C)",
    "format": "jwt_vc_json",
    "types": ["MembershipCredential"],
    "attributes": [{"name": "member_name", "description": "Member", "type": "TEXT"}],
}


class Recorded(requests.Session):
    """The wallet's HTTP, keeping every JSON answer and every address it called."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[dict] = []
        self.urls: list[str] = []
        self.hooks["response"].append(self.keep)

    def keep(self, response: requests.Response, *args, **kwargs) -> None:
        self.urls.append(response.request.url or "")
        with contextlib.suppress(ValueError):
            body = response.json()
            if isinstance(body, dict):
                self.answers.append(body)

    def found(self, key: str) -> str:
        return next(answer[key] for answer in self.answers if key in answer)


@pytest.fixture
def production(tmp_path):
    env = service_env(
        f"sqlite:///{tmp_path / 'served.sqlite3'}",
        VERITY_ENV="production",
        PUBLIC_URL="http://127.0.0.1",  # the operator commands' (served() names its port)
        SECRET_KEY=token_urlsafe(32),
        ISSUER_KEY_SECRET=token_urlsafe(32),
        TRUST_ALLOW_PRIVATE="1",
        MAIL_URL="",
    )
    prepare(env)
    flask(env, "users", "create", "--email", "staff@example.test")
    flask(env, "orgs", "create", "--name", "Library", "--owner-email", "staff@example.test",
          "--plan", "PRO")  # fmt: skip
    token = json.loads(flask(env, "tokens", "create", "--email", "staff@example.test"))["token"]
    args = ("--access-logfile", "-")
    with served(env, tmp_path / "server.log", workers=2, gunicorn_args=args) as service:
        yield service, token


def test_a_served_issuance_and_presentation_leave_no_secret_in_any_log(production, tmp_path):
    service, session_token = production
    secrets = {"session token": session_token}

    def call(method: str, path: str, expect: int, headers: dict, **kwargs) -> dict:
        response = requests.request(
            method, service.url(path), headers=headers, timeout=30, **kwargs
        )
        assert response.status_code == expect, (path, response.text)
        return response.json() if "json" in response.headers.get("Content-Type", "") else {}

    staff = {"Authorization": f"Bearer {session_token}"}
    apikey = call("POST", "/integrations", 201, staff, json={"name": "Backend"})["key"]
    secrets["integration key"] = apikey
    backend = {"apikey": apikey}
    schema = call("POST", "/schemas", 201, staff, json=SCHEMA)
    call("POST", f"/schemas/{schema['id']}/publish", 200, staff)
    recipient = call(
        "POST",
        "/recipients",
        201,
        backend,
        json={"first_name": "Ada", "last_name": "Reader", "email": "ada@example.test",
              "customer_id": "reader-1"},
    )  # fmt: skip

    # Issuance: the offer, the person's offer page and its polls, then the wallet's steps.
    credential = call(
        "POST",
        "/credentials",
        201,
        staff,
        json={
            "name": "Card",
            "schema_id": schema["id"],
            "recipient_id": recipient["id"],
            "claims": [{"name": "given_name", "value": "Ada"}, {"name": "card_number", "value": 7}],
            "tx_code": True,
        },
    )
    offer_page = credential["offer_page"]
    secrets["offer token"] = urlsplit(offer_page).path.rsplit("/", 1)[-1]
    secrets["tx_code"] = credential["tx_code"]
    assert requests.get(offer_page, timeout=30).status_code == 200
    polled = {"Referer": offer_page, "HX-Request": "true"}
    for _ in range(2):
        assert requests.get(f"{offer_page}/status", headers=polled, timeout=30).status_code < 400
    wallet_http = Recorded()
    wallet = Wallet.open(tmp_path / "wallet.json")
    receive(credential["offer_url"], wallet, tx_code=credential["tx_code"], http=Http(wallet_http))
    offer_fetch = next(url for url in wallet_http.urls if "/offers/" in url)
    grant = wallet_http.found("grants")["urn:ietf:params:oauth:grant-type:pre-authorized_code"]
    secrets["pre-authorized code"] = grant["pre-authorized_code"]
    secrets["access token"] = wallet_http.found("access_token")
    secrets["issued credential"] = wallet_http.found("credentials")[0]["credential"]
    requests.get(f"{offer_page}/status", headers=polled, timeout=30)

    # Presentation: the person's page and its polls, the wallet's answer, the result page.
    verification = call(
        "POST",
        "/verifications",
        201,
        staff,
        json={"name": "Members", "description": "Members only", "schema_id": schema["id"],
              "claims": ["given_name"],
              "attributes": [{"name": "card_number", "operator": "EQUAL", "value": "7"}]},
    )  # fmt: skip
    individual = call(
        "POST",
        "/verifications/individuals",
        201,
        {},
        json={"customer_id": "reader-1", "verification_id": verification["id"]},
    )
    secrets["individual id"] = individual["id"]
    person_page = service.url(f"/i/{individual['id']}")
    assert requests.get(person_page, timeout=30).status_code == 200
    requests.get(f"{person_page}/status", headers={"Referer": person_page}, timeout=30)
    link = call("GET", f"/verifications/{individual['id']}/connect", 200, {})["connection_url"]
    present_http = Recorded()
    answer = present(link, wallet, http=Http(present_http))["response"]
    secrets["presentation request"] = next(
        url for url in present_http.urls if "/oid4vp/responses/" in url
    ).rsplit("/", 1)[-1]
    secrets["response code"] = parse_qs(urlsplit(answer["redirect_uri"]).query)["response_code"][0]
    assert requests.get(answer["redirect_uri"], timeout=30).status_code == 200
    call("GET", f"/verifications/{individual['id']}/verify", 200, {})
    lookup = f"/verifications/{verification['id']}/individuals/reader-1?apikey={apikey}"
    assert call("GET", lookup, 200, {})["status"] == "VERIFIED"

    # A policy request's page, by its token.
    policy = call(
        "POST", "/policy-requests", 201, backend, json={"verification_id": verification["id"]}
    )
    secrets["policy token"] = policy["token"]
    assert requests.get(policy["url"], timeout=30).status_code == 200
    requests.get(f"{policy['url']}/status", headers={"Referer": policy["url"]}, timeout=30)

    # A DIDComm offer's invitation (its id is the offer's token) on its page and as the
    # Socious Wallet's scanner fetches it, and the authorization page of the code flow.
    member = call("POST", "/schemas", 201, staff, json=MEMBERSHIP)
    call("POST", f"/schemas/{member['id']}/publish", 200, staff)
    didcomm_offer = call(
        "POST",
        "/credentials",
        201,
        staff,
        json={"name": "Member", "schema_id": member["id"], "recipient_id": recipient["id"],
              "protocol": "didcomm", "claims": [{"name": "member_name", "value": "Ada"}]},
    )  # fmt: skip
    invitation_link = didcomm_offer["offer_url"]
    assert oob.parse_oob(invitation_link)["id"]  # the offer's token, base64 in _oob
    secrets["didcomm offer invitation"] = parse_qs(urlsplit(invitation_link).query)["_oob"][0]
    assert requests.get(invitation_link, timeout=30).status_code == 200
    scanned = requests.get(f"{invitation_link}/fetch", timeout=30)
    assert scanned.json()["long_url"] == invitation_link
    coded = call(
        "POST",
        "/credentials",
        201,
        staff,
        json={"name": "Card", "schema_id": schema["id"], "recipient_id": recipient["id"],
              "claims": [{"name": "given_name", "value": "Ada"},
                         {"name": "card_number", "value": 8}]},
    )  # fmt: skip
    coded_offer = requests.get(
        parse_qs(urlsplit(coded["offer_url"]).query)["credential_offer_uri"][0], timeout=30
    ).json()
    issuer = coded_offer["credential_issuer"]
    wallet_client = "wallet-under-test"
    pushed = requests.post(
        f"{issuer}/par",
        data={"response_type": "code", "client_id": wallet_client,
              "redirect_uri": "https://wallet.example.test/callback",
              "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
              "code_challenge_method": "S256", "scope": schema["id"],
              "issuer_state": coded_offer["grants"]["authorization_code"]["issuer_state"]},
        timeout=30,
    )  # fmt: skip
    assert pushed.status_code == 201, pushed.text
    request_uri = pushed.json()["request_uri"]
    secrets["pushed request_uri"] = request_uri.rsplit(":", 1)[-1]
    authorize = requests.get(
        f"{issuer}/authorize",
        params={"client_id": wallet_client, "request_uri": request_uri},
        timeout=30,
    )
    assert authorize.status_code == 200, authorize.text

    # gunicorn writes its access line after the answer has gone: wait for the last one.
    deadline = time.monotonic() + 30
    while "request_uri=[redacted] HTTP" not in service.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    log = service.log()
    leaked = {name for name, value in secrets.items() if value and str(value) in log}
    assert not leaked, f"secrets in the log: {sorted(leaked)}"
    # Both logs (the request log's JSON, gunicorn's access log) saw the routes, redacted.
    assert log.count('"path": "/didcomm/invitation?_oob=[redacted]"') == 2, log[-3000:]
    assert log.count("GET /didcomm/invitation?_oob=[redacted] HTTP") == 2
    assert "request_uri=[redacted] HTTP" in log
    assert '"path": "/o/[redacted]/status"' in log, log[-3000:]
    assert f"GET {urlsplit(offer_fetch).path.rsplit('/', 1)[0]}/[redacted] HTTP" in log
    assert "/i/[redacted]" in log and "/p/[redacted]" in log


def test_every_route_with_a_secret_in_its_path_is_redacted(app):
    """A new route carrying a token, an individual's ID or a presentation request's ID must be
    on the one rule list; this names the one that is not."""
    sentinel = "s3cr3t-value"
    missed = []
    for rule in app.url_map.iter_rules():
        if not SECRET_VARIABLES & set(rule.arguments):
            continue
        path = re.sub(
            r"<(?:[^:<>]+:)?([^<>]+)>",
            lambda found: sentinel if found.group(1) in SECRET_VARIABLES else "7",
            rule.rule,
        )
        if sentinel in redacted_path(path, b"") or sentinel in redacted_uri(f"{path}/status"):
            missed.append(rule.rule)
    assert not missed, f"routes whose secret reaches the log: {missed}"
    assert any("offers" in route for route in SECRET_ROUTES)


def didcomm_links(app, client, staff) -> dict[str, str]:
    """A DIDComm offer's invitation (its id is the offer's token) and a DIDComm verification's
    (its id is the presentation request's), as the API hands them out."""
    schema = client.post(
        "/schemas",
        json={
            "name": "Membership (W3C)",
            "format": "jwt_vc_json",
            "types": ["MembershipCredential"],
            "attributes": [{"name": "member_name", "description": "Member", "type": "TEXT"}],
        },
        headers=staff.headers(),
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=staff.headers())
    recipient = client.post(
        "/recipients",
        json={"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.test"},
        headers={"apikey": make_apikey(app, staff.organization_id)},
    ).get_json()
    offer = client.post(
        "/credentials",
        json={
            "name": "Membership of Ada",
            "schema_id": schema["id"],
            "recipient_id": recipient["id"],
            "protocol": "didcomm",
            "claims": [{"name": "member_name", "value": "Ada"}],
        },
        headers=staff.headers(),
    ).get_json()
    verification = make_verification(
        client,
        staff,
        schema_id=schema["id"],
        claims=["member_name"],
        attributes=[],
        wallet_protocols=["didcomm"],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-9", "verification_id": verification["id"]},
    ).get_json()
    connect = client.get(f"/verifications/{individual['id']}/connect").get_json()
    return {"offer": offer["offer_url"], "verification": connect["connection_url"]}


def test_invitations_and_the_authorization_page_leave_no_token_in_the_request_log(
    app, client, caplog
):
    """A DIDComm invitation's id is an offer's token or a presentation request's ID, and it
    travels in ``_oob`` (the page and the Socious Wallet scanner's ``/fetch``); the
    authorization page's ``request_uri`` is the pushed request it continues."""
    from issuance.authcode_support import AuthCodeWallet
    from issuance.issuance_support import issue, make_org

    caplog.set_level(logging.INFO, logger="verity.request")
    staff = make_staff(app, plan=Plan.PRO)
    links = didcomm_links(app, client, staff)
    secrets = {}
    for name, link in links.items():
        # The id travels base64-encoded: what the log must not hold is the _oob value.
        assert oob.parse_oob(link)["id"]
        secrets[f"{name} invitation"] = parse_qs(urlsplit(link).query)["_oob"][0]
        path = urlsplit(link)
        target = f"{path.path}?{path.query}"
        assert client.get(target).status_code == 200
        assert client.get(f"{target}/fetch").get_json()["long_url"] == link
    org = make_org(app, "registrar@example.test", name="Registrar")
    pushed = AuthCodeWallet().par(client, org, issue(client, org))
    request_uri = pushed.get_json()["request_uri"]
    secrets["request_uri"] = request_uri.rsplit(":", 1)[-1]
    query = f"client_id=wallet-under-test&request_uri={request_uri}"
    assert client.get(f"{org.path('/authorize')}?{query}").status_code == 200

    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "verity.request")
    assert text.count("_oob=[redacted]") == 4 and "request_uri=[redacted]" in text
    leaked = {name for name, value in secrets.items() if value in text}
    assert not leaked, f"secrets in the log: {sorted(leaked)}"
