"""Each credential format is asked for the way OpenID4VP 1.0 Appendix B says."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.oid4vp.formats import JWT_VC_JSON, MSO_MDOC, CredentialType
from app.oid4vp.request import AuthorizationRequest, dcql_query
from app.oid4vp.wallet_metadata import WalletMetadataError, honour
from app.presentations.decide import READERS, Context, Rules, decide
from app.trust import Fetcher

MDL = CredentialType(
    MSO_MDOC,
    doctype="org.iso.18013.5.1.mDL",
    namespace="org.iso.18013.5.1",
    element_namespaces=(("domestic_category", "org.iso.18013.5.1.aamva"),),
)
DIPLOMA = CredentialType(JWT_VC_JSON, types=("VerifiableCredential", "UniversityDegree"))


def test_an_sd_jwt_vc_is_asked_for_by_its_vct_with_json_paths():
    query = dcql_query(CredentialType(vct="urn:eudi:pid:1"), ["given_name", "address.country"])
    assert query == {
        "credentials": [
            {
                "id": "credential",
                "format": "dc+sd-jwt",
                "meta": {"vct_values": ["urn:eudi:pid:1"]},
                "claims": [{"path": ["given_name"]}, {"path": ["address", "country"]}],
            }
        ]
    }


def test_an_mdoc_is_asked_for_by_doctype_with_namespace_and_element_paths_not_retained():
    (credential,) = dcql_query(MDL, ["age_over_18", "domestic_category"])["credentials"]
    assert credential["format"] == "mso_mdoc"
    assert credential["meta"] == {"doctype_value": "org.iso.18013.5.1.mDL"}
    assert credential["claims"] == [
        {"path": ["org.iso.18013.5.1", "age_over_18"], "intent_to_retain": False},
        {"path": ["org.iso.18013.5.1.aamva", "domestic_category"], "intent_to_retain": False},
    ]


def test_a_w3c_vc_is_asked_for_by_its_types_with_paths_under_credential_subject():
    (credential,) = dcql_query(DIPLOMA, ["degree.name"])["credentials"]
    assert credential["format"] == "jwt_vc_json"
    assert credential["meta"] == {"type_values": [["VerifiableCredential", "UniversityDegree"]]}
    assert credential["claims"] == [{"path": ["credentialSubject", "degree", "name"]}]


def request_for(credential: CredentialType) -> AuthorizationRequest:
    return AuthorizationRequest(
        response_uri="https://verifier.example/oid4vp/responses/1",
        request_uri="https://verifier.example/oid4vp/requests/1",
        nonce="n",
        state="s",
        credential=credential,
        claims=["age_over_18"],
        issued_at=0,
        expires_at=60,
    )


def test_client_metadata_offers_the_algorithms_of_the_format_asked_for():
    formats = request_for(MDL).client_metadata()["vp_formats_supported"]
    assert formats == {
        "mso_mdoc": {
            "issuerauth_alg_values": [-7, -9, -35, -36],
            "deviceauth_alg_values": [-7, -9, -35, -36],
        }
    }
    assert list(request_for(DIPLOMA).client_metadata()["vp_formats_supported"]) == ["jwt_vc_json"]


def test_a_wallet_that_does_not_support_the_format_asked_for_is_told_so():
    metadata = {"vp_formats_supported": {"dc+sd-jwt": {}}}
    with pytest.raises(WalletMetadataError) as refused:
        honour(request_for(MDL), metadata)
    assert (refused.value.error, refused.value.reason) == (
        "vp_formats_not_supported",
        "the wallet does not support mso_mdoc, the format this request asks for",
    )
    assert honour(request_for(MDL), {"vp_formats_supported": {"mso_mdoc": {}}})


def test_a_format_without_a_reader_is_refused_with_its_name(monkeypatch):
    monkeypatch.delitem(READERS, MSO_MDOC, raising=False)
    context = Context(audience="a", nonce="n", now=datetime.now(UTC), fetcher=Fetcher())
    decision = decide("o2F2", Rules(MDL, [], [], []), context)
    assert (decision.verified, decision.reason) == (
        False,
        "Credential format mso_mdoc is not one this verifier checks",
    )
