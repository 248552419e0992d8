"""Wallet attestations (OAuth 2.0 Attestation-Based Client Authentication, HAIP 1.0 §4.3) at
the PAR and token endpoints, and key attestations (OpenID4VCI 1.0 Appendix D, HAIP 1.0 §4.5)
at the credential endpoint, anchored in a trust source of wallet providers. The negatives of
the issuer test plans are rows of the table in test_issuance_authorization_code.py."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from issuance.attestation_support import (
    WalletProvider,
    attestation_headers,
    set_wallet_attestation,
    trust,
)
from issuance.authcode_support import CLIENT_ID, AuthCodeWallet
from issuance.issuance_support import Wallet, issue, make_org
from issuance.test_issuance_presentation import present
from trust.trust_support import LocalServer
from trust_sources.flows import run_jobs
from trust_sources.sources_support import lote_jws, make_party


def _attested(provider: WalletProvider):
    return lambda url: attestation_headers(provider, url.rsplit("/", 1)[0], CLIENT_ID)


def _require_key_attestations(client, org) -> None:
    changed = client.put(
        f"/schemas/{org.schema_id}", json={"key_attestations_required": True}, headers=org.headers
    )
    assert changed.status_code == 200, changed.get_json()
    assert changed.get_json()["key_attestations_required"] is True


def test_metadata_follows_the_wallet_attestation_setting(app, client) -> None:
    org = make_org(app)
    metadata = f"/.well-known/oauth-authorization-server/issuers/{org.id}"

    def methods() -> list[str]:
        return client.get(metadata).get_json()["token_endpoint_auth_methods_supported"]

    assert methods() == ["none", "attest_jwt_client_auth"]  # optional, the default
    assert client.get(f"/organizations/{org.id}", headers=org.headers).get_json()[
        "wallet_attestation"
    ] == ("optional")
    set_wallet_attestation(client, org, "required")
    assert methods() == ["attest_jwt_client_auth"]
    assert client.get(metadata).get_json()["client_attestation_pop_signing_alg_values_supported"]
    set_wallet_attestation(client, org, "off")
    assert methods() == ["none"]
    wrong = client.put(
        f"/organizations/{org.id}/issuer",
        json={"wallet_attestation": "sometimes"},
        headers=org.headers,
    )
    assert wrong.status_code == 400


def test_an_attested_wallet_takes_a_credential_when_attestation_is_required(app, client) -> None:
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    set_wallet_attestation(client, org, "required")
    credential = issue(client, org)
    wallet = AuthCodeWallet(attest=_attested(provider))

    token = wallet.dpop_token(client, org, credential)

    issued = wallet.credential_request(
        client, org, token, wallet.credential_body(client, org, org.schema_id)
    )
    assert issued.status_code == 200, issued.get_json()


def test_a_pop_is_accepted_once(app, client) -> None:
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    credential = issue(client, org)
    headers = attestation_headers(provider, org.issuer, CLIENT_ID)
    wallet = AuthCodeWallet(attest=lambda url: headers)

    first = wallet.par(client, org, credential)
    again = wallet.par(client, org, credential)

    assert first.status_code == 201, first.get_json()
    assert again.status_code == 401
    assert again.get_json() == {
        "error": "invalid_client",
        "error_description": "This client attestation PoP was already used",
    }


def test_with_attestation_off_the_headers_are_not_read(app, client) -> None:
    org = make_org(app)
    set_wallet_attestation(client, org, "off")
    credential = issue(client, org)
    untrusted = WalletProvider()  # no trust source: it would be refused if read
    wallet = AuthCodeWallet(attest=_attested(untrusted))

    assert wallet.par(client, org, credential).status_code == 201


def test_the_pre_authorized_code_checks_an_attestation_too(app, client) -> None:
    from issuance.issuance_support import code_of, offer_of

    org = make_org(app)
    set_wallet_attestation(client, org, "required")
    credential = issue(client, org)
    form = {
        "grant_type": "urn:ietf:params:oauth:grant-type:pre-authorized_code",
        "pre-authorized_code": code_of(offer_of(client, credential)),
    }
    refused = client.post(org.path("/token"), data=form)
    assert refused.status_code == 401
    provider = WalletProvider()
    trust(client, org, provider)
    taken = client.post(
        org.path("/token"), data=form, headers=attestation_headers(provider, org.issuer, "w-1")
    )
    assert taken.status_code == 200, taken.get_json()


def test_wallet_provider_sources_do_not_anchor_credential_issuers(app, client) -> None:
    org = make_org(app)
    source = trust(client, org, WalletProvider())
    assert source["kind"] == "WALLET_PROVIDERS"
    refused = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": org.schema_id,
            "claims": ["degree"],
            "trust_sources": [source["id"]],
        },
        headers=org.headers,
    )
    assert refused.status_code == 400, refused.get_json()
    assert "wallet providers" in refused.get_json()["error"]


# -- key attestations -------------------------------------------------------------------------


def test_key_attestations_required_shows_in_the_metadata(app, client) -> None:
    org = make_org(app)
    _require_key_attestations(client, org)
    metadata = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()
    proof_types = metadata["credential_configurations_supported"][org.schema_id][
        "proof_types_supported"
    ]
    assert proof_types["jwt"]["key_attestations_required"] == {}
    assert proof_types["attestation"]["key_attestations_required"] == {}


def test_a_key_attestation_in_the_proof_header(app, client) -> None:
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    _require_key_attestations(client, org)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    token = wallet.dpop_token(client, org, credential)

    other = Wallet()
    nonce = wallet.nonce(client, org)
    not_this_key = wallet.proof(
        org.issuer, nonce, key_attestation=provider.key_attestation([other.key], nonce)
    )
    body = {"credential_configuration_id": org.schema_id, "proofs": {"jwt": [not_this_key]}}
    refused = wallet.credential_request(client, org, token, body)
    assert refused.status_code == 400
    assert refused.get_json()["error_description"] == (
        "The key attestation does not attest the proof's key"
    )

    nonce = wallet.nonce(client, org)
    proof = wallet.proof(
        org.issuer, nonce, key_attestation=provider.key_attestation([wallet.key], nonce)
    )
    body = {"credential_configuration_id": org.schema_id, "proofs": {"jwt": [proof]}}
    issued = wallet.credential_request(client, org, token, body)
    assert issued.status_code == 200, issued.get_json()


def test_the_attestation_proof_type(app, client) -> None:
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    _require_key_attestations(client, org)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    token = wallet.dpop_token(client, org, credential)

    untrusted = WalletProvider().key_attestation([wallet.key], wallet.nonce(client, org))
    body = {"credential_configuration_id": org.schema_id, "proofs": {"attestation": [untrusted]}}
    refused = wallet.credential_request(client, org, token, body)
    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_proof"

    attested = provider.key_attestation([wallet.key], wallet.nonce(client, org))
    body = {"credential_configuration_id": org.schema_id, "proofs": {"attestation": [attested]}}
    issued = wallet.credential_request(client, org, token, body)
    assert issued.status_code == 200, issued.get_json()
    sd_jwt = issued.get_json()["credentials"][0]["credential"]
    payload = json.loads(_b64(sd_jwt.split(".")[1]))
    assert payload["cnf"]["jwk"]["x"] == wallet.public["x"]


def test_an_attestation_of_three_keys_gives_three_credentials_each_bound_to_its_key(
    app, client
) -> None:
    """OpenID4VCI 1.0 Appendix F.3: "The Credential Issuer SHOULD issue a Credential for each
    cryptographic public key specified in the attested_keys claim"."""
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    _require_key_attestations(client, org)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    token = wallet.dpop_token(client, org, credential)
    keys = [Wallet() for _ in range(3)]

    attested = provider.key_attestation([k.key for k in keys], wallet.nonce(client, org))
    body = {"credential_configuration_id": org.schema_id, "proofs": {"attestation": [attested]}}
    issued = wallet.credential_request(client, org, token, body)

    assert issued.status_code == 200, issued.get_json()
    payloads = [
        json.loads(_b64(item["credential"].split(".")[1]))
        for item in issued.get_json()["credentials"]
    ]
    assert [p["cnf"]["jwk"]["x"] for p in payloads] == [k.public["x"] for k in keys]
    entries = {p["status"]["status_list"]["idx"] for p in payloads}
    assert len(entries) == 3  # a status list entry each
    digests = [frozenset(p["_sd"]) for p in payloads]
    assert len(set(digests)) == 3  # salts of their own


