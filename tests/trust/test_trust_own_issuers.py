"""The deployment's own issuers (``app.trust.own``, ``app.statuslist.own``): which identifiers
and status lists are read through the injected readers, and that nothing else is.

The readers here are plain functions over a dict, the shape ``app.issuance.own`` gives them
from the database; the fetcher is the production one, refusing the loopback http base, so any
fetch would show as a fetch error.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from app.oid4vci.keys import public_jwk
from app.statuslist import StatusError, check_kept, check_status, reference_to_keep
from app.trust import Fetcher, OwnIssuers, ResolvedIssuer, TrustError, resolve_issuer_key

NOW = datetime(2026, 1, 1, tzinfo=UTC)
BASE = "http://127.0.0.1:8000"
ORG = uuid.UUID("6f1c1f7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f")
OTHER_ORG = uuid.UUID("0b7e7a0e-5a4d-4f8e-8c1b-9d2e3f4a5b6c")
ISS = f"{BASE}/issuers/{ORG}"
KEY = ec.generate_private_key(ec.SECP256R1())
JWK = public_jwk(KEY)
# Organization -> its published keys; (organization, list, index) -> status.
KEYS = {ORG: [JWK], OTHER_ORG: []}
REVOKED = {(ORG, 0, 7)}


def read_status(organization: uuid.UUID, number: int, idx: int) -> int | None:
    if organization not in KEYS or number != 0 or not 0 <= idx < 1024:
        return None
    return 1 if (organization, number, idx) in REVOKED else 0


OWN = OwnIssuers(BASE, KEYS.get, read_status)


def resolve(iss: str, kid: str | None = JWK["kid"], header: dict | None = None) -> ResolvedIssuer:
    return resolve_issuer_key(
        {"alg": "ES256", **({"kid": kid} if kid else {}), **(header or {})},
        {"iss": iss},
        fetcher=Fetcher(),
        anchors=[],
        now=NOW,
        own=OWN,
    )


def test_an_own_issuer_gets_its_published_key_without_a_fetch():
    resolved = resolve(ISS)

    assert resolved.identifier == ISS
    assert resolved.method == "jwt-vc-issuer"
    assert resolved.key.public_numbers() == KEY.public_key().public_numbers()


@pytest.mark.parametrize(
    "iss",
    [
        f"{BASE}/issuers/{uuid.uuid4()}",
        f"{BASE}/issuers/{str(ORG).upper()}",
        f"{BASE}/issuers/{{{ORG}}}",
        f"{BASE}/issuers/{ORG.hex}",
        f"{BASE}/issuers/{ORG}/",
        f"{BASE}/issuers/{ORG}/status-lists/0",
        f"{BASE}/issuers/",
    ],
)
def test_an_identifier_under_the_issuers_path_that_is_no_organization_fails_plainly(iss):
    with pytest.raises(TrustError) as refused:
        resolve(iss)

    assert refused.value.reason == f"Issuer {iss} is not an organization of this deployment"


def test_a_key_the_organization_does_not_publish_is_not_found():
    with pytest.raises(TrustError, match="no signing key with kid 'another'"):
        resolve(ISS, kid="another")
    with pytest.raises(TrustError, match="holds no signing key"):
        resolve(f"{BASE}/issuers/{OTHER_ORG}", kid=None)


@pytest.mark.parametrize(
    "iss", [f"http://localhost:8000/issuers/{ORG}", f"https://127.0.0.1:8000/issuers/{ORG}"]
)
def test_another_base_is_another_issuer_resolved_as_before(iss):
    with pytest.raises(TrustError) as refused:
        resolve(iss)
    # The http one is refused by the ordinary rules; the https one was fetched and refused.
    assert "not an organization of this deployment" not in refused.value.reason


def test_an_x5c_header_still_selects_the_chain():
    with pytest.raises(TrustError, match="x5c"):
        resolve(ISS, header={"x5c": "not a chain"})


def test_without_a_base_url_no_issuer_is_own():
    nowhere = OwnIssuers("", KEYS.get, read_status)
    assert not nowhere.names(ISS)
    assert not nowhere.names("/issuers/" + str(ORG))


# Status


def status(uri: str, idx: int, issuer: ResolvedIssuer | None = None):
    return check_status(
        {"status_list": {"uri": uri, "idx": idx}},
        credential_issuer=issuer or resolve(ISS),
        fetcher=Fetcher(),
        anchors=[],
        now=NOW,
        own=OWN,
    )


def test_the_own_list_is_read_as_it_is_now():
    assert status(f"{ISS}/status-lists/0", 3).valid
    revoked = status(f"{ISS}/status-lists/0", 7)
    assert revoked.revoked and revoked.reason == "Credential has been revoked by its issuer"


@pytest.mark.parametrize(
    ("uri", "idx", "reason"),
    [
        (f"{BASE}/issuers/{OTHER_ORG}/status-lists/0", 3, "is not a list of the credential's"),
        (f"{ISS}/status-lists/01", 3, "is not a list of the credential's"),
        (f"{ISS}/status-lists/x", 3, "is not a list of the credential's"),
        (f"{ISS}/status-lists/1", 3, "does not exist or has no entry 3"),
        (f"{ISS}/status-lists/0", 5000, "does not exist or has no entry 5000"),
    ],
)
def test_an_own_list_that_is_not_the_issuers_makes_no_statement(uri, idx, reason):
    with pytest.raises(StatusError, match=reason):
        status(uri, idx)


def test_a_list_elsewhere_is_fetched_as_before():
    with pytest.raises(StatusError, match="could not be fetched"):
        status("https://127.0.0.1:9/status-lists/0", 7)


def test_an_issuer_resolved_otherwise_never_reads_the_own_lists():
    """Only an issuer resolved as the deployment's own (its iss, or an x5c chain to its
    organization's root) reads the lists from the database."""
    by_did = ResolvedIssuer(ISS, KEY.public_key(), "did:web")
    with pytest.raises(StatusError, match="could not be fetched"):
        status(f"{ISS}/status-lists/0", 7, by_did)


def test_an_own_issuer_resolved_by_its_x5c_chain_reads_the_own_lists():
    by_chain = ResolvedIssuer(ISS, KEY.public_key(), "x5c")
    assert not status(f"{ISS}/status-lists/0", 7, by_chain).valid


# Kept references


def test_a_kept_own_reference_is_marked_and_read_where_no_base_is_configured():
    claim = {"status_list": {"uri": f"{ISS}/status-lists/0", "idx": 7}}
    kept = reference_to_keep(claim, resolve(ISS), OWN)
    assert kept is not None and kept["own"] is True
    nowhere = OwnIssuers("", KEYS.get, read_status)

    assert check_kept(kept, fetcher=Fetcher(), anchors=[], now=NOW, own=nowhere).revoked

    unmarked = {k: v for k, v in kept.items() if k != "own"}
    with pytest.raises(StatusError, match="could not be fetched"):
        check_kept(unmarked, fetcher=Fetcher(), anchors=[], now=NOW, own=nowhere)
    assert check_kept(unmarked, fetcher=Fetcher(), anchors=[], now=NOW, own=OWN).revoked


def test_another_issuers_reference_is_not_marked():
    claim = {"status_list": {"uri": "https://issuer.example/lists/0", "idx": 7}}
    other = ResolvedIssuer("https://issuer.example", KEY.public_key(), "jwt-vc-issuer")
    kept = reference_to_keep(claim, other, OWN)
    assert kept is not None and "own" not in kept
