"""A credential issuer of a few routes on the product's protocol package (``app.oid4vci``),
with no database: enough OpenID4VCI 1.0 for the holder's receive path to be tested on its
own, and an issuer identifier our verifier resolves like any other (jwt-vc-issuer metadata,
status list)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, jsonify, request

from app.oid4vci.credential import sign_sd_jwt_vc
from app.oid4vci.errors import CredentialError, InvalidNonce
from app.oid4vci.keys import generate_signing_key, public_jwk
from app.oid4vci.metadata import (
    CredentialConfiguration,
    authorization_server_metadata,
    credential_issuer_metadata,
    credential_offer,
    jwt_vc_issuer_metadata,
)
from app.oid4vci.proof import verify_proof_jwt
from app.oid4vci.statuslist import sign_status_list

CONFIGURATION_ID = "pid"
PID_VCT = "urn:eudi:pid:1"
PERSON = {
    "given_name": "Erika",
    "family_name": "Mustermann",
    "birthdate": "1984-01-26",
    "address": {"country": "DE", "locality": "Berlin"},
}


@dataclass
class SmallIssuer:
    base: str = ""
    key: Any = field(default_factory=generate_signing_key)
    tx_code: str | None = None
    codes: set[str] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)
    nonces: set[str] = field(default_factory=set)
    seen: list[str] = field(default_factory=list)
    # Nonces handed out but forgotten at once, as if they had expired before use.
    stale_nonces: int = 0

    @property
    def issuer(self) -> str:
        return f"{self.base}/issuers/small"

    @property
    def status_uri(self) -> str:
        return f"{self.issuer}/status-lists/1"

    def offer_link(self) -> str:
        code = secrets.token_urlsafe(16)
        self.codes.add(code)
        return f"openid-credential-offer://?credential_offer_uri={self.issuer}/offers/{code}"

    def app(self, base: str) -> Flask:
        self.base = base
        app = Flask(__name__)
        jwk = public_jwk(self.key)
        path = "/issuers/small"

        @app.before_request
        def remember():
            self.seen.append(f"{request.method} {request.path}")

        @app.get(f"{path}/offers/<code>")
        def offer(code: str):
            length = len(self.tx_code) if self.tx_code else None
            return jsonify(credential_offer(self.issuer, [CONFIGURATION_ID], code, length))

        @app.get(f"/.well-known/openid-credential-issuer{path}")
        def metadata():
            configuration = CredentialConfiguration(CONFIGURATION_ID, PID_VCT, "PID")
            return jsonify(credential_issuer_metadata(self.issuer, [configuration], "Small"))

        @app.get(f"/.well-known/oauth-authorization-server{path}")
        def authorization_server():
            return jsonify(authorization_server_metadata(self.issuer))

        @app.get(f"/.well-known/jwt-vc-issuer{path}")
        def keys():
            return jsonify(jwt_vc_issuer_metadata(self.issuer, [jwk]))

        @app.post(f"{path}/token")
        def token():
            code = request.form.get("pre-authorized_code")
            if code not in self.codes or request.form.get("tx_code") != self.tx_code:
                return jsonify(error="invalid_grant"), 400
            self.codes.discard(code)
            access = secrets.token_urlsafe(16)
            self.tokens.add(access)
            return jsonify(access_token=access, token_type="Bearer", expires_in=300)

        @app.post(f"{path}/nonce")
        def nonce():
            value = secrets.token_urlsafe(16)
            if self.stale_nonces:
                self.stale_nonces -= 1
            else:
                self.nonces.add(value)
            return jsonify(c_nonce=value)

        @app.post(f"{path}/credential")
        def credential():
            header = request.headers.get("Authorization", "")
            if header.removeprefix("Bearer ") not in self.tokens:
                return jsonify(error="invalid_token"), 401
            body = request.get_json()
            try:
                proof = verify_proof_jwt(
                    body["proofs"]["jwt"][0], audience=self.issuer, now=int(time.time())
                )
                if proof.nonce not in self.nonces:
                    raise InvalidNonce("unknown nonce")
            except CredentialError as exc:
                return jsonify(exc.body()), exc.status
            self.nonces.discard(proof.nonce)
            sd_jwt = sign_sd_jwt_vc(
                private_key=self.key,
                kid=jwk["kid"],
                issuer=self.issuer,
                vct=PID_VCT,
                claims=PERSON,
                holder_jwk=proof.jwk,
                status_uri=self.status_uri,
                status_idx=7,
                issued_at=int(time.time()) - 5,
            )
            return jsonify(credentials=[{"credential": sd_jwt}])

        @app.get(f"{path}/status-lists/1")
        def status_list():
            now = int(time.time())
            token = sign_status_list(
                private_key=self.key,
                kid=jwk["kid"],
                uri=self.status_uri,
                revoked=[],
                size=1024,
                issued_at=now,
                ttl=60,
                expires_at=now + 3600,
            )
            return token, 200, {"Content-Type": "application/statuslist+jwt"}

        return app
