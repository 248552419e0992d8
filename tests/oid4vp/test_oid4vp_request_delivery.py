"""How a request reaches the wallet (OpenID4VP 1.0 §5): unsigned by value in the link, signed by
reference under ``x509_san_dns:`` or ``x509_hash:``, fetched with GET or POST (§5.10).

Signatures are checked with joserfc and certificate hashes with hashlib, as a wallet would; the
presentations come from the npm SD-JWT library (tests/wallets.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
from urllib.parse import urlsplit

import pytest
from cryptography.hazmat.primitives import serialization
from factories import make_staff, make_verification
from joserfc import jws
from joserfc.jwk import ECKey
from signing_certificates import HOST, make_pki, write_files
from wallets import (
    Issuer,
    WalletRequest,
    dc_api_post,
    encrypt_response,
    link_parameters,
    node_presentation,
    post_encrypted_response,
    post_response,
    published_key,
    read_request,
)

BY_VALUE = {
    "client_id",
    "response_type",
    "response_mode",
    "response_uri",
    "nonce",
    "state",
    "dcql_query",
    "client_metadata",
}


def start(app, client):
    """A verification asking for names and an age, an individual, and its connection link."""
    verification = make_verification(
        client,
        make_staff(app),
        claims=["given_name", "family_name"],
        attributes=[{"attribute_id": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, link


def status_of(client, individual) -> str:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]


def verified_claims(token: str, leaf) -> dict:
    """The Request Object's claims once joserfc has checked its signature with ``leaf``."""
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 16_384
    verified = jws.deserialize_compact(
        token, ECKey.import_key(leaf.public_key()), registry=registry
    )
    return json.loads(verified.payload)


def fetched(client, link: str, **form: str):
    """What the request URI answers: GET, or POST with ``form`` (§5.10)."""
    path = urlsplit(link_parameters(link)["request_uri"]).path
    return client.post(path, data=form) if form else client.get(path)


def leaf_hash(leaf) -> str:
    digest = hashlib.sha256(leaf.public_bytes(serialization.Encoding.DER)).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@pytest.fixture
def pki():
    return make_pki()


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


# -- unsigned: by value --------------------------------------------------------------------------


def test_an_unsigned_link_carries_the_request_parameters_and_nothing_else(app, client):
    _, link = start(app, client)
    query = link_parameters(link)
    assert set(query) == BY_VALUE
    assert query["client_id"] == "redirect_uri:" + query["response_uri"]
    assert query["response_type"] == "vp_token"
    assert query["response_mode"] == "direct_post"
    # Compact JSON: no whitespace between members.
    for name in ("dcql_query", "client_metadata"):
        assert (
            json.dumps(json.loads(query[name]), separators=(",", ":"), ensure_ascii=False)
            == (query[name])
        )
    (credential,) = json.loads(query["dcql_query"])["credentials"]
    assert [claim["path"] for claim in credential["claims"]] == [
        ["given_name"],
        ["family_name"],
        ["birthdate"],
    ]


def test_the_by_value_parameters_are_those_of_the_request_object(app, client):
    """The same request either way: the request URI still serves it, with the JWT's claims."""
    _, link = start(app, client)
    query = link_parameters(link)
    request_id = urlsplit(query["response_uri"]).path.rsplit("/", 1)[1]
    token = client.get(f"/oid4vp/requests/{request_id}").get_data(as_text=True)
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    by_value = {
        name: json.loads(value) if name in ("dcql_query", "client_metadata") else value
        for name, value in query.items()
    }
    assert {name: claims[name] for name in BY_VALUE} == by_value
    assert {"iss", "aud", "iat", "exp"} <= set(claims)


def test_a_wallet_answering_the_by_value_link_is_verified(app, client, issuer):
    individual, link = start(app, client)
    request = read_request(client, link)
    assert request.token == ""
    assert post_response(client, request, node_presentation(request, issuer)).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


def test_an_encrypted_by_value_request_carries_its_key_and_is_answered(make_app, issuer):
    app = make_app(RESPONSE_ENCRYPTION=True)
    client = app.test_client()
    individual, link = start(app, client)
    request = read_request(client, link)
    assert request.claims["response_mode"] == "direct_post.jwt"
    (key,) = request.claims["client_metadata"]["jwks"]["keys"]
    assert key["alg"] == "ECDH-ES" and "d" not in key
    payload = {
        "vp_token": {"credential": [node_presentation(request, issuer)]},
        "state": request.state,
    }
    response = post_encrypted_response(client, request, encrypt_response(request, payload))
    assert response.status_code == 200, response.get_json()
    assert status_of(client, individual) == "VERIFIED"


