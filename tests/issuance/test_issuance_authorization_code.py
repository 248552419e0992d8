"""The authorization code flow (PAR, PKCE S256, issuer_state, iss) with DPoP-bound tokens,
through HTTP: the flow itself, the authorization page, and one row per negative of the
OpenID Foundation issuer test plans (``oid4vci-1_0-issuer`` and its HAIP variant) that
concerns them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from issuance.attestation_support import (
    WalletProvider,
    attestation_headers,
    set_wallet_attestation,
    trust,
)
from issuance.authcode_support import CLIENT_ID, REDIRECT_URI, AuthCodeWallet
from issuance.issuance_support import (
    DIPLOMA,
    PRE_AUTHORIZED_GRANT,
    Org,
    Wallet,
    issue,
    make_org,
    offer_of,
)


def test_a_credential_through_the_authorization_code_flow_with_dpop(app, client) -> None:
    org = make_org(app)
    credential = issue(client, org)
    wallet = AuthCodeWallet()

    pushed = wallet.par(client, org, credential)
    assert pushed.status_code == 201, pushed.get_json()
    assert pushed.get_json()["request_uri"].startswith("urn:ietf:params:oauth:request_uri:")
    redirected = wallet.authorize(client, org, pushed.get_json()["request_uri"])
    assert redirected.status_code == 303
    location = urlsplit(redirected.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT_URI
    answer = parse_qs(location.query)
    assert answer["state"] == ["wallet-state-1"]
    assert answer["iss"] == [org.issuer]  # RFC 9207

    token = wallet.redeem(client, org, answer["code"][0])
    assert token.status_code == 200, token.get_json()
    assert token.get_json()["token_type"] == "DPoP"
    access_token = token.get_json()["access_token"]

    body = wallet.credential_body(client, org, org.schema_id)
    issued = wallet.credential_request(client, org, access_token, body)
    assert issued.status_code == 200, issued.get_json()
    assert issued.get_json()["credentials"][0]["credential"].count("~") >= 2
    shown = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert shown["status"] == "ISSUED"

    # RFC 9449 §8.2: successful answers carry a fresh DPoP nonce too, readable by browsers.
    for answer in (pushed, token, issued):
        assert answer.headers["DPoP-Nonce"]
        assert "DPoP-Nonce" in answer.headers["Access-Control-Expose-Headers"]


@pytest.mark.parametrize("scope", ["openid", "openid no-such-credential"])
def test_scope_values_naming_no_configuration_are_ignored_beside_an_offer(
    app, client, scope: str
) -> None:
    """RFC 6749 §3.3 lets the server ignore requested scope: with ``issuer_state`` naming the
    offer, ``openid`` (what OpenID Connect-minded clients send by default) or any value that
    names no credential configuration asks for nothing more, and the offer's credential is
    issued."""
    org = make_org(app)
    credential = issue(client, org)
    wallet = AuthCodeWallet()

    code = wallet.code(client, org, credential, scope=scope)
    token = wallet.redeem(client, org, code)
    assert token.status_code == 200, token.get_json()
    body = wallet.credential_body(client, org, org.schema_id)
    issued = wallet.credential_request(client, org, token.get_json()["access_token"], body)
    assert issued.status_code == 200, issued.get_json()


def test_authorization_details_get_a_credential_identifier(app, client) -> None:
    org = make_org(app)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    details = f'[{{"type": "openid_credential", "credential_configuration_id": "{org.schema_id}"}}]'
    code = wallet.code(client, org, credential, scope=None, authorization_details=details)
    token = wallet.redeem(client, org, code).get_json()
    (granted,) = token["authorization_details"]
    assert granted["credential_identifiers"] == [org.schema_id]

    body = wallet.credential_body(client, org, org.schema_id)
    body = {"credential_identifier": org.schema_id, "proofs": body["proofs"]}
    issued = wallet.credential_request(client, org, token["access_token"], body)
    assert issued.status_code == 200, issued.get_json()


def test_the_pre_authorized_code_gets_a_dpop_bound_token_too(app, client) -> None:
    from issuance.issuance_support import code_of, offer_of

    org = make_org(app)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    wallet.fetch_nonce(client, org)
    form = {
        "grant_type": "urn:ietf:params:oauth:grant-type:pre-authorized_code",
        "pre-authorized_code": code_of(offer_of(client, credential)),
    }
    token = client.post(
        org.path("/token"), data=form, headers={"DPoP": wallet.dpop("POST", f"{org.issuer}/token")}
    )
    assert token.status_code == 200, token.get_json()
    assert token.get_json()["token_type"] == "DPoP"
    as_bearer = wallet.request(
        client, org, token.get_json()["access_token"], wallet.credential_body(client, org, "x")
    )
    assert as_bearer.status_code == 401
    assert as_bearer.headers["WWW-Authenticate"].startswith("DPoP ")


def test_the_authorization_page_shows_who_issues_what(app, client) -> None:
    org = make_org(app)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    request_uri = wallet.par(client, org, credential).get_json()["request_uri"]
    query = urlencode({"client_id": CLIENT_ID, "request_uri": request_uri})

    page = client.get(f"{org.path('/authorize')}?{query}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Acme issues you a credential" in html
    assert "Diploma of Ada" in html and "Awarded 2024" in html
    assert "Given name" in html and "Degree" in html
    assert 'name="csrf_token"' in html
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"

    forged = client.post(
        org.path("/authorize"),
        data={"client_id": CLIENT_ID, "request_uri": request_uri, "csrf_token": "0" * 64},
    )
    assert forged.status_code == 403
    other = client.get(
        f"{org.path('/authorize')}?{urlencode({'client_id': 'x', 'request_uri': request_uri})}"
    )
    assert other.status_code == 404
    declined = wallet.authorize(client, org, request_uri, decision="decline")
    assert parse_qs(urlsplit(declined.headers["Location"]).query)["error"] == ["access_denied"]
    again = client.get(f"{org.path('/authorize')}?{query}")
    assert again.status_code == 404  # a request is answered once


# -- one row per negative of the issuer test plans --------------------------------------------


@dataclass(frozen=True)
class Negative:
    name: str
    act: Callable[[object, Org, AuthCodeWallet, dict], object]
    status: int
    error: str
    config: tuple[tuple[str, str], ...] = ()
    says: str = ""  # in error_description, where several refusals share the error


def _par_without_pkce(client, org, wallet, credential):
    return wallet.par(client, org, credential, code_challenge=None, code_challenge_method=None)


def _par_with_plain_pkce(client, org, wallet, credential):
    return wallet.par(client, org, credential, code_challenge_method="plain")


def _wrong_code_verifier(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    return wallet.redeem(client, org, code, code_verifier="x" * 64)


def _code_used_twice(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    first = wallet.redeem(client, org, code)
    assert first.status_code == 200, first.get_json()
    second = wallet.redeem(client, org, code)
    # RFC 6749 §4.1.2: the token of the first use is withdrawn.
    body = wallet.credential_body(client, org, org.schema_id)
    withdrawn = wallet.credential_request(client, org, first.get_json()["access_token"], body)
    assert withdrawn.status_code == 401
    return second


def _other_redirect_uri(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    return wallet.redeem(client, org, code, redirect_uri="https://attacker.example.test/cb")


def _dpop_proof_replayed(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    proof = wallet.dpop("POST", f"{org.issuer}/token")
    first = wallet.redeem(client, org, code, proof=proof)
    assert first.status_code == 200, first.get_json()
    return wallet.redeem(client, org, code, proof=proof)


def _dpop_wrong_htu(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    return wallet.redeem(client, org, code, proof=wallet.dpop("POST", f"{org.issuer}/credential"))


def _dpop_wrong_htm(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    return wallet.redeem(client, org, code, proof=wallet.dpop("GET", f"{org.issuer}/token"))


def _dpop_without_nonce(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    return wallet.redeem(
        client, org, code, proof=wallet.dpop("POST", f"{org.issuer}/token", nonce=None)
    )


def _dpop_missing_when_required(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    return wallet.redeem(client, org, code, proof=None)


def _dpop_key_other_than_pushed(client, org, wallet, credential):
    code = wallet.code(client, org, credential)
    other = AuthCodeWallet(verifier=wallet.verifier, dpop_nonce=wallet.dpop_nonce)
    return other.redeem(client, org, code)


def _token_without_its_proof(client, org, wallet, credential):
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, org.schema_id)
    return wallet.credential_request(client, org, token, body, proof=None)


def _proof_for_another_token(client, org, wallet, credential):
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, org.schema_id)
    proof = wallet.dpop("POST", f"{org.issuer}/credential", access_token="at_another")
    return wallet.credential_request(client, org, token, body, proof=proof)


def _proof_with_another_key(client, org, wallet, credential):
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, org.schema_id)
    other = AuthCodeWallet(dpop_nonce=wallet.dpop_nonce)
    proof = other.dpop("POST", f"{org.issuer}/credential", access_token=token)
    return wallet.credential_request(client, org, token, body, proof=proof)


def _access_token_in_query(client, org, wallet, credential):
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, org.schema_id)
    return client.post(org.path(f"/credential?access_token={token}"), json=body)


def _scope_of_another_configuration(client, org, wallet, credential):
    """A scope naming another of the issuer's credential configurations than the offer's."""
    other = client.post(
        "/schemas", json={**DIPLOMA, "vct": "urn:example:other"}, headers=org.headers
    ).get_json()
    assert client.post(f"/schemas/{other['id']}/publish", headers=org.headers).status_code == 200
    return wallet.par(client, org, credential, scope=f"openid {other['id']}")


def _unknown_scope_without_issuer_state(client, org, wallet, credential):
    """Only beside an offer's ``issuer_state`` is a scope naming no credential ignored."""
    form = wallet.par_form(org, "", scope="openid")
    del form["issuer_state"]
    return client.post(org.path("/par"), data=form)


