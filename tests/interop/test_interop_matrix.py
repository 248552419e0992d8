"""The interop matrix: a wallet library we did not write answers every deployment mode.

The OpenWallet Foundation's OpenID4VP client (npm ``@openid4vc/openid4vp``, the library Credo and
the wallets built on it use) is the wallet; its credential is an SD-JWT VC made with
``@sd-jwt/sd-jwt-vc``. Each cell runs the service as ``make run`` does (gunicorn on loopback, one
server per mode, all on one database of the run's own), opens an individual or a policy request
the way a backend does, lets the client follow the person's link (or the page's Digital
Credentials API request, with the page's origin), and then asks the authenticated lookup: the
cell passes only when it says VERIFIED. Test IDs read like the matrix:
``x509_hash-signed-direct_post.jwt-post-policy``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from interop_support import (
    HOST,
    PAYMENT,
    Deployment,
    Deployments,
    Mode,
    answer_dc_api,
    answer_link,
    dc_api_urls,
    interop_database,
    make_pki,
    payment_individual,
    wallet_link,
)
from iso_mdoc.iso_mdoc_support import MDL_SCHEMA_ID, decoded, wallet_answer
from mdoc.mdoc_support import make_iaca, pem_cert

MODES = [
    Mode("redirect_uri", "direct_post"),
    Mode("redirect_uri", "direct_post.jwt"),
    *(
        Mode(prefix, response_mode, method)
        for prefix in ("x509_san_dns", "x509_hash")
        for response_mode in ("direct_post", "direct_post.jwt")
        for method in ("get", "post")
    ),
]
SUBJECTS = ["individual", "policy"]


@pytest.fixture(scope="module")
def deployments(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployments]:
    """The servers of the selected cells start together; others start when a test asks."""
    selected = [
        item.callspec.params["mode"]
        for item in request.session.items
        if "mode" in getattr(getattr(item, "callspec", None), "params", {})
    ]
    directory: Path = tmp_path_factory.mktemp("interop")
    with interop_database(directory) as database_url:
        made = Deployments(directory, database_url, make_pki(directory))
        try:
            made.start(list(dict.fromkeys(selected)))
            yield made
        finally:
            made.close()


def link_for(deployment: Deployment, subject: str) -> tuple[str, str]:
    """The person's link, as the connect endpoint (individual) or their page (policy) gives it,
    and what the backend looks the outcome up by."""
    if subject == "individual":
        individual_id, customer_id = deployment.open_individual()
        return deployment.connect_link(individual_id), customer_id
    policy = deployment.open_policy()
    return wallet_link(deployment.page(policy["url"])), policy["id"]


def outcome(deployment: Deployment, subject: str, key: str) -> str:
    if subject == "individual":
        return deployment.individual_status(key)
    return deployment.policy_status(key)


def assert_answered(answer, deployment: Deployment) -> None:
    """The verifier took the response: 200 and the person's page to go back to."""
    assert answer.status == 200, answer.body
    assert answer.body["redirect_uri"].startswith(deployment.server.base + "/")
    assert "response_code=" in answer.body["redirect_uri"]


@pytest.mark.parametrize("subject", SUBJECTS)
@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.id)
def test_the_owf_client_answers(deployments: Deployments, mode: Mode, subject: str):
    deployment = deployments.get(mode)
    link, key = link_for(deployment, subject)
    sent = parse_qs(urlsplit(link).query)
    assert outcome(deployment, subject, key) == "REQUESTED"
    log_position = deployment.log_position()

    answer = answer_link(link, deployments.pki)

    assert_answered(answer, deployment)
    resolved = answer.request
    assert resolved["client_prefix"] == mode.prefix
    assert resolved["signed"] is mode.signed
    assert resolved["response_mode"] == mode.response_mode
    if mode.signed:
        assert resolved["send_by"] == "reference"
        assert resolved["request_object_typ"] == "oauth-authz-req+jwt"
        assert sent.get("request_uri_method", ["get"]) == [mode.request_uri_method]
        # The client fetched the Request Object once, with the method the link names.
        request_path = urlsplit(sent["request_uri"][0]).path
        assert deployment.methods_served(request_path, after=log_position) == [
            mode.request_uri_method.upper()
        ]
    else:
        assert resolved["send_by"] == "value"
        assert "request_uri" not in sent
    if mode.prefix == "x509_san_dns":
        assert resolved["client_id"] == f"x509_san_dns:{HOST}"
    if mode.prefix == "x509_hash":
        assert resolved["client_id"] == f"x509_hash:{deployments.pki.leaf_hash}"
    if mode.response_mode == "direct_post.jwt":
        assert resolved["jwe_header"]["alg"] == "ECDH-ES"
    assert outcome(deployment, subject, key) == "VERIFIED"


# The Digital Credentials API request is unsigned without a certificate and signed with one,
# whatever the response mode and request_uri_method of the links; its answer is encrypted
# (dc_api.jwt) unless DC_API_RESPONSE_MODE=dc_api.
DC_API_MODES = [
    Mode("redirect_uri", "direct_post"),
    Mode("x509_san_dns", "direct_post", "get"),
    Mode("x509_hash", "direct_post", "get"),
    Mode("redirect_uri", "direct_post", dc_api_response_mode="dc_api"),
]


