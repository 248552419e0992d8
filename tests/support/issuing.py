"""Issuing for the page, dashboard and browser tests: a published schema, a recipient, a
credential through the JSON API, and a wallet that takes the offer over HTTP (OpenID4VCI 1.0,
pre-authorized code), as an independent client would."""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from factories import Staff, make_apikey, make_staff
from flask import Flask
from flask.testing import FlaskClient
from sdjwt.sdjwt_forge import generate, public_jwk, sign

BASE = "https://verity.test"
ADD_TO_WALLET = re.compile(r'id="add-to-wallet"[^>]*href="([^"]+)"')
POLL_URL = re.compile(r'hx-get="([^"]+)"')
PRE_AUTHORIZED = "urn:ietf:params:oauth:grant-type:pre-authorized_code"


@dataclass
class Offered:
    """An organization with a recipient and a published schema, and what issuing returned."""

    staff: Staff
    credential: dict

    @property
    def path(self) -> str:
        return self.credential["offer_page"].removeprefix(BASE)


def publish_schema(client: FlaskClient, staff: Staff) -> str:
    schema = client.post(
        "/schemas",
        json={
            "name": "Nurse licence",
            "vct": "https://acme.test/nurse",
            "attributes": [
                {"name": "licence_number", "type": "TEXT"},
                {"name": "grade", "type": "NUMBER"},
            ],
        },
        headers=staff.headers(),
    ).get_json()["id"]
    published = client.post(f"/schemas/{schema}/publish", headers=staff.headers())
    assert published.status_code == 200, published.get_json()
    return schema


def add_recipient(app: Flask, client: FlaskClient, staff: Staff, email: str) -> str:
    key = make_apikey(app, staff.organization_id, name=f"backend {email}")
    response = client.post(
        "/recipients",
        json={"first_name": "Ada", "last_name": "Lovelace", "email": email},
        headers={"apikey": key},
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def offer_credential(
    app: Flask,
    client: FlaskClient,
    email: str = "alice@example.test",
    *,
    owner: Staff | None = None,
    recipient_email: str = "ada@example.test",
    **extra: Any,
) -> Offered:
    """A credential offered through ``POST /credentials`` by ``owner`` (or a new PRO
    organization's owner) to a new recipient, on a newly published schema."""
    staff = owner or make_staff(app, email)
    body = {
        "name": "Nurse licence",
        "description": "Registered nurse at Acme Hospital",
        "schema_id": publish_schema(client, staff),
        "recipient_id": add_recipient(app, client, staff, recipient_email),
        "claims": [{"name": "licence_number", "value": "RN-1234"}],
        **extra,
    }
    response = client.post("/credentials", json=body, headers=staff.headers())
    assert response.status_code == 201, response.get_json()
    return Offered(staff, response.get_json())


def wallet_button(page_html: str) -> str:
    match = ADD_TO_WALLET.search(page_html)
    assert match, "the page has no Add to your wallet button"
    return html.unescape(match.group(1))


def poll_url(fragment_html: str) -> str | None:
    match = POLL_URL.search(fragment_html)
    return html.unescape(match.group(1)) if match else None


def local(url: str, base: str = BASE) -> str:
    assert url.startswith(base), url
    return url.removeprefix(base)


def take_offer(
    client: FlaskClient, offer_url: str, tx_code: str | None = None, *, base: str = BASE
) -> str:
    """What a wallet does with the offer link: fetch the offer, the metadata, a token, a nonce,
    then the credential with a key proof. Returns the SD-JWT VC."""
    offer_uri = parse_qs(urlsplit(offer_url).query)["credential_offer_uri"][0]
    offer = client.get(local(offer_uri, base)).get_json()
    issuer = offer["credential_issuer"]
    issuer_path = urlsplit(issuer).path
    metadata = client.get(f"/.well-known/openid-credential-issuer{issuer_path}").get_json()
    server = client.get(f"/.well-known/oauth-authorization-server{issuer_path}").get_json()
    grant = offer["grants"][PRE_AUTHORIZED]
    form = {"grant_type": PRE_AUTHORIZED, "pre-authorized_code": grant["pre-authorized_code"]}
    if tx_code is not None:
        form["tx_code"] = tx_code
    token = client.post(local(server["token_endpoint"], base), data=form)
    assert token.status_code == 200, token.get_json()
    nonce = client.post(local(metadata["nonce_endpoint"], base)).get_json()["c_nonce"]
    key = generate("ES256")
    proof = sign(
        {"alg": "ES256", "typ": "openid4vci-proof+jwt", "jwk": public_jwk(key)},
        {"aud": issuer, "iat": int(time.time()), "nonce": nonce},
        key,
    )
    response = client.post(
        local(metadata["credential_endpoint"], base),
        json={
            "credential_configuration_id": offer["credential_configuration_ids"][0],
            "proofs": {"jwt": [proof]},
        },
        headers={"Authorization": f"Bearer {token.get_json()['access_token']}"},
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()["credentials"][0]["credential"]