def _pushed_with_issuer_state(client, org, wallet, issuer_state):
    """A pushed request that is right in every other way, naming ``issuer_state`` (None: left
    out)."""
    if wallet.dpop_nonce is None:
        wallet.fetch_nonce(client, org)
    form = wallet.par_form(org, issuer_state)
    headers = {"DPoP": wallet.dpop("POST", f"{org.issuer}/par")}
    return client.post(org.path("/par"), data=form, headers=headers)


def _issuer_state_of(client, credential):
    return offer_of(client, credential)["grants"]["authorization_code"]["issuer_state"]


def _issuer_state_missing(client, org, wallet, credential):
    return _pushed_with_issuer_state(client, org, wallet, None)


def _issuer_state_unknown(client, org, wallet, credential):
    return _pushed_with_issuer_state(client, org, wallet, "no-such-offer-" + "x" * 30)


def _issuer_state_of_another_organization(client, org, wallet, credential):
    other = make_org(client.application, email="registrar@other.test", name="Other")
    theirs = issue(client, other)
    return _pushed_with_issuer_state(client, org, wallet, _issuer_state_of(client, theirs))


def _issuer_state_of_a_taken_offer(client, org, wallet, credential):
    issuer_state = _issuer_state_of(client, credential)
    taken = _credential_issued(client, org, AuthCodeWallet(), credential)
    assert taken.status_code == 200, taken.get_json()
    return _pushed_with_issuer_state(client, org, wallet, issuer_state)