def dc_api_id(mode: Mode) -> str:
    protocol = f"openid4vp-v1-signed-{mode.prefix}" if mode.signed else "openid4vp-v1-unsigned"
    return f"{protocol}-{mode.dc_api_response_mode}"


def dc_api_page(deployment: Deployment, subject: str) -> tuple[str, str]:
    """The person's page (its API button) and what the backend looks the outcome up by."""
    if subject == "individual":
        individual_id, key = deployment.open_individual()
        return deployment.page(f"/i/{individual_id}"), key
    policy = deployment.open_policy()
    return deployment.page(policy["url"]), policy["id"]


@pytest.mark.parametrize("subject", SUBJECTS)
@pytest.mark.parametrize("mode", DC_API_MODES, ids=dc_api_id)
def test_the_owf_client_answers_the_dc_api_request_with_the_page_origin(
    deployments: Deployments, mode: Mode, subject: str
):
    deployment = deployments.get(mode)
    page, key = dc_api_page(deployment, subject)
    protocol = "openid4vp-v1-signed" if mode.signed else "openid4vp-v1-unsigned"

    answer = answer_dc_api(deployment, page, [protocol], deployments.pki)

    assert answer.status == 200, answer.body
    resolved = answer.request
    assert resolved["protocol"] == protocol
    assert resolved["signed"] is mode.signed
    assert resolved["response_mode"] == mode.dc_api_response_mode
    if mode.dc_api_response_mode == "dc_api.jwt":
        # The client chose from what the request offered, and encrypted with ECDH-ES.
        assert resolved["encrypted_response_enc_values_supported"] == ["A128GCM", "A256GCM"]
        assert resolved["jwe_header"]["alg"] == "ECDH-ES"
        assert resolved["jwe_header"]["enc"] in ("A128GCM", "A256GCM")
    else:
        assert resolved.get("jwe_header") is None
    if mode.signed:
        assert resolved["client_prefix"] == mode.prefix
        assert resolved["request_object_typ"] == "oauth-authz-req+jwt"
    else:
        assert resolved["client_prefix"] == "origin"
        assert resolved["effective_client_id"] == f"origin:{deployment.origin}"
    assert answer.body["status"] == "VERIFIED"
    assert outcome(deployment, subject, key) == "VERIFIED"


def test_a_changed_dc_api_jwt_answer_is_refused_and_consumes_nothing(deployments: Deployments):
    """The OWF client's JWE with one character of its ciphertext changed: 400, and the
    request still takes the wallet's real answer."""
    deployment = deployments.get(DC_API_MODES[0])
    page, key = dc_api_page(deployment, "individual")

    changed = answer_dc_api(deployment, page, ["openid4vp-v1-unsigned"], None, tamper="ciphertext")

    assert (changed.status, changed.body["code"]) == (400, "INVALID_RESPONSE")
    assert outcome(deployment, "individual", key) == "REQUESTED"
    answer = answer_dc_api(deployment, page, ["openid4vp-v1-unsigned"], None)
    assert answer.body["status"] == "VERIFIED"


def test_a_replayed_dc_api_jwt_answer_is_refused(deployments: Deployments):
    deployment = deployments.get(DC_API_MODES[0])
    page, key = dc_api_page(deployment, "policy")

    answer = answer_dc_api(deployment, page, ["openid4vp-v1-unsigned"], None, replay=True)

    assert answer.body["status"] == "VERIFIED"
    assert answer.replay is not None
    assert (answer.replay["status"], answer.replay["body"]["code"]) == (400, "ALREADY_ANSWERED")
    assert outcome(deployment, "policy", key) == "VERIFIED"


# org-iso-mdoc (ISO/IEC 18013-7 Annex C), what Safari and Apple Wallet answer: an unsigned
# deployment's (the first DC API cell's server) and one that signs readerAuth.
ISO_MDOC_MODES = [DC_API_MODES[0], Mode("redirect_uri", "direct_post", reader_auth=True)]


def mdoc_individual(deployment: Deployment, iaca) -> tuple[str, str, str]:
    """An mDL verification pinned to ``iaca``'s root, made through the staff API, and one
    individual: (verification ID, individual ID, customer ID)."""
    made = deployment.call(
        "POST",
        "/verifications",
        json={
            "name": "Adult drivers",
            "description": "We check that you are of age.",
            "schema_id": MDL_SCHEMA_ID,
            "claims": ["given_name", "family_name"],
            "attributes": [{"name": "age_over_18", "operator": "EQUAL", "value": "true"}],
            "trusted_issuers": [pem_cert(iaca.root)],
        },
        headers=deployment.organization.staff,
    )
    assert made.status_code == 201, made.text
    customer_id = f"crm-{secrets.token_hex(6)}"
    individual = deployment.call(
        "POST",
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": made.json()["id"]},
    )
    assert individual.status_code == 201, individual.text
    return made.json()["id"], individual.json()["id"], customer_id


