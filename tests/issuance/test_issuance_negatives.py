"""The negatives of the OpenID Foundation's OpenID4VCI issuer test plan, one row each.

Every row is refused with the error code OpenID4VCI 1.0 §8.3.1 (credential endpoint), RFC 6750
§3.1 (the access token) or RFC 6749 §5.2 (token endpoint) registers, as JSON ``{"error",
"error_description"}``; and the refusal leaves the offer as it was, so the same wallet then
gets its credential with a good request.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from issuance.issuance_support import (
    Org,
    Wallet,
    access_token,
    code_of,
    issue,
    make_org,
    offer_of,
    receive,
)
from jwcrypto import jwk

from app import clock


def b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


@dataclass
class Context:
    client: Any
    org: Org
    wallet: Wallet
    credential: dict[str, Any]
    token: str

    def nonce(self) -> str:
        return self.wallet.nonce(self.client, self.org)

    def body(self, *proofs: str, configuration: str | None = None) -> dict[str, Any]:
        return {
            "credential_configuration_id": configuration or self.credential["schema_id"],
            "proofs": {"jwt": list(proofs)},
        }

    def good_proof(self) -> str:
        return self.wallet.proof(self.org.issuer, self.nonce())


def unsigned_none(ctx: Context) -> dict[str, Any]:
    header = {"typ": "openid4vci-proof+jwt", "alg": "none", "jwk": ctx.wallet.public}
    payload = {"aud": ctx.org.issuer, "iat": int(time.time()), "nonce": ctx.nonce()}
    return ctx.body(f"{b64(header)}.{b64(payload)}.")


def hmac_signed(ctx: Context) -> dict[str, Any]:
    secret = jwk.JWK.generate(kty="oct", size=256)
    return ctx.body(ctx.wallet.proof(ctx.org.issuer, ctx.nonce(), alg="HS256", signer=secret))


def reused_nonce(ctx: Context) -> dict[str, Any]:
    """A c_nonce another credential request already used."""
    other = issue(ctx.client, ctx.org)
    token = access_token(ctx.client, ctx.org, ctx.wallet, other)
    nonce = ctx.nonce()
    first = ctx.wallet.request(
        ctx.client,
        ctx.org,
        token,
        {
            "credential_configuration_id": other["schema_id"],
            "proofs": {"jwt": [ctx.wallet.proof(ctx.org.issuer, nonce)]},
        },
    )
    assert first.status_code == 200, first.get_json()
    return ctx.body(ctx.wallet.proof(ctx.org.issuer, nonce))


CREDENTIAL_ENDPOINT: dict[str, tuple[Callable[[Context], dict[str, Any]], str]] = {
    "proof signed by another key than its jwk header": (
        lambda ctx: ctx.body(ctx.wallet.proof(ctx.org.issuer, ctx.nonce(), signer=Wallet().key)),
        "invalid_proof",
    ),
    "proof missing": (
        lambda ctx: {"credential_configuration_id": ctx.credential["schema_id"]},
        "invalid_proof",
    ),
    "proof for another audience": (
        lambda ctx: ctx.body(ctx.wallet.proof("https://elsewhere.test/issuer", ctx.nonce())),
        "invalid_proof",
    ),
    "proof issued an hour ago": (
        lambda ctx: ctx.body(
            ctx.wallet.proof(ctx.org.issuer, ctx.nonce(), iat=int(time.time()) - 3600)
        ),
        "invalid_proof",
    ),
    "proof issued an hour from now": (
        lambda ctx: ctx.body(
            ctx.wallet.proof(ctx.org.issuer, ctx.nonce(), iat=int(time.time()) + 3600)
        ),
        "invalid_proof",
    ),
    "c_nonce already used": (reused_nonce, "invalid_nonce"),
    "c_nonce never handed out": (
        lambda ctx: ctx.body(ctx.wallet.proof(ctx.org.issuer, "made-up-nonce")),
        "invalid_nonce",
    ),
    "proof typ JWT": (
        lambda ctx: ctx.body(ctx.wallet.proof(ctx.org.issuer, ctx.nonce(), typ="JWT")),
        "invalid_proof",
    ),
    "proof alg none": (unsigned_none, "invalid_proof"),
    "proof alg HS256": (hmac_signed, "invalid_proof"),
    "unknown credential configuration": (
        lambda ctx: ctx.body(ctx.good_proof(), configuration="no-such-configuration"),
        "unknown_credential_configuration",
    ),
}


@pytest.fixture
def ctx(app, client) -> Context:
    org = make_org(app)
    wallet = Wallet()
    credential = issue(client, org)
    return Context(client, org, wallet, credential, access_token(client, org, wallet, credential))


@pytest.mark.parametrize("case", list(CREDENTIAL_ENDPOINT), ids=list(CREDENTIAL_ENDPOINT))
def test_credential_request_refused(ctx: Context, case: str) -> None:
    make_body, error = CREDENTIAL_ENDPOINT[case]
    response = ctx.wallet.request(ctx.client, ctx.org, ctx.token, make_body(ctx))
    assert response.status_code == 400, response.get_json()
    body = response.get_json()
    assert body["error"] == error
    assert isinstance(body["error_description"], str) and body["error_description"]
    assert response.headers["Cache-Control"] == "no-store"
    # Nothing was taken: the same token and a good proof still get the credential.
    good = ctx.wallet.request(ctx.client, ctx.org, ctx.token, ctx.body(ctx.good_proof()))
    assert good.status_code == 200, good.get_json()


def test_access_token_in_the_query_is_refused(ctx: Context) -> None:
    response = ctx.client.post(
        ctx.org.path(f"/credential?access_token={ctx.token}"), json=ctx.body(ctx.good_proof())
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_request"
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_request"'


def test_access_token_missing_is_invalid_token_401(ctx: Context) -> None:
    response = ctx.client.post(ctx.org.path("/credential"), json=ctx.body(ctx.good_proof()))
    assert response.status_code == 401
    assert response.get_json()["error"] == "invalid_token"
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_another_organizations_access_token_is_invalid_token(app, ctx: Context) -> None:
    other = make_org(app, "other@example.test", name="Globex")
    nonce = ctx.wallet.nonce(ctx.client, other)
    response = ctx.wallet.request(
        ctx.client,
        other,
        ctx.token,
        ctx.body(ctx.wallet.proof(other.issuer, nonce)),
    )
    assert response.status_code == 401
    assert response.get_json()["error"] == "invalid_token"


def test_an_expired_access_token_is_invalid_token(ctx: Context) -> None:
    later = clock.now() + timedelta(hours=1)
    proof = ctx.good_proof()
    clock.set_source(lambda: later)
    response = ctx.wallet.request(ctx.client, ctx.org, ctx.token, ctx.body(proof))
    assert response.status_code == 401
    assert response.get_json()["error"] == "invalid_token"


# -- token endpoint ----------------------------------------------------------------------------


def test_a_pre_authorized_code_works_once(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    code = code_of(offer_of(client, issue(client, org)))
    assert wallet.token(client, org, code).status_code == 200
    again = wallet.token(client, org, code)
    assert again.status_code == 400
    assert again.get_json()["error"] == "invalid_grant"
    assert again.headers["Cache-Control"] == "no-store"


def test_an_unknown_pre_authorized_code_is_invalid_grant(app, client) -> None:
    org = make_org(app)
    response = Wallet().token(client, org, "pc_made_up")
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_grant"


def test_five_wrong_tx_codes_burn_the_code(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org, tx_code=True)
    offer = offer_of(client, credential)
    grant = offer["grants"]["urn:ietf:params:oauth:grant-type:pre-authorized_code"]
    assert grant["tx_code"]["input_mode"] == "numeric" and grant["tx_code"]["length"] == 6
    wrong = "000000" if credential["tx_code"] != "000000" else "111111"
    for _ in range(5):
        response = wallet.token(client, org, code_of(offer), wrong)
        assert response.status_code == 400
        assert response.get_json()["error"] == "invalid_grant"
    # The right code no longer helps: the pre-authorized code is burnt.
    response = wallet.token(client, org, code_of(offer), credential["tx_code"])
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_grant"


def test_four_wrong_tx_codes_then_the_right_one_succeeds(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org, tx_code=True)
    code = code_of(offer_of(client, credential))
    wrong = "000000" if credential["tx_code"] != "000000" else "111111"
    for _ in range(4):
        assert wallet.token(client, org, code, wrong).status_code == 400
    assert wallet.token(client, org, code, credential["tx_code"]).status_code == 200


def test_a_missing_tx_code_is_invalid_request(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org, tx_code=True)
    response = wallet.token(client, org, code_of(offer_of(client, credential)))
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_request"


def test_an_expired_offer_is_invalid_grant(app, client, monkeypatch) -> None:
    monkeypatch.setitem(app.config, "CREDENTIAL_OFFER_SECONDS", 600)
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    code = code_of(offer_of(client, credential))
    later = clock.now() + timedelta(seconds=601)
    clock.set_source(lambda: later)
    response = wallet.token(client, org, code)
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_grant"
    assert (
        client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()["status"]
        == "EXPIRED"
    )


def test_another_grant_type_is_unsupported(app, client) -> None:
    org = make_org(app)
    response = client.post(
        org.path("/token"), data={"grant_type": "client_credentials", "client_id": "x"}
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "unsupported_grant_type"


def test_another_organizations_code_is_invalid_grant(app, client) -> None:
    org, other, wallet = make_org(app), make_org(app, "o@example.test", name="Globex"), Wallet()
    code = code_of(offer_of(client, issue(client, org)))
    response = wallet.token(client, other, code)
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_grant"
    # Still good at its own issuer.
    assert wallet.token(client, org, code).status_code == 200


def test_a_credential_is_issued_once(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    receive(client, org, wallet, credential)
    assert (
        client.get(
            f"/issuers/{org.id}/offers/{credential['offer_page'].rsplit('/', 1)[1]}"
        ).status_code
        == 404
    )


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"not json", "invalid_credential_request"),
        (b"[]", "invalid_credential_request"),
        (b'{"proofs": {"jwt": ["x"]}}', "invalid_credential_request"),
        # A draft-15 proof without its proof_type: a proof that is wrong, not a request.
        (b'{"credential_configuration_id": "x", "proof": {"jwt": "x"}}', "invalid_proof"),
        # More proofs than the batch_size the metadata advertises (10 by default).
        (
            json.dumps(
                {"credential_configuration_id": "x", "proofs": {"jwt": ["a"] * 11}}
            ).encode(),
            "invalid_credential_request",
        ),
    ],
)
def test_a_malformed_credential_request_is_refused(ctx: Context, body: bytes, error: str) -> None:
    response = ctx.client.post(
        ctx.org.path("/credential"),
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {ctx.token}"},
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == error


def test_a_token_request_must_be_form_encoded(app, client) -> None:
    org = make_org(app)
    code = code_of(offer_of(client, issue(client, org)))
    response = client.post(
        org.path("/token"),
        json={
            "grant_type": "urn:ietf:params:oauth:grant-type:pre-authorized_code",
            "pre-authorized_code": code,
        },
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_request"
    # The code was not spent by the refused request.
    assert Wallet().token(client, org, code).status_code == 200