def test_an_attestation_of_more_keys_than_the_batch_size_is_refused(make_app) -> None:
    app = make_app(ISSUER_BATCH_SIZE=2)
    client = app.test_client()
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    _require_key_attestations(client, org)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    token = wallet.dpop_token(client, org, credential)

    keys = [Wallet().key for _ in range(3)]
    attested = provider.key_attestation(keys, wallet.nonce(client, org))
    body = {"credential_configuration_id": org.schema_id, "proofs": {"attestation": [attested]}}
    refused = wallet.credential_request(client, org, token, body)

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_credential_request"
    assert "batch_size is 2" in refused.get_json()["error_description"]


def test_a_key_attestation_in_the_proof_header_must_carry_the_c_nonce(app, client) -> None:
    """Appendix F.1: "If the Credential Issuer provided a c_nonce, the nonce claim in the key
    attestation MUST be set to a server-provided c_nonce"; this issuer always provides one."""
    org = make_org(app)
    provider = WalletProvider()
    trust(client, org, provider)
    credential = issue(client, org)
    wallet = AuthCodeWallet()
    token = wallet.dpop_token(client, org, credential)

    nonce = wallet.nonce(client, org)
    proof = wallet.proof(org.issuer, nonce, key_attestation=provider.key_attestation([wallet.key]))
    body = {"credential_configuration_id": org.schema_id, "proofs": {"jwt": [proof]}}
    refused = wallet.credential_request(client, org, token, body)

    assert refused.status_code == 400
    assert refused.get_json()["error"] == "invalid_proof"
    assert "nonce" in refused.get_json()["error_description"]


