"""Set-up for the issuance tests: an organization with a published schema and a recipient,
credentials issued through the staff API, and a wallet that signs its key proofs with
jwcrypto (a JOSE implementation we did not write)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from factories import Staff, make_staff
from flask import Flask
from jwcrypto import jwk, jws

from app.organizations.models import Plan

PUBLIC_URL = "https://verity.test"
PROOF_TYP = "openid4vci-proof+jwt"
PRE_AUTHORIZED_GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"

DIPLOMA = {
    "name": "Diploma",
    "description": "A degree awarded by the organization",
    "vct": "https://credentials.example.test/diploma",
    "attributes": [
        {"name": "given_name", "description": "Given name", "type": "TEXT"},
        {"name": "family_name", "description": "Family name", "type": "TEXT"},
        {"name": "degree", "description": "Degree", "type": "TEXT"},
        {"name": "grade", "description": "Grade", "type": "NUMBER"},
        {"name": "honours", "description": "With honours", "type": "BOOLEAN"},
        {"name": "awarded", "description": "Awarded on", "type": "DATETIME"},
        {"name": "address.country", "description": "Country", "type": "TEXT"},
    ],
}
CLAIMS = [
    {"name": "given_name", "value": "Ada"},
    {"name": "family_name", "value": "Lovelace"},
    {"name": "degree", "value": "Mathematics"},
    {"name": "grade", "value": 17.5},
    {"name": "honours", "value": True},
    {"name": "awarded", "value": "2024-06-30"},
    {"name": "address.country", "value": "FR"},
]


@dataclass
class Org:
    """An organization able to issue: staff, a published schema, a recipient."""

    staff: Staff
    schema_id: str
    recipient_id: str
    base: str = PUBLIC_URL

    @property
    def id(self) -> str:
        return self.staff.organization_id

    @property
    def headers(self) -> dict[str, str]:
        return self.staff.headers()

    @property
    def issuer(self) -> str:
        return f"{self.base}/issuers/{self.id}"

    def path(self, suffix: str) -> str:
        return f"/issuers/{self.id}{suffix}"

    def body(self, **overrides: Any) -> dict[str, Any]:
        body = {
            "name": "Diploma of Ada",
            "description": "Awarded 2024",
            "schema_id": self.schema_id,
            "recipient_id": self.recipient_id,
            "claims": CLAIMS,
        }
        body.update(overrides)
        return body


def make_org(
    app: Flask, email: str = "registrar@example.test", plan: Plan = Plan.PRO, name: str = "Acme"
) -> Org:
    """Through the API, as staff would: schema created and published, recipient added."""
    staff = make_staff(app, email, plan, name)
    client = app.test_client()
    schema = client.post("/schemas", json=DIPLOMA, headers=staff.headers())
    assert schema.status_code == 201, schema.get_json()
    schema_id = schema.get_json()["id"]
    published = client.post(f"/schemas/{schema_id}/publish", headers=staff.headers())
    assert published.status_code == 200, published.get_json()
    recipient = _recipient(app, staff.organization_id)
    return Org(staff, schema_id, recipient, app.config["PUBLIC_URL"])


def _recipient(app: Flask, organization_id: str) -> str:
    from app.extensions import db
    from app.recipients.models import Recipient

    with app.app_context():
        row = Recipient(
            organization_id=uuid.UUID(organization_id),
            first_name="Ada",
            last_name="Lovelace",
            email="ada@example.test",
        )
        db.session.add(row)
        db.session.commit()
        value = str(row.id)
        db.session.remove()
    return value


def issue(client, org: Org, **overrides: Any) -> dict[str, Any]:
    response = client.post("/credentials", json=org.body(**overrides), headers=org.headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def local(url: str) -> str:
    """A URL of the service as the test client's path."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def offer_uri(credential: dict[str, Any]) -> str:
    """The ``credential_offer_uri`` inside an ``openid-credential-offer://`` link."""
    query = parse_qs(urlsplit(credential["offer_url"]).query)
    return query["credential_offer_uri"][0]


@dataclass
class Wallet:
    """A holder key and the requests a wallet sends (OpenID4VCI 1.0 §6, §7, §8)."""

    key: jwk.JWK = field(default_factory=lambda: jwk.JWK.generate(kty="EC", crv="P-256"))

    @property
    def public(self) -> dict[str, Any]:
        return json.loads(self.key.export_public())

    def proof(
        self,
        audience: str,
        nonce: str | None,
        *,
        iat: int | None = None,
        typ: str = PROOF_TYP,
        header_jwk: dict[str, Any] | None = None,
        signer: jwk.JWK | None = None,
        alg: str = "ES256",
        key_attestation: str | None = None,
    ) -> str:
        payload: dict[str, Any] = {"aud": audience, "iat": int(time.time()) if iat is None else iat}
        if nonce is not None:
            payload["nonce"] = nonce
        header = {"typ": typ, "alg": alg, "jwk": header_jwk or self.public}
        if key_attestation is not None:
            header["key_attestation"] = key_attestation
        token = jws.JWS(json.dumps(payload).encode())
        token.add_signature(signer or self.key, alg=alg, protected=json.dumps(header))
        return token.serialize(compact=True)

    def token(self, client, org: Org, code: str, tx_code: str | None = None):
        form = {"grant_type": PRE_AUTHORIZED_GRANT, "pre-authorized_code": code}
        if tx_code is not None:
            form["tx_code"] = tx_code
        return client.post(org.path("/token"), data=form)

    def nonce(self, client, org: Org) -> str:
        response = client.post(org.path("/nonce"))
        assert response.status_code == 200, response.get_json()
        return response.get_json()["c_nonce"]

    def request(self, client, org: Org, access_token: str, body: dict[str, Any]):
        return client.post(
            org.path("/credential"),
            json=body,
            headers={"Authorization": f"Bearer {access_token}"},
        )


def offer_of(client, credential: dict[str, Any]) -> dict[str, Any]:
    response = client.get(local(offer_uri(credential)))
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def code_of(offer: dict[str, Any]) -> str:
    return offer["grants"][PRE_AUTHORIZED_GRANT]["pre-authorized_code"]


def access_token(client, org: Org, wallet: Wallet, credential: dict, tx: str | None = None) -> str:
    code = code_of(offer_of(client, credential))
    response = wallet.token(client, org, code, tx if tx is not None else credential.get("tx_code"))
    assert response.status_code == 200, response.get_json()
    return response.get_json()["access_token"]


def receive(client, org: Org, wallet: Wallet, credential: dict) -> str:
    """The whole pre-authorized code flow; the SD-JWT VC."""
    token = access_token(client, org, wallet, credential)
    proof = wallet.proof(org.issuer, wallet.nonce(client, org))
    response = wallet.request(
        client,
        org,
        token,
        {"credential_configuration_id": credential["schema_id"], "proofs": {"jwt": [proof]}},
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()["credentials"][0]["credential"]
