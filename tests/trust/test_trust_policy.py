"""Trusted-issuer policy: an empty list trusts any verified issuer; entries pin identifiers
exactly and certificates by PEM or SHA-256 fingerprint."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import hashes
from trust_support import Issued, did_jwk, ec_key, make_cert

from app.trust.errors import TrustError
from app.trust.issuers import ResolvedIssuer
from app.trust.policy import is_trusted, parse_pins, require_trusted

KEY = ec_key().public_key()
WEB = ResolvedIssuer("https://issuer.example/pid", KEY, "jwt-vc-issuer")


@pytest.fixture
def chain() -> dict[str, Issued]:
    root = make_cert("Root CA", ca=True)
    intermediate = make_cert("Issuing CA", issuer=root, ca=True)
    leaf = make_cert("Provider", issuer=intermediate, uris=["https://issuer.example/pid"])
    return {"root": root, "intermediate": intermediate, "leaf": leaf}


def x5c_issuer(chain: dict[str, Issued]) -> ResolvedIssuer:
    path = (chain["leaf"].cert, chain["intermediate"].cert, chain["root"].cert)
    return ResolvedIssuer("https://issuer.example/pid", KEY, "x5c", path)


def test_an_empty_list_trusts_any_verified_issuer() -> None:
    assert is_trusted(WEB, [])


def test_an_identifier_pins_exactly() -> None:
    assert is_trusted(WEB, ["https://other.example", "https://issuer.example/pid"])
    assert not is_trusted(WEB, ["https://issuer.example/pid/"])
    assert not is_trusted(WEB, ["https://ISSUER.example/pid"])


def test_a_did_pins_a_did_issuer() -> None:
    did = did_jwk(ec_key())
    issuer = ResolvedIssuer(did, KEY, "did:jwk")
    assert is_trusted(issuer, [did])
    assert not is_trusted(issuer, [did_jwk(ec_key())])


def test_a_pem_anchor_pins_every_chain_under_it(chain: dict[str, Issued]) -> None:
    assert is_trusted(x5c_issuer(chain), [chain["root"].pem])
    assert not is_trusted(x5c_issuer(chain), [make_cert("Other Root", ca=True).pem])


@pytest.mark.parametrize(
    "spell",
    [
        lambda digest: digest.hex(),
        lambda digest: digest.hex().upper(),
        lambda digest: ":".join(f"{b:02X}" for b in digest),
        lambda digest: "sha256:" + digest.hex(),
    ],
)
def test_an_anchor_fingerprint_pins_the_chain(chain: dict[str, Issued], spell) -> None:
    digest = chain["root"].cert.fingerprint(hashes.SHA256())
    assert is_trusted(x5c_issuer(chain), [spell(digest)])


def test_an_intermediate_pins_one_issuing_ca_under_a_shared_root(chain: dict[str, Issued]) -> None:
    assert is_trusted(x5c_issuer(chain), [chain["intermediate"].pem])
    sibling = make_cert("Sibling CA", issuer=chain["root"], ca=True)
    assert not is_trusted(x5c_issuer(chain), [sibling.pem])


def test_an_x5c_issuer_also_matches_its_identifier(chain: dict[str, Issued]) -> None:
    assert is_trusted(x5c_issuer(chain), ["https://issuer.example/pid"])


def test_a_certificate_pin_never_matches_an_issuer_without_a_chain(
    chain: dict[str, Issued],
) -> None:
    assert not is_trusted(WEB, [chain["root"].pem])


def test_entries_are_sorted_into_identifiers_and_fingerprints(chain: dict[str, Issued]) -> None:
    digest = chain["root"].cert.fingerprint(hashes.SHA256()).hex()
    pins = parse_pins(["https://issuer.example", digest, chain["intermediate"].pem])
    assert pins.identifiers == {"https://issuer.example"}
    assert pins.fingerprints == {
        digest,
        chain["intermediate"].cert.fingerprint(hashes.SHA256()).hex(),
    }


def test_a_malformed_pem_entry_is_an_error() -> None:
    with pytest.raises(ValueError):
        parse_pins(["-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"])


def test_require_trusted_names_the_refused_issuer() -> None:
    with pytest.raises(TrustError, match=r"Issuer https://issuer.example/pid is not among"):
        require_trusted(WEB, ["https://other.example"])