def test_request_by_reference_keeps_unsigned_requests_at_the_request_uri(make_app, issuer):
    app = make_app(REQUEST_BY_REFERENCE=True)
    client = app.test_client()
    individual, link = start(app, client)
    assert set(link_parameters(link)) == {"client_id", "request_uri"}
    request = read_request(client, link)
    assert request.header == {"alg": "none", "typ": "oauth-authz-req+jwt"}
    assert post_response(client, request, node_presentation(request, issuer)).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


def test_posting_to_an_unsigned_request_uri_is_refused(app, client):
    _, link = start(app, client)
    request_id = read_request(client, link).request_id
    response = client.post(f"/oid4vp/requests/{request_id}", data={"wallet_nonce": "n-1"})
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST_URI_METHOD"


# -- signed: by reference, x509_san_dns and x509_hash ----------------------------------------


@pytest.mark.parametrize(
    ("settings", "method"),
    [({}, None), ({"REQUEST_URI_METHOD": "get"}, None), ({"REQUEST_URI_METHOD": "post"}, "post")],
)
def test_signed_links_stay_by_reference(make_app, tmp_path, pki, settings, method):
    app = make_app(**write_files(tmp_path, pki), **settings)
    _, link = start(app, app.test_client())
    query = link_parameters(link)
    expected = {"client_id": f"x509_san_dns:{HOST}", "request_uri": query["request_uri"]}
    if method:
        expected["request_uri_method"] = method
    assert query == expected


def test_x509_hash_names_the_leaf_by_its_sha256(make_app, tmp_path, pki, issuer):
    app = make_app(REQUEST_CLIENT_ID_PREFIX="x509_hash", **write_files(tmp_path, pki))
    client = app.test_client()
    individual, link = start(app, client)
    client_id = f"x509_hash:{leaf_hash(pki.leaf)}"
    assert link_parameters(link)["client_id"] == client_id
    request = read_request(client, link)
    claims = verified_claims(request.token, pki.leaf)
    assert claims["client_id"] == claims["iss"] == client_id
    assert (
        request.header["x5c"][0]
        == base64.b64encode(pki.leaf.public_bytes(serialization.Encoding.DER)).decode()
    )
    presentation = node_presentation(request, issuer, aud=client_id)
    assert post_response(client, request, presentation).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


def test_x509_hash_refuses_a_presentation_bound_to_the_dns_name(make_app, tmp_path, pki, issuer):
    app = make_app(REQUEST_CLIENT_ID_PREFIX="x509_hash", **write_files(tmp_path, pki))
    client = app.test_client()
    individual, link = start(app, client)
    request = read_request(client, link)
    presentation = node_presentation(request, issuer, aud=f"x509_san_dns:{HOST}")
    assert post_response(client, request, presentation).status_code == 200
    assert status_of(client, individual) == "FAILED"


def test_x509_hash_needs_no_dns_name_for_the_host(make_app, tmp_path):
    """The hash names the certificate itself, so its subjectAltNames are not checked."""
    pki = make_pki(dns_names=("elsewhere.example",))
    app = make_app(REQUEST_CLIENT_ID_PREFIX="x509_hash", **write_files(tmp_path, pki))
    _, link = start(app, app.test_client())
    assert link_parameters(link)["client_id"] == f"x509_hash:{leaf_hash(pki.leaf)}"


def test_the_holder_checks_an_x509_hash_request(make_app, tmp_path, pki):
    """The project's own holder reads x509_hash requests and refuses one naming another leaf."""
    from app.holder.presentation import HolderError, _request_object

    app = make_app(REQUEST_CLIENT_ID_PREFIX="x509_hash", **write_files(tmp_path, pki))
    client = app.test_client()
    _, link = start(app, client)
    request = read_request(client, link)
    assert _request_object(request.token)["client_id"] == request.client_id
    other = make_pki()
    forged = dict(request.claims, client_id=f"x509_hash:{leaf_hash(other.leaf)}")
    token = app.extensions["oid4vp_verifier"].client.request_object(forged)
    with pytest.raises(HolderError, match="not the one its client ID hashes"):
        _request_object(token)


