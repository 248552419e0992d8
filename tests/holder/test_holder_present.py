"""The holder answers our verifier's OpenID4VP requests over HTTP: it reads the request object,
matches the DCQL query, discloses only what is asked, binds the presentation with a key binding
JWT, and posts ``direct_post`` or, when the request asks, ``direct_post.jwt``."""

from __future__ import annotations

import json

import pytest
from holder_support import issue_with_pypi, lookup, open_individual

from app.holder.__main__ import run
from app.holder.presentation import present
from app.holder.store import Wallet
from app.holder.transport import HolderError


@pytest.fixture
def wallet(tmp_path) -> Wallet:
    return Wallet.open(tmp_path / "wallet.json")


def test_a_presentation_with_only_the_requested_claims_verifies(serve, wallet):
    served = serve()
    issue_with_pypi(wallet)
    opened = open_individual(served)

    result = present(opened.link, wallet)

    assert result["response_mode"] == "direct_post"
    assert result["verifier"].startswith("redirect_uri:")
    (shown,) = result["presented"]
    # given_name and family_name are wanted, birthdate and address.country are conditions:
    # the locality and the nationalities stay in the wallet.
    assert sorted(shown["disclosed"]) == ["birthdate", "country", "family_name", "given_name"]
    assert "redirect_uri" in result["response"]
    decision = lookup(served, opened)
    assert decision["status"] == "VERIFIED", decision
    assert decision["claims"]["given_name"] == "Erika"


def test_an_encrypted_response_is_sent_when_the_request_asks(serve, wallet):
    served = serve(RESPONSE_ENCRYPTION=True)
    issue_with_pypi(wallet)
    opened = open_individual(served)

    result = present(opened.link, wallet)

    assert result["response_mode"] == "direct_post.jwt"
    assert lookup(served, opened)["status"] == "VERIFIED"


def test_a_credential_failing_a_condition_is_presented_and_fails(serve, wallet):
    served = serve()
    issue_with_pypi(
        wallet,
        claims={
            "given_name": "Kim",
            "family_name": "Young",
            "birthdate": "2020-01-01",
            "address": {"country": "DE"},
        },
    )
    opened = open_individual(served)

    present(opened.link, wallet)

    decision = lookup(served, opened)
    assert decision["status"] == "FAILED"
    assert "birthdate" in decision["validation_error"]


def test_without_a_matching_credential_nothing_is_sent(serve, wallet):
    served = serve()
    issue_with_pypi(wallet, vct="urn:example:other:1")
    opened = open_individual(served)

    with pytest.raises(HolderError, match="answers query 'credential'"):
        present(opened.link, wallet)

    assert lookup(served, opened)["status"] == "REQUESTED"


def test_a_credential_missing_a_requested_claim_is_not_chosen(serve, wallet):
    served = serve()
    issue_with_pypi(wallet, claims={"given_name": "Erika", "birthdate": "1984-01-26"})
    opened = open_individual(served)

    with pytest.raises(HolderError, match="every claim"):
        present(opened.link, wallet)


def test_the_command_line_prints_json_and_exits_1_on_failure(serve, tmp_path, capsys):
    served = serve()
    path = tmp_path / "cli-wallet.json"
    issue_with_pypi(Wallet.open(path))
    opened = open_individual(served)

    status, result = run(["--wallet", str(path), "present", opened.link])
    assert status == 0, result
    assert json.loads(json.dumps(result))["presented"][0]["query"] == "credential"
    assert lookup(served, opened)["status"] == "VERIFIED"

    # A new, empty wallet has nothing to answer with: exit 1 and the reason, as JSON.
    status, result = run(["--wallet", str(tmp_path / "empty.json"), "present", opened.link])
    assert status == 1
    assert "no stored credential" in result["error"]


def test_a_signed_request_object_is_checked_against_its_certificate(serve, wallet, tmp_path):
    """``x509_san_dns:`` (§5.9.3): the holder checks the Request Object's signature with the
    leaf of ``x5c`` and that the leaf names the client ID, which is the response URI's host."""
    from signing_certificates import make_pki, write_files

    served = serve(host="localhost", **write_files(tmp_path, make_pki(("localhost",))))
    issue_with_pypi(wallet)
    opened = open_individual(served)

    result = present(opened.link, wallet)

    assert result["verifier"] == "x509_san_dns:localhost"
    assert lookup(served, opened)["status"] == "VERIFIED"


def test_a_signed_request_object_from_another_name_is_refused(serve, wallet, tmp_path):
    from signing_certificates import make_pki, write_files

    served = serve(host="localhost", **write_files(tmp_path, make_pki(("localhost",))))
    issue_with_pypi(wallet)
    opened = open_individual(served)
    # The same request, its link naming another client: §5.10.1 says stop.
    link = opened.link.replace("x509_san_dns%3Alocalhost", "x509_san_dns%3Aevil.example")

    with pytest.raises(HolderError, match="client_id differs"):
        present(link, wallet)
    assert lookup(served, opened)["status"] == "REQUESTED"


def test_an_x509_hash_request_fetched_by_post_carries_the_holders_nonce(serve, wallet, tmp_path):
    """``x509_hash:`` and ``request_uri_method=post`` (§5.10): the holder posts its metadata and
    a nonce, and accepts the Request Object only with that nonce, signed by the hashed leaf."""
    from signing_certificates import make_pki, write_files

    pki = make_pki(("localhost",))
    served = serve(
        host="localhost",
        REQUEST_CLIENT_ID_PREFIX="x509_hash",
        REQUEST_URI_METHOD="post",
        **write_files(tmp_path, pki),
    )
    issue_with_pypi(wallet)
    opened = open_individual(served)
    assert "request_uri_method=post" in opened.link

    result = present(opened.link, wallet)

    assert result["verifier"].startswith("x509_hash:")
    assert lookup(served, opened)["status"] == "VERIFIED"