def _issuer_state_of_a_withdrawn_offer(client, org, wallet, credential):
    issuer_state = _issuer_state_of(client, credential)
    withdrawn = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert withdrawn.status_code == 200, withdrawn.get_json()
    return _pushed_with_issuer_state(client, org, wallet, issuer_state)


def _credential_issued(client, org, wallet, credential):
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, org.schema_id)
    return wallet.credential_request(client, org, token, body)


def _unknown_credential_configuration(client, org, wallet, credential):
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, "no-such-configuration")
    return wallet.credential_request(client, org, token, body)


def _attested_by(provider: WalletProvider, **changes):
    """A wallet whose PAR and token requests carry an attestation of ``provider``;
    ``changes`` alter the attestation (``expires_in``, ``sub``) or its PoP (``aud``)."""

    def headers(url: str) -> dict[str, str]:
        audience = changes.get("aud") or url.rsplit("/", 1)[0]
        return attestation_headers(
            provider,
            audience,
            changes.get("sub", CLIENT_ID),
            expires_in=changes.get("expires_in", 3600),
        )

    return headers


def _attestation_from_untrusted_provider(client, org, wallet, credential):
    trust(client, org, WalletProvider())
    wallet.attest = _attested_by(WalletProvider())
    return wallet.par(client, org, credential)


def _attestation_expired(client, org, wallet, credential):
    provider = WalletProvider()
    trust(client, org, provider)
    wallet.attest = _attested_by(provider, expires_in=-600)
    return wallet.par(client, org, credential)


