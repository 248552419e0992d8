"""Signed Request Objects under the ``x509_san_dns:`` client identifier (OpenID4VP 1.0 §5.9.3).

A test CA and a leaf naming ``verity.test`` (the test deployment's host) are made with
``cryptography``; the served Request Object is checked the way a wallet would, with joserfc
for the signature and ``cryptography``'s X.509 path validation for the chain.
"""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.verification import PolicyBuilder, Store
from factories import make_staff, make_verification
from joserfc import jws
from joserfc.errors import BadSignatureError
from joserfc.jwk import ECKey
from signing_certificates import HOST, Pki, make_pki, write_files
from wallets import (
    Issuer,
    encrypt_response,
    node_presentation,
    post_encrypted_response,
    post_response,
    read_request,
)

from app import clock

CLIENT_ID = f"x509_san_dns:{HOST}"


@pytest.fixture
def pki() -> Pki:
    return make_pki()


@pytest.fixture
def signed_app(make_app, tmp_path, pki):
    return make_app(**write_files(tmp_path, pki))


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


def start(app, client):
    """A verification, an individual, its connection link and the request it points at."""
    staff = make_staff(app)
    created = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, link, read_request(client, link)


def status_of(client, individual) -> dict:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


def verify_signed(token: str, public_key, alg: str = "ES256") -> dict:
    """Check the Request Object's signature with joserfc, as a wallet would, and read it."""
    registry = jws.JWSRegistry(algorithms=[alg])
    registry.max_header_length = 16_384  # x5c makes headers longer than joserfc's default
    verified = jws.deserialize_compact(token, ECKey.import_key(public_key), registry=registry)
    return json.loads(verified.payload)


def der_b64(cert: x509.Certificate) -> str:
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


# -- the request object -----------------------------------------------------------------------


def test_the_request_object_is_signed_by_the_leaf_key_with_the_chain(signed_app, pki):
    client = signed_app.test_client()
    _, _, request = start(signed_app, client)
    assert request.header["typ"] == "oauth-authz-req+jwt"
    assert request.header["alg"] == "ES256"
    assert request.header["x5c"] == [der_b64(pki.leaf), der_b64(pki.ca)]
    assert verify_signed(request.token, pki.leaf.public_key()) == request.claims
    assert request.claims["client_id"] == CLIENT_ID
    assert urlsplit(request.claims["response_uri"]).hostname == HOST
    assert request.claims["response_mode"] == "direct_post"


def test_a_wallet_validates_the_chain_in_x5c_for_the_client_ids_name(signed_app, pki):
    """What §5.9.3 asks of the wallet: the x5c chain leads to its anchor, for that DNS name."""
    client = signed_app.test_client()
    _, _, request = start(signed_app, client)
    leaf, *intermediates = [
        x509.load_der_x509_certificate(base64.b64decode(entry)) for entry in request.header["x5c"]
    ]
    verifier = (
        PolicyBuilder()
        .store(Store([pki.ca]))
        .build_server_verifier(x509.DNSName(request.client_id.removeprefix("x509_san_dns:")))
    )
    chain = verifier.verify(leaf, intermediates)
    assert chain[-1] == pki.ca
    with pytest.raises(BadSignatureError):
        verify_signed(request.token, make_pki().leaf_key.public_key())


def test_the_links_client_id_is_the_request_objects(signed_app):
    client = signed_app.test_client()
    _, link, request = start(signed_app, client)
    params = parse_qs(urlsplit(link).query)
    assert params["client_id"] == [CLIENT_ID]
    assert params["client_id"][0] == request.claims["client_id"]


def test_unsigned_redirect_uri_requests_stay_the_default(client, app):
    _, link, request = start(app, client)
    assert "request_uri" not in parse_qs(urlsplit(link).query)
    assert request.token == ""
    assert request.client_id == f"redirect_uri:{request.response_uri}"
    assert parse_qs(urlsplit(link).query)["client_id"] == [request.client_id]


# -- presenting to a signed request ------------------------------------------------------------


def test_a_presentation_bound_to_the_x509_client_id_verifies(signed_app, issuer):
    client = signed_app.test_client()
    individual, _, request = start(signed_app, client)
    presentation = node_presentation(request, issuer, aud=CLIENT_ID)
    assert post_response(client, request, presentation).status_code == 200
    assert status_of(client, individual)["status"] == "VERIFIED"


