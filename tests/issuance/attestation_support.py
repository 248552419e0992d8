"""A wallet provider made in the test: a CA and a signing certificate (cryptography), and the
wallet attestations, their PoPs and the key attestations it signs with jwcrypto, a JOSE
implementation we did not write. ``trust`` makes the organization trust it, through its API,
as staff would: a trust source of wallet provider certificates."""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from issuance.issuance_support import Org
from jwcrypto import jwk, jws
from signing_certificates import Pki, make_pki, pem


def signed(key: jwk.JWK, header: dict[str, Any], payload: dict[str, Any]) -> str:
    token = jws.JWS(json.dumps(payload).encode())
    token.add_signature(key, alg=header["alg"], protected=json.dumps(header))
    return token.serialize(compact=True)


def public(key: jwk.JWK) -> dict[str, Any]:
    return json.loads(key.export_public())


@dataclass
class WalletProvider:
    pki: Pki = field(default_factory=lambda: make_pki(("wallet-provider.example.test",)))

    @property
    def key(self) -> jwk.JWK:
        return jwk.JWK.from_pem(
            self.pki.leaf_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )

    @property
    def ca_pem(self) -> str:
        return pem(self.pki.ca).decode()

    def x5c(self) -> list[str]:
        return [
            base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
            for cert in (self.pki.leaf, self.pki.ca)
        ]

    def attestation(self, client_id: str, instance_key: jwk.JWK, *, expires_in: int = 3600) -> str:
        now = int(time.time())
        header = {"typ": "oauth-client-attestation+jwt", "alg": "ES256", "x5c": self.x5c()}
        payload = {
            "iss": "https://wallet-provider.example.test",
            "sub": client_id,
            "iat": now - 60,
            "exp": now + expires_in,
            "cnf": {"jwk": public(instance_key)},
        }
        return signed(self.key, header, payload)

    def key_attestation(self, keys: list[jwk.JWK], nonce: str | None = None) -> str:
        header = {"typ": "key-attestation+jwt", "alg": "ES256", "x5c": self.x5c()}
        payload: dict[str, Any] = {
            "iss": "https://wallet-provider.example.test",
            "iat": int(time.time()),
            "attested_keys": [public(key) for key in keys],
            "key_storage": ["iso_18045_high"],
        }
        if nonce is not None:
            payload["nonce"] = nonce
        return signed(self.key, header, payload)


def attestation_pop(instance_key: jwk.JWK, audience: str, client_id: str) -> str:
    header = {"typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"}
    payload = {
        "iss": client_id,
        "aud": audience,
        "jti": secrets.token_urlsafe(16),
        "iat": int(time.time()),
    }
    return signed(instance_key, header, payload)


def attestation_headers(
    provider: WalletProvider,
    audience: str,
    client_id: str,
    *,
    expires_in: int = 3600,
    instance_key: jwk.JWK | None = None,
) -> dict[str, str]:
    """The two headers of a wallet instance the provider vouches for."""
    instance_key = instance_key or jwk.JWK.generate(kty="EC", crv="P-256")
    return {
        "OAuth-Client-Attestation": provider.attestation(
            client_id, instance_key, expires_in=expires_in
        ),
        "OAuth-Client-Attestation-PoP": attestation_pop(instance_key, audience, client_id),
    }


def trust(client, org: Org, provider: WalletProvider, name: str = "Wallet providers") -> dict:
    response = client.post(
        "/trust/sources",
        json={"name": name, "kind": "WALLET_PROVIDERS", "certificates": provider.ca_pem},
        headers=org.headers,
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def set_wallet_attestation(client, org: Org, value: str) -> None:
    response = client.put(
        f"/organizations/{org.id}/issuer", json={"wallet_attestation": value}, headers=org.headers
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["wallet_attestation"] == value