def _b64(part: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


# -- the OWF wallet ---------------------------------------------------------------------------


def test_the_owf_wallet_with_wallet_and_key_attestation_is_verified(serve) -> None:
    """The OpenWallet Foundation clients create the wallet attestation's PoPs and the key
    proof with the key attestation in its header; the credential then goes to VERIFIED at
    our own verifier."""
    from issuance.node_client import run

    served = serve(ISSUER_DPOP="required")
    client = served.app.test_client()
    org = make_org(served.app)
    provider = WalletProvider()
    trust(client, org, provider)
    set_wallet_attestation(client, org, "required")
    _require_key_attestations(client, org)
    wallet = Wallet()
    credential = issue(client, org)

    received = run(
        {
            "action": "receive_authorized",
            "offer_url": credential["offer_url"],
            "holder_private_jwk": json.loads(wallet.key.export_private()),
            "wallet_provider": {
                "private_jwk": json.loads(provider.key.export_private()),
                "x5c": provider.x5c(),
            },
            "key_attestation": True,
        }
    )

    assert received["token_type"] == "DPoP"
    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": org.schema_id,
            "claims": ["given_name", "degree"],
            "trusted_issuers": [credential["issuer"]],
        },
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()
    verified = present(
        client, org, wallet, verification.get_json()["id"], "graduate-1", received["credential"]
    )
    assert verified["status"] == "VERIFIED", verified


def test_the_owf_wallet_without_attestation_is_refused_when_required(serve) -> None:
    from issuance.node_client import run

    served = serve()
    client = served.app.test_client()
    org = make_org(served.app)
    set_wallet_attestation(client, org, "required")
    credential = issue(client, org)
    try:
        run({"action": "receive_authorized", "offer_url": credential["offer_url"]})
    except AssertionError as failed:
        assert "invalid_client" in str(failed)
    else:
        raise AssertionError("the wallet took a credential without an attestation")