def _attestation_pop_for_another_audience(client, org, wallet, credential):
    provider = WalletProvider()
    trust(client, org, provider)
    wallet.attest = _attested_by(provider, aud="https://other-issuer.example.test")
    return wallet.par(client, org, credential)


def _attestation_sub_other_than_client_id(client, org, wallet, credential):
    provider = WalletProvider()
    trust(client, org, provider)
    wallet.attest = _attested_by(provider, sub="another-wallet")
    return wallet.par(client, org, credential)


def _attestation_missing_when_required(client, org, wallet, credential):
    set_wallet_attestation(client, org, "required")
    return wallet.par(client, org, credential)


def _attestation_missing_at_the_token_endpoint(client, org, wallet, credential):
    provider = WalletProvider()
    trust(client, org, provider)
    set_wallet_attestation(client, org, "required")
    wallet.attest = _attested_by(provider)
    code = wallet.code(client, org, credential)
    wallet.attest = None
    return wallet.redeem(client, org, code)


def _key_attestation_missing_when_required(client, org, wallet, credential):
    changed = client.put(
        f"/schemas/{org.schema_id}", json={"key_attestations_required": True}, headers=org.headers
    )
    assert changed.status_code == 200, changed.get_json()
    token = wallet.dpop_token(client, org, credential)
    body = wallet.credential_body(client, org, org.schema_id)
    return wallet.credential_request(client, org, token, body)


NEGATIVES = [
    Negative("PAR without PKCE", _par_without_pkce, 400, "invalid_request"),
    Negative("PAR with plain PKCE", _par_with_plain_pkce, 400, "invalid_request"),
    Negative("wrong code_verifier", _wrong_code_verifier, 400, "invalid_grant"),
    Negative("a code used twice", _code_used_twice, 400, "invalid_grant"),
    Negative(
        "another redirect_uri at the token endpoint", _other_redirect_uri, 400, "invalid_grant"
    ),
    Negative("DPoP proof replayed", _dpop_proof_replayed, 400, "invalid_dpop_proof"),
    Negative("DPoP proof with the wrong htu", _dpop_wrong_htu, 400, "invalid_dpop_proof"),
    Negative("DPoP proof with the wrong htm", _dpop_wrong_htm, 400, "invalid_dpop_proof"),
    Negative("DPoP proof without the server nonce", _dpop_without_nonce, 400, "use_dpop_nonce"),
    Negative(
        "DPoP missing when required",
        _dpop_missing_when_required,
        400,
        "invalid_dpop_proof",
        (("ISSUER_DPOP", "required"),),
    ),
    Negative(
        "DPoP key other than the pushed one", _dpop_key_other_than_pushed, 400, "invalid_dpop_proof"
    ),
    Negative(
        "DPoP-bound token without its proof", _token_without_its_proof, 401, "invalid_dpop_proof"
    ),
    Negative(
        "DPoP proof for another token (ath)", _proof_for_another_token, 401, "invalid_dpop_proof"
    ),
    Negative(
        "DPoP proof with another key than the token's",
        _proof_with_another_key,
        401,
        "invalid_dpop_proof",
    ),
    Negative("access token in the query", _access_token_in_query, 400, "invalid_request"),
    Negative(
        "scope of another configuration than the offer's",
        _scope_of_another_configuration,
        400,
        "invalid_scope",
    ),
    Negative(
        "unknown scope without issuer_state",
        _unknown_scope_without_issuer_state,
        400,
        "invalid_request",
    ),
    Negative(
        "PAR without issuer_state",
        _issuer_state_missing,
        400,
        "invalid_request",
        says="issuer_state is missing",
    ),
    Negative(
        "PAR with an unknown issuer_state",
        _issuer_state_unknown,
        400,
        "invalid_request",
        says="issuer_state is not one of this issuer's offers",
    ),
    Negative(
        "PAR with another organization's issuer_state",
        _issuer_state_of_another_organization,
        400,
        "invalid_request",
        says="issuer_state is not one of this issuer's offers",
    ),
    Negative(
        "PAR with the issuer_state of a taken offer",
        _issuer_state_of_a_taken_offer,
        400,
        "invalid_request",
        says="The offer was taken, withdrawn or has expired",
    ),
    Negative(
        "PAR with the issuer_state of a withdrawn offer",
        _issuer_state_of_a_withdrawn_offer,
        400,
        "invalid_request",
        # Withdrawing an offer forgets its codes, issuer_state among them.
        says="issuer_state is not one of this issuer's offers",
    ),
    Negative(
        "unknown credential configuration",
        _unknown_credential_configuration,
        400,
        "unknown_credential_configuration",
    ),
    Negative(
        "wallet attestation from an untrusted provider",
        _attestation_from_untrusted_provider,
        401,
        "invalid_client",
    ),
    Negative("wallet attestation expired", _attestation_expired, 401, "invalid_client"),
    Negative(
        "attestation PoP for another audience",
        _attestation_pop_for_another_audience,
        401,
        "invalid_client",
    ),
    Negative(
        "attestation sub other than the client_id",
        _attestation_sub_other_than_client_id,
        401,
        "invalid_client",
    ),
    Negative(
        "wallet attestation missing when required",
        _attestation_missing_when_required,
        401,
        "invalid_client",
    ),
    Negative(
        "wallet attestation missing at the token endpoint when required",
        _attestation_missing_at_the_token_endpoint,
        401,
        "invalid_client",
    ),
    Negative(
        "key attestation missing when required",
        _key_attestation_missing_when_required,
        400,
        "invalid_proof",
    ),
]


