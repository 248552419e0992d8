"""The holder takes a credential through OpenID4VCI 1.0 (pre-authorized code): offer by
reference, issuer and authorization server metadata at their path-inserted well-knowns, token,
nonce, a key proof, the 1.0 Credential Request; it checks the credential before keeping it, and
our verifier accepts it in a full OpenID4VP presentation, keys found through the issuer's
jwt-vc-issuer metadata and its status list read over HTTP.

The issuer here is a few routes on the product's protocol package with no database
(``small_issuer``), so the holder's side is tested whatever the service's issuer does.
"""

from __future__ import annotations

import pytest
import requests
from holder_support import issuing_organization, lookup, open_individual
from small_issuer import PID_VCT, SmallIssuer

from app.holder.issuance import receive, well_known
from app.holder.presentation import present
from app.holder.store import Wallet
from app.holder.transport import HolderError


@pytest.fixture
def wallet(tmp_path) -> Wallet:
    return Wallet.open(tmp_path / "wallet.json")


@pytest.fixture
def issuer(serve_wsgi) -> SmallIssuer:
    small = SmallIssuer()
    serve_wsgi(small.app)
    return small


def test_well_known_addresses_are_path_inserted():
    assert (
        well_known("https://verity.test/issuers/42", "openid-credential-issuer")
        == "https://verity.test/.well-known/openid-credential-issuer/issuers/42"
    )
    assert (
        well_known("https://issuer.test/", "oauth-authorization-server")
        == "https://issuer.test/.well-known/oauth-authorization-server"
    )


def test_receive_runs_the_pre_authorized_code_flow_and_stores_the_credential(issuer, wallet):
    result = receive(issuer.offer_link(), wallet)

    (received,) = result["received"]
    assert received["issuer"] == issuer.issuer
    assert received["vct"] == PID_VCT
    assert received["claims"]["given_name"] == "Erika"
    assert received["claims"]["address"] == {"country": "DE", "locality": "Berlin"}
    small = "/issuers/small"
    assert issuer.seen == [
        f"GET {small}/offers/" + issuer.seen[0].rsplit("/", 1)[1],
        f"GET /.well-known/openid-credential-issuer{small}",
        f"GET /.well-known/oauth-authorization-server{small}",
        f"POST {small}/token",
        f"POST {small}/nonce",
        f"POST {small}/credential",
        f"GET /.well-known/jwt-vc-issuer{small}",
    ]
    assert issuer.nonces == set()  # the nonce was used
    stored = Wallet.open(wallet.path).credentials
    assert [entry["vct"] for entry in stored] == [PID_VCT]


def test_the_received_credential_verifies_in_a_full_presentation(issuer, wallet, serve):
    served = serve()
    receive(issuer.offer_link(), wallet)
    opened = open_individual(served)

    result = present(opened.link, wallet)

    decision = lookup(served, opened)
    assert decision["status"] == "VERIFIED", decision
    assert decision["issuer"] == issuer.issuer
    # address.country needs the address disclosure (its value holds the country's digest);
    # the locality stays in the wallet.
    assert sorted(result["presented"][0]["disclosed"]) == [
        "address",
        "birthdate",
        "country",
        "family_name",
        "given_name",
    ]


def test_an_offer_with_a_transaction_code_needs_it_before_any_token_request(issuer, wallet):
    issuer.tx_code = "493817"
    link = issuer.offer_link()

    with pytest.raises(HolderError, match="needs a transaction code"):
        receive(link, wallet)
    assert not any(call.endswith("/token") for call in issuer.seen)

    result = receive(link, wallet, tx_code="493817")
    assert len(result["received"]) == 1


def test_an_invalid_nonce_answer_is_retried_once_with_a_fresh_nonce(issuer, wallet):
    """OpenID4VCI 1.0 §8.3.1.2: ``invalid_nonce`` tells the wallet to get a fresh one."""
    issuer.stale_nonces = 1

    receive(issuer.offer_link(), wallet)

    assert [call for call in issuer.seen if call.startswith("POST")] == [
        "POST /issuers/small/token",
        "POST /issuers/small/nonce",
        "POST /issuers/small/credential",
        "POST /issuers/small/nonce",
        "POST /issuers/small/credential",
    ]


def test_two_invalid_nonces_stop_the_holder(issuer, wallet):
    issuer.stale_nonces = 2

    with pytest.raises(HolderError, match="invalid_nonce"):
        receive(issuer.offer_link(), wallet)
    assert Wallet.open(wallet.path).credentials == []


def test_a_used_offer_is_refused_by_the_issuer_and_nothing_is_stored(issuer, wallet):
    link = issuer.offer_link()
    receive(link, wallet)

    with pytest.raises(HolderError, match="invalid_grant"):
        receive(link, wallet)
    assert len(Wallet.open(wallet.path).credentials) == 1


def test_plain_http_is_refused_outside_this_machine(wallet):
    link = "openid-credential-offer://?credential_offer_uri=http://issuer.example/offers/1"

    with pytest.raises(HolderError, match="must use https"):
        receive(link, wallet)


def test_our_issuers_credential_is_verified_by_our_verifier_on_one_deployment(serve, wallet):
    """The whole loop on one served app: the verifier fetches its own organization's issuer
    metadata and status list over HTTP while it decides (on SQLite, without waiting for its
    own write lock), with no special case for itself."""
    served = serve()
    claims = {"given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26"}
    staff, body = issuing_organization(served, claims)
    offer = requests.post(
        f"{served.base}/credentials",
        json=body,
        headers=staff.headers(),
        timeout=10,
    ).json()
    receive(offer["offer_url"], wallet)
    opened = open_individual(
        served,
        staff=staff,
        schema_id=body["schema_id"],
        claims=["given_name"],
        attributes=[{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
    )

    result = present(opened.link, wallet)

    assert sorted(result["presented"][0]["disclosed"]) == ["birthdate", "given_name"]
    decision = lookup(served, opened)
    assert decision["status"] == "VERIFIED", decision
    assert decision["issuer"] == offer["issuer"]


def test_the_link_alone_of_an_offer_whose_code_is_mailed_takes_nothing(serve, wallet):
    """A schema's ``authorization_code_by_mail``: the offer names no grant the link alone can
    redeem, so a holder of the link only, which runs the pre-authorized code flow, gets
    nothing and the credential stays offered."""
    served = serve()
    staff, body = issuing_organization(
        served, vct="urn:example:mailed", authorization_code_by_mail=True
    )
    offer = requests.post(
        f"{served.base}/credentials", json=body, headers=staff.headers(), timeout=10
    ).json()

    with pytest.raises(HolderError, match="no pre-authorized code grant"):
        receive(offer["offer_url"], wallet)

    assert Wallet.open(wallet.path).credentials == []
    shown = requests.get(
        f"{served.base}/credentials/{offer['id']}", headers=staff.headers(), timeout=10
    ).json()
    assert shown["status"] == "OFFERED"
