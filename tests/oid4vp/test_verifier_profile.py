"""``VERIFIER_PROFILE=haip``: a deployment that promises HAIP 1.0 starts only when configured
for it, and otherwise says which setting to change."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from signing_certificates import make_pki, write_files

HAIP_SETTINGS = {
    "VERIFIER_PROFILE": "haip",
    "REQUEST_CLIENT_ID_PREFIX": "x509_hash",
    "RESPONSE_ENCRYPTION": True,
    "DC_API_RESPONSE_MODE": "dc_api.jwt",
}


@pytest.fixture
def signing(tmp_path) -> dict[str, str]:
    return write_files(tmp_path, make_pki())


def test_a_haip_configuration_starts_and_its_requests_are_haip(make_app, signing):
    app = make_app(**HAIP_SETTINGS, **signing)
    verifier = app.extensions["oid4vp_verifier"]
    assert verifier.client.prefix == "x509_hash"
    assert verifier.client.signing_alg == "ES256"
    assert verifier.passes_by_reference
    assert verifier.encryption is not None
    assert verifier.dc_api_response_mode == "dc_api.jwt"


@pytest.mark.parametrize(
    ("change", "setting"),
    [
        ({"RESPONSE_ENCRYPTION": False}, "RESPONSE_ENCRYPTION=1"),
        ({"DC_API_RESPONSE_MODE": "dc_api"}, "DC_API_RESPONSE_MODE=dc_api.jwt"),
        ({"REQUEST_CLIENT_ID_PREFIX": "x509_san_dns"}, "REQUEST_CLIENT_ID_PREFIX=x509_hash"),
        ({"REQUEST_CLIENT_ID_PREFIX": ""}, "REQUEST_CLIENT_ID_PREFIX=x509_hash"),
    ],
    ids=["direct_post", "plain-dc_api", "x509_san_dns", "prefix-unset"],
)
def test_each_setting_haip_does_not_allow_stops_the_start_naming_it(
    make_app, signing, change, setting
):
    with pytest.raises(RuntimeError, match="VERIFIER_PROFILE=haip") as refused:
        make_app(**{**HAIP_SETTINGS, **change}, **signing)
    assert setting in str(refused.value)


def test_unsigned_requests_stop_the_start(make_app):
    with pytest.raises(RuntimeError, match="REQUEST_SIGNING_CERT_FILE"):
        make_app(**{**HAIP_SETTINGS, "REQUEST_CLIENT_ID_PREFIX": ""})


def test_a_p384_signing_key_stops_the_start(make_app, tmp_path):
    files = write_files(tmp_path, make_pki(curve=ec.SECP384R1()))
    with pytest.raises(RuntimeError, match="ES256") as refused:
        make_app(**HAIP_SETTINGS, **files)
    assert "REQUEST_SIGNING_KEY_FILE" in str(refused.value)


def test_every_problem_is_named_at_once(make_app):
    with pytest.raises(RuntimeError) as refused:
        make_app(VERIFIER_PROFILE="haip", DC_API_RESPONSE_MODE="dc_api")
    message = str(refused.value)
    for setting in ("REQUEST_SIGNING_CERT_FILE", "RESPONSE_ENCRYPTION=1", "DC_API_RESPONSE_MODE"):
        assert setting in message


def test_an_unknown_profile_stops_the_start(make_app):
    with pytest.raises(RuntimeError, match="VERIFIER_PROFILE must be empty or haip"):
        make_app(VERIFIER_PROFILE="fapi")


def test_without_a_profile_any_configuration_starts(make_app):
    app = make_app(DC_API_RESPONSE_MODE="dc_api")
    assert app.extensions["oid4vp_verifier"].dc_api_response_mode == "dc_api"
