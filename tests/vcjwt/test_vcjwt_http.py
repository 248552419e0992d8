"""A jwt_vc_json verification end to end: the person's page hands out the wallet link, the node
wallet (did-jwt-vc / did-jwt) answers the request it carries by direct_post, and the backend
reads the decision in the authenticated lookup."""

from __future__ import annotations

import pytest
from factories import make_apikey, make_staff, make_verification
from pages.pages_support import wallet_link
from vcjwt_support import (
    CREDENTIAL_TYPE,
    Parties,
    Party,
    credential_v1,
    credential_v2,
    issue,
    present,
)
from wallets import WalletRequest, dc_api_post, post_response, read_request


def identity_schema(client, staff) -> str:
    created = client.post(
        "/schemas",
        json={
            "name": "Identity (W3C)",
            "description": "A W3C verifiable credential about a person",
            "format": "jwt_vc_json",
            "types": [CREDENTIAL_TYPE],
            "attributes": [
                {"name": "given_name", "description": "First names", "type": "TEXT"},
                {"name": "family_name", "description": "Last names", "type": "TEXT"},
                {"name": "address.country", "description": "Country", "type": "TEXT"},
            ],
        },
        headers=staff.headers(),
    )
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    published = client.post(f"/schemas/{schema_id}/publish", headers=staff.headers())
    assert published.status_code == 200, published.get_json()
    return schema_id


def start(app, client, countries: list[str]):
    """A verification of the W3C schema, one individual, and the request behind its page's
    wallet link."""
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        schema_id=identity_schema(client, staff),
        claims=["given_name", "family_name"],
        attributes=[{"name": "address.country", "operator": "IN", "value": countries}],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}")
    assert page.status_code == 200
    request = read_request(client, wallet_link(page.get_data(as_text=True)))
    return staff, verification, request


def answer(request: WalletRequest, issuer: Party, holder: Party, subject: str, model: str) -> str:
    """The wallet's presentation for this request: nonce from it, aud its client_id."""
    build = credential_v1 if model == "1.1" else credential_v2
    credential = issue(model, issuer, build(subject))
    return present(model, holder, credential, nonce=request.nonce, aud=request.client_id)


def lookup(app, client, staff, verification) -> dict:
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/crm-1", headers={"apikey": key}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_the_request_asks_for_a_jwt_vc_json_credential_of_the_schemas_types(app, client):
    _, _, request = start(app, client, ["DE"])

    (query,) = request.claims["dcql_query"]["credentials"]
    assert query["format"] == "jwt_vc_json"
    assert query["meta"] == {"type_values": [[CREDENTIAL_TYPE]]}
    assert {"path": ["credentialSubject", "given_name"]} in query["claims"]


@pytest.mark.parametrize("model", ["1.1", "2.0"])
def test_a_holders_own_credential_verifies_with_its_claims_in_the_lookup(
    app, client, parties: Parties, model: str
):
    staff, verification, request = start(app, client, ["DE", "FR"])
    presentation = answer(request, parties.issuer, parties.holder, parties.holder.did, model)

    assert post_response(client, request, presentation).status_code == 200

    body = lookup(app, client, staff, verification)
    assert body["status"] == "VERIFIED"
    assert body["issuer"] == parties.issuer.did
    assert body["claims"] == {
        "given_name": "Erika",
        "family_name": "Mustermann",
        "address": {"country": "DE"},
    }


def test_someone_elses_credential_fails_with_the_reason(app, client, parties: Parties):
    staff, verification, request = start(app, client, ["DE"])
    presentation = answer(request, parties.issuer, parties.holder, parties.other_holder.did, "2.0")

    post_response(client, request, presentation)

    body = lookup(app, client, staff, verification)
    assert body["status"] == "FAILED"
    assert body["validation_error"] == (
        "Credential subject is not the holder who signed the presentation"
    )


def test_an_unmet_condition_fails_naming_it(app, client, parties: Parties):
    staff, verification, request = start(app, client, ["FR"])
    presentation = answer(request, parties.issuer, parties.holder, parties.holder.did, "1.1")

    post_response(client, request, presentation)

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == (
        "FAILED",
        'Attribute address.country does not satisfy IN ["FR"]',
    )


ORIGIN = "https://verity.test"


@pytest.mark.parametrize(
    ("aud", "outcome"),
    [
        (f"origin:{ORIGIN}", ("VERIFIED", None)),
        (None, ("FAILED", "Presentation audience does not match this verifier")),
    ],
    ids=["bound-to-the-origin", "bound-to-the-client-id"],
)
def test_over_the_browser_api_the_presentation_names_the_pages_origin(
    app, client, parties: Parties, aud, outcome
):
    staff, verification, request = start(app, client, ["DE"])
    credential = issue("2.0", parties.issuer, credential_v2(parties.holder.did))
    presentation = present(
        "2.0", parties.holder, credential, nonce=request.nonce, aud=aud or request.client_id
    )

    assert dc_api_post(client, request, presentation, ORIGIN).status_code == 200

    body = lookup(app, client, staff, verification)
    assert (body["status"], body["validation_error"]) == outcome
