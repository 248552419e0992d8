"""Keys and DIDs for the VC-JWT tests, made once by the node wallet; a Fetcher that may reach
the loopback status list server; and that server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from trust.trust_support import LocalServer
from vcjwt_support import Parties, Party, close_wallet, make_parties

from app.trust.fetch import Fetcher


@pytest.fixture(scope="session", autouse=True)
def wallet() -> Iterator[None]:
    """The node wallet's process lives as long as the session that uses it."""
    yield
    close_wallet()


@pytest.fixture(scope="session")
def parties() -> Parties:
    issuer, other_issuer, holder, ed_holder, other_holder = make_parties(
        "P-256", "P-256", "P-256", "Ed25519", "P-256"
    )
    return Parties(
        Party(issuer, issuer["did_jwk"]),
        Party(other_issuer, other_issuer["did_jwk"]),
        Party(holder, holder["did_jwk"], f"{holder['did_jwk']}#0"),
        Party(
            ed_holder, ed_holder["did_key"], f"{ed_holder['did_key']}#{ed_holder['did_key'][8:]}"
        ),
        Party(other_holder, other_holder["did_jwk"]),
    )


@pytest.fixture
def fetcher() -> Fetcher:
    """Plain http and loopback allowed: the status lists live on a local test server."""
    return Fetcher(allow_private=True, timeout=2.0)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()
