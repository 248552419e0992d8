"""An mso_mdoc verification end to end: the person's page hands out the wallet link, the
OpenWallet Foundation's @owf/mdoc answers the request it carries (its device signature over the
OpenID4VPHandover of that very request) by direct_post, and the backend reads the decision in
the authenticated lookup. The IACA root is the verification's own pinned PEM."""

from __future__ import annotations

from datetime import timedelta

import pytest
from factories import make_apikey, make_staff, make_verification
from mdoc_support import (
    MDL,
    MDL_ELEMENTS,
    MDL_NS,
    NOW,
    ORIGIN,
    MdocJob,
    make_iaca,
    pem_cert,
    present,
)
from pages.pages_support import wallet_link
from wallets import (
    WalletRequest,
    dc_api_key,
    dc_api_post,
    jwk_thumbprint,
    post_response,
    read_request,
)

MDL_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"


def start(app, client, iaca, attributes: list[dict]):
    """A verification of the shipped mDL schema pinned to ``iaca``'s root, one individual, and
    the request behind its page's wallet link."""
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        schema_id=MDL_SCHEMA_ID,
        claims=["given_name", "family_name"],
        attributes=attributes,
        trusted_issuers=[pem_cert(iaca.root)],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}")
    assert page.status_code == 200
    request = read_request(client, wallet_link(page.get_data(as_text=True)))
    return staff, verification, request


def answer(request: WalletRequest, iaca, **job) -> str:
    """@owf/mdoc's device response to this request: client_id, nonce and response_uri from it."""
    return present(
        MdocJob(
            iaca,
            client_id=request.client_id,
            nonce=request.nonce,
            response_uri=request.response_uri,
            disclose={MDL_NS: ["given_name", "family_name", "age_over_18", "birth_date"]},
            **job,
        )
    )


def lookup(app, client, staff, verification) -> dict:
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/crm-1", headers={"apikey": key}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


ADULT = [
    {"name": "age_over_18", "operator": "EQUAL", "value": "true"},
    {"name": "birth_date", "operator": "AGE_AT_LEAST", "value": "18"},
]


def test_the_request_asks_for_an_mdl_by_doctype_with_namespace_element_paths(app, client):
    _, _, request = start(app, client, make_iaca(), ADULT)

    (query,) = request.claims["dcql_query"]["credentials"]
    assert query["format"] == "mso_mdoc"
    assert query["meta"] == {"doctype_value": MDL}
    assert {"path": [MDL_NS, "given_name"], "intent_to_retain": False} in query["claims"]
    assert "mso_mdoc" in request.claims["client_metadata"]["vp_formats_supported"]


def test_the_persons_page_names_the_document_asked_for(app, client):
    staff = make_staff(app)
    verification = make_verification(
        client, staff, schema_id=MDL_SCHEMA_ID, claims=["given_name"], attributes=[]
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}").get_data(as_text=True)
    assert "your Mobile driving licence, from your wallet" in page


def test_an_mdl_verifies_with_its_claims_and_conditions_by_type(app, client):
    iaca = make_iaca()
    staff, verification, request = start(app, client, iaca, ADULT)

    assert post_response(client, request, answer(request, iaca)).status_code == 200

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == ("VERIFIED", None)
    assert body["claims"] == {
        "given_name": "Erika",
        "family_name": "Mustermann",
        "age_over_18": True,
        "birth_date": "1990-04-12",
    }
    assert body["issuer"]


def test_an_unmet_condition_on_the_birth_date_fails_naming_it(app, client):
    iaca = make_iaca()
    older = [{"name": "birth_date", "operator": "AGE_AT_LEAST", "value": "99"}]
    staff, verification, request = start(app, client, iaca, older)

    post_response(client, request, answer(request, iaca))

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == (
        "FAILED",
        "Attribute birth_date does not satisfy AGE_AT_LEAST 99",
    )


def test_a_device_signature_over_another_request_fails(app, client):
    iaca = make_iaca()
    staff, verification, request = start(app, client, iaca, ADULT)
    elsewhere = WalletRequest(**{**request.__dict__, "nonce": "another-nonce"})

    post_response(client, request, answer(elsewhere, iaca))

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == (
        "FAILED",
        "DeviceAuth signature does not verify",
    )


def test_an_mdl_of_an_unpinned_authority_fails(app, client):
    staff, verification, request = start(app, client, make_iaca(), ADULT)

    post_response(client, request, answer(request, make_iaca()))

    body = lookup(app, client, staff, verification)
    assert body["status"] == "FAILED"
    assert body["validation_error"]


def test_an_expired_mdl_fails(app, client):
    iaca = make_iaca()
    staff, verification, request = start(app, client, iaca, ADULT)
    expired = answer(
        request, iaca, valid_from=NOW - timedelta(days=20), valid_until=NOW - timedelta(days=1)
    )

    post_response(client, request, expired)

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == ("FAILED", "Credential has expired")


@pytest.mark.parametrize(
    ("origin", "with_thumbprint", "outcome"),
    [
        (ORIGIN, True, ("VERIFIED", None)),
        (ORIGIN, False, ("FAILED", "DeviceAuth signature does not verify")),
        (None, True, ("FAILED", "DeviceAuth signature does not verify")),
    ],
    ids=[
        "dc-api-handover-of-the-page-and-key",
        "dc-api-handover-without-the-key",
        "openid4vp-handover-instead",
    ],
)
def test_over_the_browser_api_the_device_signs_the_pages_dc_api_handover(
    app, client, origin, with_thumbprint, outcome
):
    """dc_api.jwt: the OpenID4VPDCAPIHandover names the page's origin, the nonce and the
    thumbprint of the key the response is encrypted to (OpenID4VP 1.0 B.2.6.2)."""
    iaca = make_iaca()
    staff, verification, request = start(app, client, iaca, ADULT)
    key = dc_api_key(client, request.request_id)
    thumbprint = jwk_thumbprint(key) if with_thumbprint else None

    presentation = answer(request, iaca, origin=origin, jwk_thumbprint=thumbprint)
    assert dc_api_post(client, request, presentation, ORIGIN).status_code == 200

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == outcome


assert MDL_ELEMENTS["age_over_18"] is True  # the conditions above rely on the issued mDL
