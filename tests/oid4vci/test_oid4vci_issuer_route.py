"""An issuer built from this package, served by a real local HTTP server, is one our verifier
trusts through the ordinary route: ``iss`` -> ``/.well-known/jwt-vc-issuer`` -> the key named
by ``kid``, then the status list the credential points at. No special case, no database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sdjwt.sdjwt_forge import AUDIENCE, NONCE, digest, generate, public_jwk, sign
from trust.trust_support import LocalServer

from app.oid4vci.credential import sign_sd_jwt_vc
from app.oid4vci.keys import generate_signing_key
from app.oid4vci.keys import public_jwk as issuer_jwk
from app.oid4vci.metadata import jwt_vc_issuer_metadata
from app.oid4vci.statuslist import sign_status_list
from app.sdjwt import KeyBindingCheck, parse_presentation, verify_presentation
from app.statuslist import check_status
from app.trust import TrustError, resolve_issuer_key
from app.trust.fetch import Fetcher

ORG = "/issuers/7f1c"
SIZE = 131_072


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()


class Issuer:
    """What the service publishes for one organization, put on the local server."""

    def __init__(self, server: LocalServer, keys: list[Any]) -> None:
        self.server, self.keys = server, keys
        self.identifier = server.url(ORG)
        self.status_uri = server.url(f"{ORG}/status-lists/1")
        jwks = [issuer_jwk(key) for key in keys]
        server.add(
            f"/.well-known/jwt-vc-issuer{ORG}", jwt_vc_issuer_metadata(self.identifier, jwks)
        )
        self.publish_status([])

    def publish_status(self, revoked: list[int]) -> None:
        now = int(time.time())
        token = sign_status_list(
            private_key=self.keys[0],
            kid=issuer_jwk(self.keys[0])["kid"],
            uri=self.status_uri,
            revoked=revoked,
            size=SIZE,
            issued_at=now,
            ttl=300,
            expires_at=now + 86_400,
        )
        self.server.add(
            f"{ORG}/status-lists/1", token, headers={"Content-Type": "application/statuslist+jwt"}
        )

    def issue(self, holder: Any, idx: int, key: Any = None) -> str:
        key = key or self.keys[0]
        return sign_sd_jwt_vc(
            private_key=key,
            kid=issuer_jwk(key)["kid"],
            issuer=self.identifier,
            vct="https://verity.example/schemas/employee-badge",
            claims={"given_name": "Erika", "employee_number": 4711},
            holder_jwk=public_jwk(holder),
            status_uri=self.status_uri,
            status_idx=idx,
            issued_at=int(time.time()),
            expires_at=int(time.time()) + 86_400,
        )


def verify_as_the_service(credential: str, holder: Any) -> tuple[Any, Any]:
    """The verifier's steps: resolve the issuer's key from the credential alone, verify the
    presentation with a fresh key binding, then read the credential's status."""
    now = int(time.time())
    sd_jwt = credential  # every disclosure shown
    kb = sign(
        {"alg": "ES256", "typ": "kb+jwt"},
        {"aud": AUDIENCE, "nonce": NONCE, "iat": now, "sd_hash": digest(sd_jwt)},
        holder,
    )
    presentation = parse_presentation(sd_jwt + kb)
    fetcher = Fetcher(allow_private=True, timeout=2.0)
    resolved = resolve_issuer_key(
        presentation.issuer_header,
        presentation.issuer_payload,
        fetcher=fetcher,
        anchors=(),
        now=datetime.now(UTC),
    )
    verified = verify_presentation(
        presentation, resolved.key, KeyBindingCheck(audience=AUDIENCE, nonce=NONCE, now=now)
    )
    status = check_status(
        verified.status,
        credential_issuer=resolved,
        fetcher=fetcher,
        anchors=(),
        now=datetime.now(UTC),
    )
    return verified, status


def test_the_verifier_finds_the_key_through_jwt_vc_issuer_metadata_and_accepts(server):
    issuer, holder = Issuer(server, [generate_signing_key()]), generate("ES256")

    verified, status = verify_as_the_service(issuer.issue(holder, idx=90_210), holder)

    assert verified.issuer == issuer.identifier
    assert verified.claims["given_name"] == "Erika"
    assert status.valid
    assert server.hits[f"/.well-known/jwt-vc-issuer{ORG}"] >= 1


def test_revoking_flips_the_bit_the_next_fetch_sees(server):
    issuer, holder = Issuer(server, [generate_signing_key()]), generate("ES256")
    credential = issuer.issue(holder, idx=4242)
    assert verify_as_the_service(credential, holder)[1].valid

    issuer.publish_status([17, 4242])

    status = verify_as_the_service(credential, holder)[1]
    assert (status.revoked, status.idx) == (True, 4242)
    assert status.reason == "Credential has been revoked by its issuer"


def test_a_credential_signed_with_an_older_published_key_still_verifies(server):
    current, previous = generate_signing_key(), generate_signing_key()
    issuer, holder = Issuer(server, [current, previous]), generate("ES256")

    verified, status = verify_as_the_service(issuer.issue(holder, 5, key=previous), holder)

    assert verified.header["kid"] == issuer_jwk(previous)["kid"]
    assert status.valid


def test_a_key_no_longer_published_is_not_found(server):
    issuer, holder = Issuer(server, [generate_signing_key()]), generate("ES256")

    with pytest.raises(TrustError, match="no signing key with kid"):
        verify_as_the_service(issuer.issue(holder, 5, key=generate_signing_key()), holder)