@pytest.mark.parametrize("mode", ISO_MDOC_MODES, ids=lambda mode: mode.id)
def test_the_auth0_mdl_wallet_answers_org_iso_mdoc_with_the_page_origin(
    deployments: Deployments, mode: Mode
):
    deployment = deployments.get(mode)
    iaca = make_iaca()
    verification_id, individual_id, customer_id = mdoc_individual(deployment, iaca)
    request_url, response_url = dc_api_urls(
        deployment.page(f"/i/{individual_id}"), deployment.server.base
    )
    fetched = deployment.call("GET", urlsplit(request_url).path)
    assert fetched.status_code == 200, fetched.text
    (request,) = [r["data"] for r in fetched.json()["requests"] if r["protocol"] == "org-iso-mdoc"]
    (doc_request,) = decoded(request["deviceRequest"])["docRequests"]
    assert ("readerAuth" in doc_request) is mode.reader_auth

    answer = wallet_answer(request, iaca, origin=deployment.origin)
    posted = deployment.call(
        "POST",
        urlsplit(response_url).path,
        json={"protocol": "org-iso-mdoc", "data": {"response": answer["response"]}},
        headers={"Origin": deployment.origin},
    )

    assert posted.status_code == 200, posted.text
    assert posted.json()["status"] == "VERIFIED"
    lookup = deployment.backend(
        "GET", f"/verifications/{verification_id}/individuals/{customer_id}"
    )
    assert lookup.json()["status"] == "VERIFIED"


def test_posted_wallet_metadata_and_nonce_reach_the_client(deployments: Deployments):
    """request_uri_method=post with the two parameters OpenID4VP 1.0 defines for it: the
    Request Object narrows the content encryptions to the wallet's and carries its nonce, which
    the client checks itself before answering."""
    mode = Mode("x509_hash", "direct_post.jwt", "post")
    deployment = deployments.get(mode)
    individual_id, customer_id = deployment.open_individual()
    link = deployment.connect_link(individual_id)
    metadata = {
        "vp_formats_supported": {
            "dc+sd-jwt": {"sd-jwt_alg_values": ["ES256"], "kb-jwt_alg_values": ["ES256"]}
        },
        "request_object_signing_alg_values_supported": ["ES256"],
        "authorization_encryption_alg_values_supported": ["ECDH-ES"],
        "authorization_encryption_enc_values_supported": ["A256GCM"],
    }
    nonce = secrets.token_urlsafe(16)

    answer = answer_link(link, deployments.pki, wallet_post={"metadata": metadata, "nonce": nonce})

    assert_answered(answer, deployment)
    assert answer.request["wallet_nonce"] == nonce
    assert answer.request["encrypted_response_enc_values_supported"] == ["A256GCM"]
    assert answer.request["jwe_header"]["enc"] == "A256GCM"
    assert deployment.individual_status(customer_id) == "VERIFIED"


def test_the_default_make_run_link_is_answered(deployments: Deployments):
    """No settings at all, as a newcomer's first ``make run``: the OWF client reads the link."""
    deployment = deployments.default()
    individual_id, customer_id = deployment.open_individual()
    link = deployment.connect_link(individual_id)

    answer = answer_link(link, None)

    assert_answered(answer, deployment)
    assert answer.request["client_prefix"] == "redirect_uri"
    assert answer.request["send_by"] == "value"
    assert answer.request["response_mode"] == "direct_post"
    assert deployment.individual_status(customer_id) == "VERIFIED"


# Transaction data (OpenID4VP 1.0 §5.1, Appendix B.3.3): by value and in a signed, encrypted
# request. The client parses the request's entries; its key binding hashes them, or not.
TRANSACTION_DATA_MODES = [
    Mode("redirect_uri", "direct_post"),
    Mode("x509_san_dns", "direct_post.jwt", "get"),
]


@pytest.mark.parametrize("confirmation", ["confirm", "omit", "wrong"])
@pytest.mark.parametrize("mode", TRANSACTION_DATA_MODES, ids=lambda mode: mode.id)
def test_the_owf_client_reads_transaction_data_and_only_its_confirmation_verifies(
    deployments: Deployments, mode: Mode, confirmation: str
):
    deployment = deployments.get(mode)
    customer_id = payment_individual(deployment)
    vid = deployment.organization.verification_id
    individual = deployment.backend("GET", f"/verifications/{vid}/individuals/{customer_id}")
    link = deployment.connect_link(individual.json()["id"])

    answer = answer_link(link, deployments.pki, transaction_data=confirmation)

    assert_answered(answer, deployment)
    (parsed,) = answer.request["transaction_data"]
    assert parsed == {
        **PAYMENT,
        "credential_ids": ["credential"],
        "transaction_data_hashes_alg": ["sha-256"],
    }
    found = deployment.backend("GET", f"/verifications/{vid}/individuals/{customer_id}").json()
    if confirmation == "confirm":
        assert found["status"] == "VERIFIED", found["validation_error"]
        assert found["transaction_data"] == [parsed]
        return
    assert found["status"] == "FAILED"
    assert found["validation_error"].startswith(
        "Transaction data 1 (urn:eudi:sca:payment:1) was not confirmed by the wallet"
    )
    assert found["transaction_data"] is None