# -- wallet providers from a signed List of Trusted Entities ---------------------------------

WALLET_SOLUTION = "http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance"
PID_ISSUANCE = "http://uri.etsi.org/19602/SvcType/PID/Issuance"
WALLET_PROVIDERS_LIST = "http://uri.etsi.org/19602/LoTEType/EUWalletProvidersList"
WITHDRAWN = "http://uri.etsi.org/19602/SvcStatus/withdrawn"


@pytest.fixture
def publisher() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()


def test_wallet_providers_from_a_signed_list_of_trusted_entities(make_app, publisher) -> None:
    """The EU list of wallet providers is an ETSI TS 119 602 List of Trusted Entities (JSON,
    JAdES-signed). Its WalletSolution/Issuance services anchor wallet attestations at the PAR
    and token endpoints; a provider it does not name, one it names for another service
    (a PID provider) and one whose service was withdrawn are refused ``invalid_client``."""
    app = make_app(TRUST_ALLOW_PRIVATE=True)  # the list is served on loopback over http
    client = app.test_client()
    org = make_org(app)
    listed, withdrawn, pid_provider, unlisted = (WalletProvider() for _ in range(4))
    signer = make_party("Wallet provider list signer")
    publisher.add(
        "/wallet-providers.jws",
        lote_jws(
            signer,
            [
                ("Listed wallet", WALLET_SOLUTION, listed.pki.ca),
                ("Withdrawn wallet", WALLET_SOLUTION, withdrawn.pki.ca),
                ("A PID provider", PID_ISSUANCE, pid_provider.pki.ca),
            ],
            sequence=7,
            list_type=WALLET_PROVIDERS_LIST,
            statuses={"Withdrawn wallet": WITHDRAWN},
        ),
    )
    added = client.post(
        "/trust/sources",
        json={
            "name": "EU wallet providers",
            "kind": "LIST_OF_TRUSTED_ENTITIES",
            "url": publisher.url("/wallet-providers.jws"),
            "signer_certificates": signer.pem,
        },
        headers=org.headers,
    )
    assert added.status_code == 201, added.get_json()
    run_jobs(app)
    kept = client.get(f"/trust/sources/{added.get_json()['id']}", headers=org.headers).get_json()
    assert (kept["sequence_number"], kept["certificate_count"], kept["last_error"]) == (7, 3, None)
    set_wallet_attestation(client, org, "required")

    wallet = AuthCodeWallet(attest=_attested(listed))
    code = wallet.code(client, org, issue(client, org))  # PAR accepted
    token = wallet.redeem(client, org, code)  # and the token request
    assert token.status_code == 200, token.get_json()
    issued = wallet.credential_request(
        client,
        org,
        token.get_json()["access_token"],
        wallet.credential_body(client, org, org.schema_id),
    )
    assert issued.status_code == 200, issued.get_json()

    def refusal(provider: WalletProvider) -> dict:
        refused = AuthCodeWallet(attest=_attested(provider)).par(client, org, issue(client, org))
        assert refused.status_code == 401, refused.get_json()
        assert refused.get_json()["error"] == "invalid_client"
        return refused.get_json()

    # Not named, or named for another service: no chain to any wallet provider it lists.
    for stranger in (unlisted, pid_provider):
        assert refusal(stranger)["error_description"] == (
            "Client attestation is not from a trusted wallet provider"
        )
    assert refusal(withdrawn)["error_description"].startswith(
        "Client attestation is not from a trusted wallet provider: Wallet provider certificate "
        "is not in the list of trusted entities 'EU wallet providers' (sequence 7): its service "
        "was withdrawn on "
    )
    # At the token endpoint too: a code pushed by a listed wallet, redeemed by an unlisted one.
    code = wallet.code(client, org, issue(client, org))
    wallet.attest = _attested(unlisted)
    refused = wallet.redeem(client, org, code)
    assert refused.status_code == 401
    assert refused.get_json()["error"] == "invalid_client"