# -- refusing to start -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "with_certificate", "message"),
    [
        ({"REQUEST_CLIENT_ID_PREFIX": "x509_sha256"}, False, "must be one of redirect_uri"),
        ({"REQUEST_CLIENT_ID_PREFIX": "x509_sha256"}, True, "must be one of redirect_uri"),
        ({"REQUEST_CLIENT_ID_PREFIX": "x509_hash"}, False, "x509_hash signs requests"),
        ({"REQUEST_CLIENT_ID_PREFIX": "x509_san_dns"}, False, "x509_san_dns signs requests"),
        ({"REQUEST_CLIENT_ID_PREFIX": "redirect_uri"}, True, "cannot sign requests"),
        ({"REQUEST_URI_METHOD": "post"}, False, "needs signed requests"),
        ({"REQUEST_URI_METHOD": "POST"}, True, "must be one of get, post"),
    ],
)
def test_a_setting_the_configuration_cannot_honour_refuses_to_start(
    make_app, tmp_path, pki, settings, with_certificate, message
):
    files = write_files(tmp_path, pki) if with_certificate else {}
    with pytest.raises(RuntimeError, match=message):
        make_app(**settings, **files)


def test_x509_san_dns_with_a_leaf_not_naming_the_host_refuses_to_start(make_app, tmp_path):
    pki = make_pki(dns_names=("elsewhere.example",))
    with pytest.raises(RuntimeError, match=r"REQUEST_CLIENT_ID_PREFIX is 'x509_san_dns'"):
        make_app(REQUEST_CLIENT_ID_PREFIX="x509_san_dns", **write_files(tmp_path, pki))


@pytest.mark.parametrize("prefix", ["", "redirect_uri"])
def test_redirect_uri_is_the_prefix_without_a_certificate(make_app, prefix):
    app = make_app(REQUEST_CLIENT_ID_PREFIX=prefix)
    _, link = start(app, app.test_client())
    assert link_parameters(link)["client_id"].startswith("redirect_uri:https://verity.test/")


# -- request_uri_method=post (§5.10) ---------------------------------------------------------


@pytest.fixture
def signed(make_app, tmp_path, pki):
    app = make_app(REQUEST_URI_METHOD="post", **write_files(tmp_path, pki))
    client = app.test_client()
    individual, link = start(app, client)
    return app, client, individual, link


def test_the_wallet_nonce_is_signed_into_the_request_object(signed, pki):
    _, client, _, link = signed
    response = fetched(client, link, wallet_nonce="qPmxiNFCR3QTm19POc8u")
    assert response.status_code == 200
    assert response.content_type == "application/oauth-authz-req+jwt"
    assert verified_claims(response.get_data(as_text=True), pki.leaf)["wallet_nonce"] == (
        "qPmxiNFCR3QTm19POc8u"
    )
    # A GET, or a POST without one, carries none.
    for answer in (fetched(client, link), fetched(client, link, wallet_metadata="{}")):
        assert "wallet_nonce" not in verified_claims(answer.get_data(as_text=True), pki.leaf)


SD_JWT = "dc+sd-jwt"