@pytest.mark.parametrize("negative", NEGATIVES, ids=[negative.name for negative in NEGATIVES])
def test_issuer_test_plan_negatives(app, make_app, negative: Negative) -> None:
    served = make_app(**dict(negative.config)) if negative.config else app
    client = served.test_client()
    org = make_org(served)
    credential = issue(client, org)
    wallet = AuthCodeWallet()

    response = negative.act(client, org, wallet, credential)

    assert response.status_code == negative.status, response.get_data(as_text=True)
    assert response.get_json()["error"] == negative.error
    assert negative.says in response.get_json().get("error_description", "")
    assert response.headers["Cache-Control"] == "no-store"
    if negative.status == 401 and negative.error != "invalid_client":
        assert response.headers["WWW-Authenticate"] == (
            f'DPoP error="{negative.error}", algs="ES256"'
        )
    if negative.error == "use_dpop_nonce":
        assert response.headers["DPoP-Nonce"]


def test_a_schema_can_ask_for_a_code_mailed_to_the_recipient(make_app) -> None:
    """``authorization_code_by_mail``: holding the offer's link is not enough, the person
    also types the code the recipient was emailed at the pushed request; five wrong codes end
    the request."""
    import re
    from urllib.parse import quote

    from support.smtp import PASSWORD, USER, smtp_server

    with smtp_server() as inbox:
        mailing = make_app(
            MAIL_URL=f"smtp://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{inbox.port}"
        )
        client = mailing.test_client()
        org = make_org(mailing)
        schema = client.post(
            "/schemas",
            json={**DIPLOMA, "vct": "urn:example:mailed", "authorization_code_by_mail": True},
            headers=org.headers,
        ).get_json()
        assert schema["authorization_code_by_mail"] is True
        client.post(f"/schemas/{schema['id']}/publish", headers=org.headers)
        credential = issue(client, org, schema_id=schema["id"])
        wallet = AuthCodeWallet()
        pushed = wallet.par(client, org, credential, scope=schema["id"])
        assert pushed.status_code == 201, pushed.get_json()
        request_uri = pushed.get_json()["request_uri"]
        query = urlencode({"client_id": CLIENT_ID, "request_uri": request_uri})
        page = client.get(f"{org.path('/authorize')}?{query}").get_data(as_text=True)
        assert 'name="mail_code"' in page and "a***@example.test" in page
        assert "emailed to a***@example.test" in page and "No email was sent" not in page
        fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page))

        without = client.post(org.path("/authorize"), data=fields)
        assert without.status_code == 400
        assert "4 tries left" in without.get_data(as_text=True)
        mailed = inbox.messages[-1]
        assert mailed.recipients == ["ada@example.test"]
        code = re.search(r"Your code: (\d{6})", mailed.message.get_content()).group(1)
        wrong = "000000" if code != "000000" else "111111"
        assert (
            client.post(org.path("/authorize"), data={**fields, "mail_code": wrong}).status_code
            == 400
        )

        right = client.post(org.path("/authorize"), data={**fields, "mail_code": code})
        assert right.status_code == 303
        assert parse_qs(urlsplit(right.headers["Location"]).query)["code"]

        other = issue(client, org, schema_id=schema["id"])
        pushed = wallet.par(client, org, other, scope=schema["id"])
        request_uri = pushed.get_json()["request_uri"]
        query = urlencode({"client_id": CLIENT_ID, "request_uri": request_uri})
        page = client.get(f"{org.path('/authorize')}?{query}").get_data(as_text=True)
        fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page))
        answers = [
            client.post(org.path("/authorize"), data={**fields, "mail_code": "x"}).status_code
            for _ in range(5)
        ]
        assert answers == [400, 400, 400, 400, 404]
        assert client.get(f"{org.path('/authorize')}?{query}").status_code == 404


