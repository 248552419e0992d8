"""A wallet for the authorization code flow written from the specifications, for the negative
tests: pushed authorization requests (RFC 9126), PKCE (RFC 7636) and DPoP proofs (RFC 9449)
signed with jwcrypto, a JOSE implementation we did not write; and the person's click on the
authorization page, as a browser would make it (the form's own fields, its cookie)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from issuance.issuance_support import Org, Wallet, offer_of
from jwcrypto import jwk, jws

REDIRECT_URI = "https://wallet.example.test/callback"
CLIENT_ID = "wallet-under-test"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def challenge_of(verifier: str) -> str:
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


@dataclass
class AuthCodeWallet(Wallet):
    """A holder key (for the key proof) and a DPoP key (for the tokens), plus the flow's
    state: the PKCE verifier, the last DPoP nonce the issuer gave."""

    dpop_key: jwk.JWK = field(default_factory=lambda: jwk.JWK.generate(kty="EC", crv="P-256"))
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    dpop_nonce: str | None = None
    # The wallet attestation headers for a request to the given endpoint URL (a fresh PoP
    # each time), or None for a public client.
    attest: Callable[[str], dict[str, str]] | None = None

    def dpop(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | bool | None = True,
        jti: str | None = None,
        iat: int | None = None,
    ) -> str:
        """A DPoP proof; ``nonce=True`` puts in the issuer's last nonce, None leaves it out."""
        payload: dict[str, Any] = {
            "jti": jti or secrets.token_urlsafe(16),
            "htm": method,
            "htu": url,
            "iat": int(time.time()) if iat is None else iat,
        }
        if nonce is True:
            payload["nonce"] = self.dpop_nonce
        elif nonce:
            payload["nonce"] = nonce
        if access_token is not None:
            payload["ath"] = b64url(hashlib.sha256(access_token.encode()).digest())
        header = {
            "typ": "dpop+jwt",
            "alg": "ES256",
            "jwk": json.loads(self.dpop_key.export_public()),
        }
        token = jws.JWS(json.dumps(payload).encode())
        token.add_signature(self.dpop_key, alg="ES256", protected=json.dumps(header))
        return token.serialize(compact=True)

    def remember_nonce(self, response) -> None:
        if response.headers.get("DPoP-Nonce"):
            self.dpop_nonce = response.headers["DPoP-Nonce"]

    def fetch_nonce(self, client, org: Org) -> None:
        self.remember_nonce(client.post(org.path("/nonce")))

    def par_form(self, org: Org, issuer_state: str, **overrides: Any) -> dict[str, Any]:
        form = {
            "response_type": "code",
            "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge_of(self.verifier),
            "code_challenge_method": "S256",
            "scope": org.schema_id,
            "issuer_state": issuer_state,
            "state": "wallet-state-1",
            "resource": org.issuer,
        }
        form.update(overrides)
        return {name: value for name, value in form.items() if value is not None}

    def par(self, client, org: Org, credential: dict, *, dpop: bool = True, **overrides: Any):
        offer = offer_of(client, credential)
        issuer_state = offer["grants"]["authorization_code"]["issuer_state"]
        headers = {}
        if dpop:
            if self.dpop_nonce is None:
                self.fetch_nonce(client, org)
            headers["DPoP"] = self.dpop("POST", f"{org.issuer}/par")
        if self.attest is not None:
            headers.update(self.attest(f"{org.issuer}/par"))
        response = client.post(
            org.path("/par"), data=self.par_form(org, issuer_state, **overrides), headers=headers
        )
        self.remember_nonce(response)
        return response

    def authorize(self, client, org: Org, request_uri: str, decision: str = "continue"):
        """The person on the authorization page: load it, press the button; the redirect."""
        query = urlencode({"client_id": CLIENT_ID, "request_uri": request_uri})
        page = client.get(f"{org.path('/authorize')}?{query}")
        assert page.status_code == 200, page.get_data(as_text=True)
        fields = dict(
            (unescape(name), unescape(value))
            for name, value in re.findall(
                r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.get_data(as_text=True)
            )
        )
        return client.post(org.path("/authorize"), data={**fields, "decision": decision})

    def code(self, client, org: Org, credential: dict, **par_overrides: Any) -> str:
        """PAR, the page, and the code from the redirect."""
        pushed = self.par(client, org, credential, **par_overrides)
        assert pushed.status_code == 201, pushed.get_json()
        redirected = self.authorize(client, org, pushed.get_json()["request_uri"])
        assert redirected.status_code == 303, redirected.get_data(as_text=True)
        answer = parse_qs(urlsplit(redirected.headers["Location"]).query)
        assert answer["iss"] == [org.issuer]
        return answer["code"][0]

    def token_form(self, code: str, **overrides: Any) -> dict[str, Any]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": self.verifier,
            "redirect_uri": REDIRECT_URI,
            "client_id": CLIENT_ID,
        }
        form.update(overrides)
        return {name: value for name, value in form.items() if value is not None}

    def redeem(self, client, org: Org, code: str, *, proof: str | None = "make", **overrides):
        headers = {}
        if proof == "make":
            proof = self.dpop("POST", f"{org.issuer}/token")
        if proof is not None:
            headers["DPoP"] = proof
        if self.attest is not None:
            headers.update(self.attest(f"{org.issuer}/token"))
        response = client.post(
            org.path("/token"), data=self.token_form(code, **overrides), headers=headers
        )
        self.remember_nonce(response)
        return response

    def dpop_token(self, client, org: Org, credential: dict) -> str:
        response = self.redeem(client, org, self.code(client, org, credential))
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["token_type"] == "DPoP"
        return response.get_json()["access_token"]

    def credential_request(
        self, client, org: Org, access_token: str, body: dict, *, proof: str | None = "make"
    ):
        headers = {"Authorization": f"DPoP {access_token}"}
        if proof == "make":
            proof = self.dpop("POST", f"{org.issuer}/credential", access_token=access_token)
        if proof is not None:
            headers["DPoP"] = proof
        response = client.post(org.path("/credential"), json=body, headers=headers)
        self.remember_nonce(response)
        return response

    def credential_body(self, client, org: Org, configuration_id: str) -> dict[str, Any]:
        proof = self.proof(org.issuer, self.nonce(client, org))
        return {"credential_configuration_id": configuration_id, "proofs": {"jwt": [proof]}}