@pytest.mark.parametrize(
    ("metadata", "code", "sd_jwt_algs", "kb_jwt_algs"),
    [
        # What the wallet supports narrows what the request offers.
        (
            {"vp_formats_supported": {SD_JWT: {"sd-jwt_alg_values": ["ES256", "ES256K"]}}},
            None,
            ["ES256"],
            None,
        ),
        (
            {"vp_formats_supported": {SD_JWT: {"kb-jwt_alg_values": ["EdDSA", "ES384"]}}},
            None,
            None,
            ["ES384", "EdDSA"],
        ),
        ({"vp_formats_supported": {SD_JWT: {}, "mso_mdoc": {}}}, None, None, None),
        ({"client_id_prefixes_supported": ["x509_san_dns", "x509_hash"]}, None, None, None),
        ({"request_object_signing_alg_values_supported": ["ES256", "RS256"]}, None, None, None),
        ({"response_modes_supported": ["direct_post", "fragment"]}, None, None, None),
        # Parameters this verifier does not know are ignored (§10).
        ({"issuer": "https://wallet.example", "jwks": {"keys": []}, "x": [1]}, None, None, None),
        # Nothing in common: refused with the OpenID4VP error.
        ({"vp_formats_supported": {"mso_mdoc": {}}}, "VP_FORMATS_NOT_SUPPORTED", None, None),
        (
            {"vp_formats_supported": {SD_JWT: {"kb-jwt_alg_values": ["ES256K"]}}},
            "VP_FORMATS_NOT_SUPPORTED",
            None,
            None,
        ),
        ({"client_id_prefixes_supported": ["redirect_uri"]}, "INVALID_REQUEST", None, None),
        ({"request_object_signing_alg_values_supported": ["RS256"]}, "INVALID_REQUEST", None, None),
        ({"response_modes_supported": ["direct_post.jwt"]}, "INVALID_REQUEST", None, None),
        ({"vp_formats_supported": ["dc+sd-jwt"]}, "INVALID_REQUEST", None, None),
        ({"client_id_prefixes_supported": "x509_san_dns"}, "INVALID_REQUEST", None, None),
    ],
)
def test_the_wallets_metadata_is_honoured_or_refused_with_a_reason(
    signed, pki, metadata, code, sd_jwt_algs, kb_jwt_algs
):
    _, client, _, link = signed
    response = fetched(client, link, wallet_metadata=json.dumps(metadata), wallet_nonce="w-1")
    if code:
        assert response.status_code == 400
        assert response.get_json()["code"] == code
        assert response.get_json()["error"]
        return
    assert response.status_code == 200, response.get_json()
    claims = verified_claims(response.get_data(as_text=True), pki.leaf)
    offered = claims["client_metadata"]["vp_formats_supported"][SD_JWT]
    everything = ["ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256"]
    assert offered["sd-jwt_alg_values"] == (sd_jwt_algs or everything)
    assert offered["kb-jwt_alg_values"] == (kb_jwt_algs or everything)
    assert claims["wallet_nonce"] == "w-1"


@pytest.mark.parametrize(
    "form",
    [
        {"wallet_metadata": "{"},
        {"wallet_metadata": "[]"},
        {"wallet_metadata": '"text"'},
        {"wallet_nonce": "n" * 513},
        {"wallet_nonce": "a\x00b"},
        {"wallet_metadata": "[" * 200 + "]" * 200},
    ],
)
def test_malformed_wallet_parameters_are_refused(signed, form):
    _, client, _, link = signed
    response = fetched(client, link, **form)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_unknown_form_parameters_are_ignored(signed, pki):
    """§5.10: the verifier MUST ignore parameters it does not know; some wallets post their
    metadata's members one by one instead of inside ``wallet_metadata``."""
    _, client, _, link = signed
    response = fetched(
        client,
        link,
        vp_formats_supported=json.dumps({"mso_mdoc": {}}),
        client_id_prefixes_supported="redirect_uri",
    )
    assert response.status_code == 200
    claims = verified_claims(response.get_data(as_text=True), pki.leaf)
    assert "wallet_nonce" not in claims
    assert claims["client_id"] == f"x509_san_dns:{HOST}"


@pytest.fixture
def signed_encrypted(make_app, tmp_path, pki):
    app = make_app(
        REQUEST_URI_METHOD="post", RESPONSE_ENCRYPTION=True, **write_files(tmp_path, pki)
    )
    client = app.test_client()
    individual, link = start(app, client)
    return client, individual, link


@pytest.mark.parametrize(
    ("metadata", "code", "encs"),
    [
        ({}, None, ["A128GCM", "A256GCM"]),
        ({"authorization_encryption_enc_values_supported": ["A256GCM"]}, None, ["A256GCM"]),
        (
            {
                "authorization_encryption_alg_values_supported": ["ECDH-ES", "RSA-OAEP-256"],
                "authorization_encryption_enc_values_supported": ["A128GCM", "A192GCM"],
            },
            None,
            ["A128GCM"],
        ),
        (
            {"authorization_encryption_alg_values_supported": ["RSA-OAEP-256"]},
            "INVALID_REQUEST",
            None,
        ),
        (
            {"authorization_encryption_enc_values_supported": ["A192GCM", "A128CBC-HS256"]},
            "INVALID_REQUEST",
            None,
        ),
    ],
)
def test_encryption_fits_what_the_wallet_can_do(signed_encrypted, pki, metadata, code, encs):
    client, _, link = signed_encrypted
    response = fetched(client, link, wallet_metadata=json.dumps(metadata))
    if code:
        assert response.status_code == 400
        assert response.get_json()["code"] == code
        return
    claims = verified_claims(response.get_data(as_text=True), pki.leaf)
    assert claims["response_mode"] == "direct_post.jwt"
    assert claims["client_metadata"]["encrypted_response_enc_values_supported"] == encs


