"""DCQL ``trusted_authorities`` (type ``aki``, OpenID4VP 1.0 §6.1.1.1) on the credential query:
named exactly when every issuer the verification trusts is a certificate, so that a wallet
filtering on them never withholds a credential the verification would accept."""

from __future__ import annotations

import pytest
from factories import make_staff
from flows import add_source, make_verification, wallet_request
from sources_support import aki_of_a_leaf_under, make_party
from wallets import Issuer, dc_api_openid4vp_request

PID_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"
ROOT = make_party("Pinned root CA", ca=True)
OTHER_ROOT = make_party("Source root CA", ca=True)


def aki(party) -> str:
    return aki_of_a_leaf_under(party)


def credential_query(app, client, *, trusted_issuers=(), with_source=False) -> dict:
    staff = make_staff(app)
    sources = []
    if with_source:
        source = add_source(
            client, staff, {"name": "Our CAs", "kind": "PEM", "certificates": OTHER_ROOT.pem}
        )
        sources = [source["id"]]
    verification = make_verification(
        client,
        staff,
        schema_id=PID_SCHEMA,
        claims=["given_name"],
        attributes=[],
        trusted_issuers=list(trusted_issuers),
        trust_sources=sources,
    )
    request = wallet_request(client, verification)
    (query,) = request.claims["dcql_query"]["credentials"]
    # The browser API's request carries the same query.
    _, data = dc_api_openid4vp_request(client, request.request_id)
    assert data["dcql_query"]["credentials"] == [query]
    return query


def test_pinned_pem_certificates_alone_are_named(app, client):
    query = credential_query(app, client, trusted_issuers=[ROOT.pem])
    assert query["trusted_authorities"] == [{"type": "aki", "values": [aki(ROOT)]}]


def test_pinned_certificates_and_trust_sources_are_named_together(app, client):
    query = credential_query(app, client, trusted_issuers=[ROOT.pem], with_source=True)
    assert query["trusted_authorities"] == [{"type": "aki", "values": [aki(OTHER_ROOT), aki(ROOT)]}]


@pytest.mark.parametrize(
    "pins",
    [
        pytest.param((), id="nothing-pinned-any-issuer"),
        pytest.param((ROOT.pem, Issuer().did), id="a-did-beside-the-certificate"),
        pytest.param((ROOT.pem, "https://issuer.example"), id="a-url-beside-the-certificate"),
        pytest.param(("sha256:" + "ab" * 32,), id="a-bare-fingerprint"),
    ],
)
def test_no_authorities_when_an_issuer_trusted_has_no_key_identifier_to_name(app, client, pins):
    assert "trusted_authorities" not in credential_query(app, client, trusted_issuers=pins)


def test_a_did_beside_a_trust_source_names_no_authorities(app, client):
    query = credential_query(app, client, trusted_issuers=[Issuer().did], with_source=True)
    assert "trusted_authorities" not in query