def test_without_a_mail_server_the_page_never_says_the_code_was_emailed(client) -> None:
    """With ``MAIL_URL`` empty the code only reaches the server log: the person is told no
    email was sent and to ask the organization, never that a code was emailed."""
    org = make_org(client.application)
    schema = client.post(
        "/schemas",
        json={**DIPLOMA, "vct": "urn:example:unmailed", "authorization_code_by_mail": True},
        headers=org.headers,
    ).get_json()
    client.post(f"/schemas/{schema['id']}/publish", headers=org.headers)
    credential = issue(client, org, schema_id=schema["id"])
    pushed = AuthCodeWallet().par(client, org, credential, scope=schema["id"])
    assert pushed.status_code == 201, pushed.get_json()
    query = urlencode({"client_id": CLIENT_ID, "request_uri": pushed.get_json()["request_uri"]})
    page = client.get(f"{org.path('/authorize')}?{query}").get_data(as_text=True)
    assert 'name="mail_code"' in page
    assert "emailed" not in page
    assert "No email was sent" in page and "Ask " in page


# -- a code by mail: the link alone redeems nothing ------------------------------------------


def mailed_schema_org(app, client) -> Org:
    """An organization whose published schema asks for a code mailed to the recipient."""
    org = make_org(app)
    body = {**DIPLOMA, "vct": "urn:example:mailed", "authorization_code_by_mail": True}
    schema = client.post("/schemas", json=body, headers=org.headers).get_json()
    assert client.post(f"/schemas/{schema['id']}/publish", headers=org.headers).status_code == 200
    org.schema_id = schema["id"]
    return org


def derived_code(app, credential: dict) -> str:
    """The offer's pre-authorized code as the service derives it: what an older offer named,
    and what a wallet holding only the link would try."""
    import uuid

    from app.extensions import db
    from app.issuance.models import Credential
    from app.issuance.operations import pre_authorized_code

    with app.app_context():
        token = db.session.get(Credential, uuid.UUID(credential["id"])).offer_token
        code = pre_authorized_code(token)
        db.session.remove()
    return code


def test_an_offer_of_a_schema_with_a_mailed_code_names_only_the_authorization_code_grant(
    app, client
) -> None:
    org = mailed_schema_org(app, client)
    credential = issue(client, org)

    offer = offer_of(client, credential)

    assert list(offer["grants"]) == ["authorization_code"]
    assert offer["grants"]["authorization_code"]["issuer_state"]
    assert derived_code(app, credential) not in str(offer)


def test_the_token_endpoint_refuses_the_pre_authorized_code_of_an_offer_with_a_mailed_code(
    app, client
) -> None:
    org = mailed_schema_org(app, client)
    credential = issue(client, org)
    wallet = Wallet()

    refused = wallet.token(client, org, derived_code(app, credential))

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_grant"
    assert "mailed" in refused.get_json()["error_description"]
    shown = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert shown["status"] == "OFFERED"
    # The authorization code flow still takes the offer (the code mailed at PAR is asked on
    # the authorization page, tested above).
    pushed = AuthCodeWallet().par(client, org, credential, scope=org.schema_id)
    assert pushed.status_code == 201, pushed.get_json()


def test_with_a_tx_code_handed_over_apart_the_pre_authorized_grant_stays(app, client) -> None:
    org = mailed_schema_org(app, client)
    credential = issue(client, org, tx_code=True)
    wallet = Wallet()

    offer = offer_of(client, credential)
    grant = offer["grants"][PRE_AUTHORIZED_GRANT]
    assert grant["tx_code"]["length"] == len(credential["tx_code"])
    assert wallet.token(client, org, grant["pre-authorized_code"]).status_code == 400
    token = wallet.token(client, org, grant["pre-authorized_code"], credential["tx_code"])
    assert token.status_code == 200, token.get_json()
