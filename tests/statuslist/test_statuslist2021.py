"""StatusList2021 entries checked against lists in the Identus cloud agent's exact shape, made
and signed independently (statuslist2021_support) and served over HTTP by a local server, and
against two lists the agent itself produced."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from statuslist2021_support import (
    AGENT_ISSUER,
    DOCS_LIST,
    SDK_LIST,
    entry,
    flip_bit,
    sign_ed25519,
    sign_secp256k1,
    unsigned_list,
)
from trust.trust_support import LocalServer

from app.didcomm import prism
from app.statuslist import (
    INVALID,
    SUSPENDED,
    VALID,
    StatusError,
    bitstring_reference_to_keep,
    check_bitstring_status,
    check_kept,
)
from app.statuslist.jsonld import UnknownContext, canonize, load_document
from app.statuslist.ldproof import _data_uri_key
from app.statuslist.statuslist2021 import read_list
from app.trust.fetch import Fetcher, TTLCache
from app.trust.issuers import ResolvedIssuer

REVOKED = "Credential has been revoked by its issuer"
PATH = "/cloud-agent/credential-status/5d7c1c1e-1c4b-4a5e-9d1f-0b9c3c1f2a10"
ISSUER_DID = "did:prism:9b5118411248d9663b6ab15128fba8106511230ff654e7514cdcc4ce919bde9b"


def now() -> datetime:
    return datetime.now(UTC)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(allow_private=True, timeout=2.0, cache=TTLCache())


class Issuer:
    """An Identus-like issuer with a secp256k1 assertion key, publishing on the local server."""

    def __init__(self, server: LocalServer, did: str = ISSUER_DID) -> None:
        self.server = server
        self.did = did
        self.key = ec.generate_private_key(ec.SECP256K1())

    @property
    def url(self) -> str:
        return self.server.url(PATH)

    @property
    def resolved(self) -> ResolvedIssuer:
        # How the credential's own issuer came out of its verification: its DID and key.
        return ResolvedIssuer(self.did, self.key.public_key(), "did:jwk")

    def publish(self, document: dict[str, Any]) -> None:
        self.server.add(PATH, document)

    def signed(self, **options: Any) -> dict[str, Any]:
        return sign_secp256k1(unsigned_list(self.url, self.did, **options), self.key)

    def check(self, status: Any, fetcher: Fetcher):
        return check_bitstring_status(
            status, credential_issuer=self.resolved, fetcher=fetcher, anchors=(), now=now()
        )


@pytest.fixture
def issuer(server: LocalServer) -> Issuer:
    return Issuer(server)


# ------------------------------------------------------------------- the agent's own lists


@pytest.mark.parametrize("real", [SDK_LIST, DOCS_LIST], ids=["sdk-ts test list", "docs list"])
def test_lists_the_cloud_agent_signed_verify(real):
    document = copy.deepcopy(real.document)
    issuer = ResolvedIssuer(AGENT_ISSUER, _data_uri_key(real.key_method), "did:jwk")

    verified = read_list(document, document["id"], issuer, now())

    assert verified.purpose == "revocation"
    assert len(verified.bits) * 8 == 131_072


def test_the_sdk_test_lists_bits_are_read_as_the_sdk_reads_them():
    document = copy.deepcopy(SDK_LIST.document)
    issuer = ResolvedIssuer(AGENT_ISSUER, _data_uri_key(SDK_LIST.key_method), "did:jwk")

    bits = read_list(document, document["id"], issuer, now()).bits

    # IsCredentialRevoked.test.ts: indexes 1 and 2 revoked, 3 not.
    assert [bits[0] >> (7 - i) & 1 for i in (1, 2, 3)] == [1, 1, 0]


def test_a_bit_flipped_in_a_list_the_agent_signed_is_refused():
    document = flip_bit(SDK_LIST.document, 3)
    issuer = ResolvedIssuer(AGENT_ISSUER, _data_uri_key(SDK_LIST.key_method), "did:jwk")

    with pytest.raises(StatusError, match="does not verify"):
        read_list(document, document["id"], issuer, now())


# -------------------------------------------------------------------------- statements


@pytest.mark.parametrize("index", [7, "7"], ids=["number", "string"])
def test_a_clear_bit_means_valid(issuer: Issuer, fetcher: Fetcher, index):
    issuer.publish(issuer.signed(revoked=(3, 8)))

    result = issuer.check(entry(issuer.url, index), fetcher)

    assert (result.status, result.valid, result.reason) == (VALID, True, None)


def test_a_set_bit_means_revoked_with_the_usual_reason(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(issuer.signed(revoked=(7,)))

    result = issuer.check(entry(issuer.url, 7), fetcher)

    assert (result.status, result.revoked, result.reason) == (INVALID, True, REVOKED)


def test_index_zero_is_the_left_most_bit(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(issuer.signed(revoked=(0,)))

    assert issuer.check(entry(issuer.url, 0), fetcher).status == INVALID
    assert issuer.check(entry(issuer.url, 7), fetcher).status == VALID


def test_a_set_bit_in_a_suspension_list_means_suspended(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(issuer.signed(purpose="Suspension", revoked=(5,)))

    result = issuer.check(entry(issuer.url, 5, "suspension"), fetcher)

    assert (result.status, result.reason) == (SUSPENDED, "Credential is suspended by its issuer")


def test_the_w3id_context_is_read_too(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(issuer.signed(revoked=(2,), context="https://w3id.org/vc/status-list/2021/v1"))

    assert issuer.check(entry(issuer.url, 2), fetcher).reason == REVOKED


def test_an_eddsa_jcs_2022_list_is_read(server: LocalServer, fetcher: Fetcher):
    key = ed25519.Ed25519PrivateKey.generate()
    url = server.url(PATH)
    issuer = ResolvedIssuer(ISSUER_DID, key.public_key(), "did:jwk")
    server.add(PATH, sign_ed25519(unsigned_list(url, ISSUER_DID, revoked=(4,)), key))

    def check(index: int):
        status = entry(url, index)
        return check_bitstring_status(
            status, credential_issuer=issuer, fetcher=fetcher, anchors=(), now=now()
        )

    assert check(4).reason == REVOKED
    assert check(5).valid
    tampered = flip_bit(sign_ed25519(unsigned_list(url, ISSUER_DID), key), 5)
    server.add(PATH, tampered)
    with pytest.raises(StatusError, match="does not verify"):
        check_bitstring_status(
            entry(url, 5),
            credential_issuer=issuer,
            fetcher=Fetcher(allow_private=True, cache=TTLCache()),
            anchors=(),
            now=now(),
        )


def test_a_key_named_by_a_long_form_did_prism_url_is_resolved(
    server: LocalServer, fetcher: Fetcher
):
    made = prism.make()
    issuer = ResolvedIssuer(made.did, made.keys["issuing-0"].public_key(), "did:jwk")
    url = server.url(PATH)
    method = f"{made.did}#issuing-0"
    document = unsigned_list(url, made.did, revoked=(1,))
    server.add(PATH, sign_secp256k1(document, made.keys["issuing-0"], method=method))

    result = check_bitstring_status(
        entry(url, 1), credential_issuer=issuer, fetcher=fetcher, anchors=(), now=now()
    )

    assert result.reason == REVOKED


def test_a_verified_list_is_cached(issuer: Issuer, server: LocalServer, fetcher: Fetcher):
    issuer.publish(issuer.signed(revoked=(7,)))

    issuer.check(entry(issuer.url, 1), fetcher)
    issuer.check(entry(issuer.url, 7), fetcher)

    assert server.hits[PATH] == 1


def test_revocation_and_suspension_entries_are_both_read(issuer: Issuer, fetcher: Fetcher):
    revocation = issuer.signed(revoked=())
    issuer.publish(revocation)
    suspension_path = PATH + "-suspension"
    suspension_url = issuer.server.url(suspension_path)
    suspension = unsigned_list(suspension_url, issuer.did, purpose="Suspension", revoked=(3,))
    issuer.server.add(suspension_path, sign_secp256k1(suspension, issuer.key))

    status = [entry(issuer.url, 3), entry(suspension_url, 3, "Suspension")]

    assert issuer.check(status, fetcher).status == SUSPENDED


def test_a_kept_reference_reads_the_list_again_later(issuer: Issuer):
    issuer.publish(issuer.signed(revoked=()))
    kept = bitstring_reference_to_keep(entry(issuer.url, 3), issuer.resolved)
    kept = json.loads(json.dumps(kept))
    assert kept["entries"][0]["type"] == "StatusList2021Entry"
    assert check_kept(kept, fetcher=Fetcher(allow_private=True), anchors=(), now=now()).valid

    issuer.publish(issuer.signed(revoked=(3,)))

    later = check_kept(kept, fetcher=Fetcher(allow_private=True), anchors=(), now=now())
    assert later.reason == REVOKED


# ---------------------------------------------------------------------------- no statement


def _another_key(issuer: Issuer) -> dict:
    return sign_secp256k1(
        unsigned_list(issuer.url, issuer.did), ec.generate_private_key(ec.SECP256K1())
    )


def _another_issuer(issuer: Issuer) -> dict:
    other = "did:prism:0000000000000000000000000000000000000000000000000000000000000000"
    return sign_secp256k1(unsigned_list(issuer.url, other), issuer.key)


def _unknown_context(issuer: Issuer) -> dict:
    document = unsigned_list(issuer.url, issuer.did)
    document["@context"].append(issuer.server.url("/context"))
    return {"proof": issuer.signed()["proof"], **document}


def _undefined_member(issuer: Issuer) -> dict:
    document = issuer.signed()
    document["credentialSubject"]["ttl"] = 1
    return document


def _encoded_header(issuer: Issuer) -> dict:
    header = {"alg": "ES256K"}
    return sign_secp256k1(unsigned_list(issuer.url, issuer.did), issuer.key, header=header)


def _expired(issuer: Issuer) -> dict:
    document = unsigned_list(issuer.url, issuer.did)
    document["expirationDate"] = "2020-01-01T00:00:00Z"
    return sign_secp256k1(document, issuer.key)


def _jwt_instead(issuer: Issuer) -> str:
    return "eyJhbGciOiJFUzI1NksifQ.e30.c2ln"


NO_STATEMENT = [
    ("tampered", lambda i: flip_bit(i.signed(), 7), entry, "does not verify"),
    ("signed by another key", _another_key, entry, "not the credential issuer's"),
    ("another issuer's list", _another_issuer, entry, "another issuer than the credential"),
    ("unknown context", _unknown_context, entry, "context this service does not ship"),
    ("member outside the contexts", _undefined_member, entry, "subject is not a status list"),
    ("encoded-payload JWS", _encoded_header, entry, '"b64": false'),
    ("expired list", _expired, entry, "has expired"),
    ("not JSON", _jwt_instead, entry, "not a JSON document"),
    ("index past the end", lambda i: i.signed(), lambda u, _: entry(u, 131_072), "outside"),
    ("list shorter than 16KB", lambda i: i.signed(length=8192), entry, "fewer than the 131072"),
    (
        "suspension entry, revocation list",
        lambda i: i.signed(),
        lambda u, n: entry(u, n, "Suspension"),
        "not a suspension list",
    ),
    ("message purpose", lambda i: i.signed(), lambda u, n: entry(u, n, "message"), "neither"),
    ("negative index", lambda i: i.signed(), lambda u, _: entry(u, -1), "non-negative"),
]


@pytest.mark.parametrize(
    ("make_list", "make_entry", "reason"),
    [row[1:] for row in NO_STATEMENT],
    ids=[row[0] for row in NO_STATEMENT],
)
def test_no_statement_can_be_made(issuer: Issuer, fetcher: Fetcher, make_list, make_entry, reason):
    issuer.publish(make_list(issuer))

    with pytest.raises(StatusError) as refused:
        issuer.check(make_entry(issuer.url, 7), fetcher)

    assert reason in refused.value.reason
    assert issuer.server.hits["/context"] == 0


def test_an_unreachable_list_fails_closed(issuer: Issuer, fetcher: Fetcher):
    with pytest.raises(StatusError, match="could not be fetched"):
        issuer.check(entry(issuer.url, 7), fetcher)


def test_the_loader_serves_only_shipped_contexts(server: LocalServer):
    url = server.url("/context")
    server.add("/context", {"@context": {"x": "https://example.org/x"}})
    document = {"@context": url, "@id": "https://example.org/s", "x": "y"}

    with pytest.raises(UnknownContext, match="does not ship"):
        canonize(document)
    with pytest.raises(UnknownContext):
        load_document("https://www.w3.org/ns/credentials/v2")
    assert server.hits["/context"] == 0
