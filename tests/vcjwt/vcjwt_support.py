"""The VC-JWT tests' issuer and holder: ``vc_wallet.mjs`` (did-jwt-vc, did-jwt,
vc-bitstring-status-list and jose, pinned in this folder's package-lock.json), driven one batch of
jobs per call, plus the builders that say what each credential and presentation contains."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support.npm import ensure_node_modules

HERE = Path(__file__).resolve().parent
V1 = "https://www.w3.org/2018/credentials/v1"
V2 = "https://www.w3.org/ns/credentials/v2"
CREDENTIAL_TYPE = "ExampleIdentityCredential"
CLAIMS = {"given_name": "Erika", "family_name": "Mustermann", "address": {"country": "DE"}}


class Wallet:
    """One node process kept up for the test session (``--lines``): a batch of jobs per line.
    Starting node and loading its libraries costs more than most jobs."""

    def __init__(self) -> None:
        ensure_node_modules(HERE, "did-jwt-vc")
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is required to make the VC-JWT test credentials")
        self.process = subprocess.Popen(
            [node, "vc_wallet.mjs", "--lines"],
            cwd=HERE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"jobs": jobs}) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline() or '{"error": "node exited"}')
        if "error" in answer:
            raise AssertionError(f"the VC-JWT wallet failed: {answer['error']}")
        return answer["results"]

    def close(self) -> None:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


_wallet: Wallet | None = None


def run_node(*jobs: dict[str, Any]) -> list[dict[str, Any]]:
    """The results of ``jobs``, in order; a failure fails the test with the wallet's words."""
    global _wallet
    if _wallet is None:
        _wallet = Wallet()
    return _wallet.run(list(jobs))


def close_wallet() -> None:
    global _wallet
    if _wallet is not None:
        _wallet.close()
        _wallet = None


@dataclass(frozen=True)
class Party:
    """An issuer or holder: a private JWK the node side signs with, and the DID it signs as."""

    key: dict[str, Any]
    did: str
    kid: str | None = None
    header: dict[str, Any] | None = None  # more JOSE header members

    def signer(self) -> dict[str, Any]:
        return {
            "jwk": self.key["jwk"],
            "alg": self.key["alg"],
            "did": self.did,
            "kid": self.kid,
            "header": self.header or {},
        }

    def as_did(self, did: str, kid: str | None = None) -> Party:
        """The same key signing as another DID (a forgery: the DID's key is not this one)."""
        return Party(self.key, did, kid)

    def with_header(self, kid: str | None = None, **header: Any) -> Party:
        return Party(self.key, self.did, kid, header)

    @property
    def public_jwk(self) -> dict[str, Any]:
        return {name: value for name, value in self.key["jwk"].items() if name != "d"}


def make_parties(*types: str) -> list[dict[str, Any]]:
    return run_node(*({"kind": "key", "type": t} for t in types))


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def credential_v1(subject: str, **properties: Any) -> dict[str, Any]:
    """A VCDM 1.1 credential as did-jwt-vc takes it (W3C form: it maps the JWT claims)."""
    return {
        "@context": [V1],
        "type": ["VerifiableCredential", CREDENTIAL_TYPE],
        "issuanceDate": iso(datetime.now(UTC) - timedelta(days=1)),
        "credentialSubject": {"id": subject, **CLAIMS},
        **properties,
    }


def credential_v2(subject: str, **properties: Any) -> dict[str, Any]:
    """A VCDM 2.0 credential: the vc+jwt payload itself."""
    return {
        "@context": [V2],
        "type": ["VerifiableCredential", CREDENTIAL_TYPE],
        "validFrom": iso(datetime.now(UTC) - timedelta(days=1)),
        "credentialSubject": {"id": subject, **CLAIMS},
        **properties,
    }


def status_entry(url: str, index: int, purpose: str = "revocation") -> dict[str, Any]:
    return {
        "id": f"{url}#{index}",
        "type": "BitstringStatusListEntry",
        "statusPurpose": purpose,
        "statusListIndex": str(index),
        "statusListCredential": url,
    }


def vc_job(model: str, issuer: Party, credential: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "vc", "model": model, "signer": issuer.signer(), "credential": credential}


def vp_job(
    model: str, holder: Party, credential: str, *, nonce: str, aud: str, **extra: Any
) -> dict[str, Any]:
    return {
        "kind": "vp",
        "model": model,
        "signer": holder.signer(),
        "credential": credential,
        "nonce": nonce,
        "aud": aud,
        **extra,
    }


def flip_signature_byte(token: str) -> str:
    """The same JWS with one bit of its signature changed (its last character stays canonical
    base64url: the first character of the signature is changed instead)."""
    head, payload, signature = token.split(".")
    first = "B" if signature[0] == "A" else "A"
    return f"{head}.{payload}.{first}{signature[1:]}"


@dataclass(frozen=True)
class Parties:
    issuer: Party  # P-256, did:jwk
    other_issuer: Party  # P-256, did:jwk
    holder: Party  # P-256, did:jwk
    ed_holder: Party  # Ed25519, did:key
    other_holder: Party  # P-256, did:jwk


# The request a presentation answers, as the tests that make one without the service use it.
NONCE = "n-0S6_WzA2Mj"
AUD = "redirect_uri:https://verifier.example/wallet/response"


def issue(model: str, issuer: Party, credential: dict[str, Any]) -> str:
    return run_node(vc_job(model, issuer, credential))[0]["jwt"]


def present(model: str, holder: Party, credential: str, **options: Any) -> str:
    options.setdefault("nonce", NONCE)
    options.setdefault("aud", AUD)
    return run_node(vp_job(model, holder, credential, **options))[0]["jwt"]


def jose(alg: str, payload: dict[str, Any], **header: Any) -> str:
    """What did-jwt refuses to make: an unsigned (alg none) or HMAC-signed token."""
    return run_node({"kind": "jose", "alg": alg, "header": header, "payload": payload})[0]["jwt"]
