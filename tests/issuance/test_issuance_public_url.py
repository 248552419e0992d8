"""A credential names the issuer ``PUBLIC_URL`` names, whatever Host the wallet's requests carry.

The wallet chooses the Host header of its requests. Were the issuer identifier read from it,
a holder would get a credential whose ``iss``, status list URI and ``x5c`` certificate (signed
by the organization's root) name a host the holder controls, and could keep serving a status
list captured before a revocation. Without ``PUBLIC_URL`` the deployment is the development
address ``http://127.0.0.1:8000``; no certificate is ever made for another host.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from cryptography import x509
from issuance.issuance_support import Wallet, issue, local, make_org, offer_uri
from sqlalchemy import select

from app.extensions import db
from app.issuance.models import IssuerKey

CONFIGURED = "http://127.0.0.1:8000"
FOREIGN_HOST = "evil.example"


class Relayed:
    """A wallet whose every request carries another Host header."""

    def __init__(self, client: Any, host: str) -> None:
        self.client, self.host = client, host

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, headers={**kwargs.pop("headers", {}), "Host": self.host})

    def post(self, path: str, **kwargs: Any) -> Any:
        headers = {**kwargs.pop("headers", {}), "Host": self.host}
        return self.client.post(path, headers=headers, **kwargs)


def segment(token: str, index: int) -> dict:
    part = token.split("~")[0].split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def leaf_names(x5c: list[str]) -> list[str]:
    leaf = x509.load_der_x509_certificate(base64.b64decode(x5c[0]))
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return san.get_values_for_type(x509.UniformResourceIdentifier)


def test_an_issuance_through_another_host_names_the_configured_public_url_only(make_app):
    app = make_app(PUBLIC_URL="")
    org = make_org(app)
    issuer = f"{CONFIGURED}/issuers/{org.id}"
    credential = issue(app.test_client(), org)
    assert credential["issuer"] == issuer
    wallet, relayed = Wallet(), Relayed(app.test_client(), FOREIGN_HOST)

    offer = relayed.get(local(offer_uri(credential))).get_json()
    assert offer["credential_issuer"] == issuer
    metadata = relayed.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()
    assert metadata["credential_issuer"] == issuer
    code = offer["grants"]["urn:ietf:params:oauth:grant-type:pre-authorized_code"]
    token = wallet.token(relayed, org, code["pre-authorized_code"])
    assert token.status_code == 200, token.get_json()
    proof = wallet.proof(offer["credential_issuer"], wallet.nonce(relayed, org))
    answer = wallet.request(
        relayed,
        org,
        token.get_json()["access_token"],
        {"credential_configuration_id": credential["schema_id"], "proofs": {"jwt": [proof]}},
    )

    assert answer.status_code == 200, answer.get_json()
    issued = answer.get_json()["credentials"][0]["credential"]
    header, payload = segment(issued, 0), segment(issued, 1)
    assert payload["iss"] == issuer
    assert payload["status"]["status_list"]["uri"].startswith(f"{issuer}/status-lists/")
    assert leaf_names(header["x5c"]) == [issuer]
    # The organization's keys carry a certificate for the configured issuer and no other.
    with app.app_context():
        chains = db.session.scalars(
            select(IssuerKey.certificate_chain_pem).where(
                IssuerKey.organization_id == uuid.UUID(org.id)
            )
        ).all()
        db.session.remove()
    assert chains and all(FOREIGN_HOST not in (chain or "") for chain in chains)
    named = [
        x509.load_pem_x509_certificates(chain.encode())[0]
        .extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value.get_values_for_type(x509.UniformResourceIdentifier)
        for chain in chains
        if chain
    ]
    assert named == [[issuer]]
