"""A status reference kept at the decision is read again later without the credential: the
same list, the same signer rules, against lists served by a real local server."""

from __future__ import annotations

import json

import pytest
from test_statuslist_check import did_issuer, list_claims, publish, serve_list, x5c_issuer
from trust_support import NOW, LocalServer, make_cert, sign, x5c

from app.statuslist import StatusError, check_kept, reference_to_keep
from app.trust.fetch import Fetcher, TTLCache


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(allow_private=True, timeout=2.0, cache=TTLCache())


@pytest.fixture
def pki():
    root = make_cert("Root CA", ca=True)
    leaf = make_cert("Provider", issuer=root, uris=["https://issuer.example/pid"])
    return {"root": root, "leaf": leaf}


def kept_for(idx: int, uri: str, issuer) -> dict:
    kept = reference_to_keep({"status_list": {"idx": idx, "uri": uri}}, issuer)
    assert kept is not None
    # What is kept is JSON: it goes through the database's JSON column.
    return json.loads(json.dumps(kept))


def test_a_kept_reference_reads_the_entry_again(server: LocalServer, fetcher: Fetcher) -> None:
    issuer = did_issuer(fetcher)
    uri = serve_list(server, issuer, [0, 1])
    assert check_kept(kept_for(0, uri, issuer.resolved), fetcher=fetcher, anchors=[], now=NOW).valid
    revoked = check_kept(kept_for(1, uri, issuer.resolved), fetcher=fetcher, anchors=[], now=NOW)
    assert revoked.revoked and revoked.reason == "Credential has been revoked by its issuer"


def test_an_x5c_issuer_signing_its_list_with_its_key_alone_is_still_recognised(
    server: LocalServer, fetcher: Fetcher, pki
) -> None:
    """No chain and no iss in the list: only the kept key can tell it is the issuer's."""
    uri = server.url("/lists/1")
    publish(server, sign(list_claims(uri, None, [1]), pki["leaf"].key, typ="statuslist+jwt"))
    kept = kept_for(0, uri, x5c_issuer(pki))
    assert kept["method"] == "x5c" and kept["issuer"] == "https://issuer.example/pid"
    assert check_kept(kept, fetcher=fetcher, anchors=[pki["root"].cert], now=NOW).revoked


def test_a_list_signed_by_someone_else_is_refused(server: LocalServer, fetcher: Fetcher, pki):
    other = make_cert("Other Provider", issuer=pki["root"], uris=["https://other.example"])
    uri = server.url("/lists/1")
    claims = list_claims(uri, "https://other.example", [0])
    publish(server, sign(claims, other.key, typ="statuslist+jwt", x5c=x5c(other)))
    with pytest.raises(StatusError, match="signed by another issuer"):
        check_kept(
            kept_for(0, uri, x5c_issuer(pki)), fetcher=fetcher, anchors=[pki["root"].cert], now=NOW
        )


def test_a_claim_without_a_reference_keeps_nothing(fetcher: Fetcher) -> None:
    issuer = did_issuer(fetcher).resolved
    assert reference_to_keep({"status_list": {"idx": -1, "uri": "x"}}, issuer) is None
    assert reference_to_keep("not a claim", issuer) is None


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"uri": None}, "uri is missing"),
        ({"key": "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n"}, "readable"),
        ({"method": "carrier pigeon"}, "names no issuer"),
        ({"issuer": 7}, "names no issuer"),
    ],
)
def test_a_damaged_reference_makes_no_statement(fetcher: Fetcher, change: dict, reason: str):
    issuer = did_issuer(fetcher)
    kept = {**kept_for(0, "https://issuer.example/lists/1", issuer.resolved), **change}
    with pytest.raises(StatusError, match=reason):
        check_kept(kept, fetcher=fetcher, anchors=[], now=NOW)
    for missing in ("uri", "idx", "issuer", "method", "key"):
        partial = {k: v for k, v in kept.items() if k != missing}
        with pytest.raises(StatusError, match=f"no {missing}"):
            check_kept(partial, fetcher=fetcher, anchors=[], now=NOW)
    with pytest.raises(StatusError):
        check_kept(None, fetcher=fetcher, anchors=[], now=NOW)