def test_a_presentation_bound_to_the_redirect_uri_client_id_fails(signed_app, issuer):
    client = signed_app.test_client()
    individual, _, request = start(signed_app, client)
    old_client_id = f"redirect_uri:{request.response_uri}"
    presentation = node_presentation(request, issuer, aud=old_client_id)
    assert post_response(client, request, presentation).status_code == 200
    body = status_of(client, individual)
    assert body["status"] == "FAILED"
    assert "audience" in body["validation_error"]


def test_signed_requests_and_encrypted_responses_work_together(make_app, tmp_path, pki, issuer):
    both = make_app(RESPONSE_ENCRYPTION=True, **write_files(tmp_path, pki))
    client = both.test_client()
    individual, _, request = start(both, client)
    verify_signed(request.token, pki.leaf.public_key())
    assert request.claims["response_mode"] == "direct_post.jwt"
    payload = {
        "vp_token": {"credential": [node_presentation(request, issuer, aud=CLIENT_ID)]},
        "state": request.state,
    }
    response = post_encrypted_response(client, request, encrypt_response(request, payload))
    assert response.status_code == 200
    assert status_of(client, individual)["status"] == "VERIFIED"


def test_a_p384_key_signs_with_es384(make_app, tmp_path):
    pki = make_pki(curve=ec.SECP384R1())
    app = make_app(**write_files(tmp_path, pki))
    client = app.test_client()
    _, _, request = start(app, client)
    assert request.header["alg"] == "ES384"
    verify_signed(request.token, pki.leaf.public_key(), "ES384")


# -- refusing to start -------------------------------------------------------------------------


def test_a_leaf_without_the_public_hosts_name_refuses_to_start(make_app, tmp_path):
    pki = make_pki(dns_names=("other.example", "*.verity.test"))
    with pytest.raises(RuntimeError, match=r"no DNS subjectAltName 'verity\.test'"):
        make_app(**write_files(tmp_path, pki))


def test_a_leaf_without_dns_names_refuses_to_start(make_app, tmp_path):
    with pytest.raises(RuntimeError, match="no DNS subjectAltName"):
        make_app(**write_files(tmp_path, make_pki(dns_names=())))


def test_a_key_that_is_not_the_leafs_refuses_to_start(make_app, tmp_path, pki):
    stranger = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(RuntimeError, match="does not belong to the first"):
        make_app(**write_files(tmp_path, pki, key=stranger))


def test_a_chain_out_of_order_refuses_to_start(make_app, tmp_path, pki):
    with pytest.raises(RuntimeError, match="does not belong to the first"):
        make_app(**write_files(tmp_path, pki, chain=[pki.ca, pki.leaf]))
    other_ca = make_pki()
    with pytest.raises(RuntimeError, match="not issued by certificate 2"):
        make_app(**write_files(tmp_path, pki, chain=[pki.leaf, other_ca.ca]))


def test_a_non_ec_key_refuses_to_start(make_app, tmp_path, pki):
    from cryptography.hazmat.primitives.asymmetric import ed25519

    with pytest.raises(RuntimeError, match="EC key"):
        make_app(**write_files(tmp_path, pki, key=ed25519.Ed25519PrivateKey.generate()))


def test_one_file_without_the_other_refuses_to_start(make_app, tmp_path, pki):
    files = write_files(tmp_path, pki)
    with pytest.raises(RuntimeError, match="must be set together"):
        make_app(REQUEST_SIGNING_CERT_FILE=files["REQUEST_SIGNING_CERT_FILE"])


def test_a_missing_file_refuses_to_start(make_app, tmp_path):
    with pytest.raises(RuntimeError, match="cannot be read"):
        make_app(
            REQUEST_SIGNING_CERT_FILE=str(tmp_path / "absent.pem"),
            REQUEST_SIGNING_KEY_FILE=str(tmp_path / "absent.key"),
        )


def test_an_expired_leaf_refuses_to_start(make_app, tmp_path, pki):
    later = pki.leaf.not_valid_after_utc + timedelta(seconds=1)
    clock.set_source(lambda: later)
    with pytest.raises(RuntimeError, match="not now"):
        make_app(**write_files(tmp_path, pki))


def test_signing_without_a_public_url_refuses_to_start(make_app, tmp_path, pki):
    with pytest.raises(RuntimeError, match="public URL"):
        make_app(PUBLIC_URL="", **write_files(tmp_path, pki))
