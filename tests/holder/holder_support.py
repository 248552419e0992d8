"""Set-up for the holder tests: verifications opened through the API, and credentials issued
by an implementation we did not write (PyPI sd-jwt) into the holder's wallet."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import requests
from factories import Staff, make_apikey, make_staff, make_verification
from wallets import PERSON, PID_VCT, Issuer

from app.holder.jose import private_jwk
from app.holder.store import Wallet
from bench.receiving import ISSUANCE_SCHEMA


@dataclass(frozen=True)
class Opened:
    staff: Staff
    apikey: str
    verification: dict
    individual: dict
    link: str


def open_individual(
    served, customer_id: str = "crm-1", staff: Staff | None = None, **verification: Any
) -> Opened:
    """A verification (of ``staff``'s organization, or a new one's), one of its individuals,
    and the ``openid4vp://`` link of its connect."""
    client = served.app.test_client()
    staff = staff or make_staff(served.app, f"{customer_id}@example.test")
    created = make_verification(client, staff, **verification)
    apikey = make_apikey(served.app, staff.organization_id)
    individual = requests.post(
        f"{served.base}/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": created["id"]},
        timeout=10,
    ).json()
    connect = requests.get(f"{served.base}/verifications/{individual['id']}/connect", timeout=10)
    return Opened(staff, apikey, created, individual, connect.json()["connection_url"])


def lookup(served, opened: Opened) -> dict:
    """The authenticated lookup a backend takes the decision from."""
    customer_id = opened.individual["customer_id"]
    response = requests.get(
        f"{served.base}/verifications/{opened.verification['id']}/individuals/{customer_id}",
        headers={"apikey": opened.apikey},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()


def issue_with_pypi(wallet: Wallet, claims: dict | None = None, vct: str = PID_VCT) -> dict:
    """An SD-JWT VC bound to the wallet's key, every claim selectively disclosable (nested
    members one by one), issued by a ``did:jwk`` issuer with PyPI sd-jwt; stored as received."""
    from jwcrypto import jwk
    from sd_jwt.common import SDObj
    from sd_jwt.issuer import SDJWTIssuer

    def disclosable(values: dict) -> dict:
        return {
            (name if isinstance(value, dict) else SDObj(name)): (
                disclosable(value) if isinstance(value, dict) else value
            )
            for name, value in values.items()
        }

    issuer = Issuer()
    now = int(time.time())
    payload: dict[Any, Any] = {"iss": issuer.did, "vct": vct, "iat": now - 60, "exp": now + 3600}
    payload.update(disclosable(PERSON if claims is None else claims))
    issued = SDJWTIssuer(
        payload,
        jwk.JWK.from_json(json.dumps(private_jwk(issuer.key))),
        jwk.JWK.from_json(json.dumps(private_jwk(wallet.key))),
        sign_alg="ES256",
        add_decoy_claims=True,
        extra_header_parameters={"typ": "dc+sd-jwt"},
    )
    return wallet.add(
        {
            "format": "dc+sd-jwt",
            "issuer": issuer.did,
            "vct": vct,
            "configuration_id": None,
            "credential": issued.sd_jwt_issuance,
        }
    )


def issuing_organization(
    served, claims: dict | None = None, **schema_settings: Any
) -> tuple[Staff, dict]:
    """Staff of a PRO organization with a published schema (the bench's, with
    ``schema_settings`` on top) and a recipient: the staff, and the body of
    ``POST /credentials`` issuing to that recipient."""
    client = served.app.test_client()
    staff = make_staff(served.app, "bench@example.test")
    headers = staff.headers()
    schema = client.post(
        "/schemas", json={**ISSUANCE_SCHEMA, **schema_settings}, headers=headers
    ).get_json()
    assert client.post(f"/schemas/{schema['id']}/publish", headers=headers).status_code == 200
    recipient = client.post(
        "/recipients",
        json={"first_name": "Erika", "last_name": "M", "email": "erika@example.test"},
        headers={"apikey": make_apikey(served.app, staff.organization_id)},
    ).get_json()
    body = {
        "name": "Bench credential",
        "schema_id": schema["id"],
        "recipient_id": recipient["id"],
        "claims": [
            {"name": name, "value": value}
            for name, value in (claims or {"given_name": "Erika"}).items()
        ],
    }
    return staff, body