def test_a_posting_wallet_answers_with_the_encryption_it_named(signed_encrypted, pki, issuer):
    client, individual, link = signed_encrypted
    metadata = {"authorization_encryption_enc_values_supported": ["A256GCM"]}
    response = fetched(client, link, wallet_metadata=json.dumps(metadata), wallet_nonce="w-2")
    token = response.get_data(as_text=True)
    claims = verified_claims(token, pki.leaf)
    request = WalletRequest(
        request_id=urlsplit(claims["response_uri"]).path.rsplit("/", 1)[1],
        client_id=claims["client_id"],
        nonce=claims["nonce"],
        state=claims["state"],
        response_uri=claims["response_uri"],
        claims=claims,
        token=token,
    )
    payload = {
        "vp_token": {"credential": [node_presentation(request, issuer)]},
        "state": request.state,
    }
    compact = encrypt_response(request, payload, enc="A256GCM")
    assert post_encrypted_response(client, request, compact).status_code == 200
    assert status_of(client, individual) == "VERIFIED"


# -- the Digital Credentials API, signed (Appendix A.3.2) ------------------------------------


@pytest.mark.parametrize("prefix", ["x509_san_dns", "x509_hash"])
def test_a_signed_deployment_signs_its_dc_api_request(make_app, tmp_path, pki, issuer, prefix):
    app = make_app(
        REQUEST_CLIENT_ID_PREFIX=prefix, RESPONSE_ENCRYPTION=True, **write_files(tmp_path, pki)
    )
    client = app.test_client()
    individual, link = start(app, client)
    request_id = link_parameters(link)["request_uri"].rsplit("/", 1)[1]
    response = client.get(f"/oid4vp/dc-requests/{request_id}")
    assert response.headers["Cache-Control"] == "no-store"
    (entry,) = response.get_json()["requests"]
    assert entry["protocol"] == "openid4vp-v1-signed"
    assert set(entry["data"]) == {"request"}
    claims = verified_claims(entry["data"]["request"], pki.leaf)
    client_id = (
        f"x509_san_dns:{HOST}" if prefix == "x509_san_dns" else (f"x509_hash:{leaf_hash(pki.leaf)}")
    )
    assert claims["client_id"] == client_id
    assert claims["expected_origins"] == ["https://verity.test"]
    assert claims["response_mode"] == "dc_api.jwt"
    # No state over the API; the response key is the API's own, never the link's.
    assert "state" not in claims and "response_uri" not in claims
    (key,) = claims["client_metadata"]["jwks"]["keys"]
    assert key != published_key(read_request(client, link))
    assert claims["client_metadata"]["encrypted_response_enc_values_supported"] == [
        "A128GCM",
        "A256GCM",
    ]
    # Appendix A.4: the audience is the origin, even for signed requests.
    request = WalletRequest(
        request_id=request_id,
        client_id=claims["client_id"],
        nonce=claims["nonce"],
        state="",
        response_uri="",
        claims=claims,
    )
    presentation = node_presentation(request, issuer, aud="origin:https://verity.test")
    answer = dc_api_post(client, request, presentation, "https://verity.test")
    assert answer.get_json()["status"] == "VERIFIED"
    assert status_of(client, individual) == "VERIFIED"


def test_an_unsigned_deployment_keeps_the_unsigned_dc_api_request(app, client):
    _, link = start(app, client)
    request_id = read_request(client, link).request_id
    (entry,) = client.get(f"/oid4vp/dc-requests/{request_id}").get_json()["requests"]
    assert entry["protocol"] == "openid4vp-v1-unsigned"
    assert "client_id" not in entry["data"] and "request" not in entry["data"]
