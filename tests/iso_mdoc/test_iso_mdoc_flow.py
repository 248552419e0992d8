"""``org-iso-mdoc`` (ISO/IEC 18013-7 Annex C) end to end over HTTP: the page's request, the
answer of a wallet we did not write (@auth0/mdl, sealed by @hpke/core), and the decision."""

from __future__ import annotations

import cbor2
from iso_mdoc_support import (
    ELEMENTS,
    MDL,
    MDL_NS,
    ORIGIN,
    as_credential,
    dc_post,
    decoded,
    iso_mdoc_request,
    lookup,
    start,
    wallet_answer,
)
from mdoc.mdoc_support import make_iaca


def test_the_device_request_asks_exactly_the_elements_the_verification_reads(app, client):
    iaca = make_iaca()
    _, _, _, request_id = start(app, client, iaca)
    body = client.get(f"/oid4vp/dc-requests/{request_id}").get_json()
    assert [r["protocol"] for r in body["requests"]] == ["openid4vp-v1-unsigned", "org-iso-mdoc"]
    request = iso_mdoc_request(client, request_id)
    device_request = decoded(request["deviceRequest"])
    assert device_request["version"] == "1.0"
    (doc_request,) = device_request["docRequests"]
    assert "readerAuth" not in doc_request  # no reader certificate configured
    items = cbor2.loads(doc_request["itemsRequest"].value)
    assert doc_request["itemsRequest"].tag == 24
    assert items == {
        "docType": MDL,
        # Claims and the element the condition reads; kept (the default retention keeps them).
        "nameSpaces": {MDL_NS: {"given_name": True, "family_name": True, "age_over_18": True}},
    }
    handover, info = decoded(request["encryptionInfo"])
    assert handover == "dcapi"
    key = info["recipientPublicKey"]
    assert (key[1], key[-1], len(key[-2]), len(key[-3])) == (2, 1, 32, 32)
    assert isinstance(info["nonce"], bytes) and len(info["nonce"]) >= 16


def test_nothing_is_marked_to_retain_when_the_verification_keeps_no_claims(app, client):
    iaca = make_iaca()
    _, _, _, request_id = start(app, client, iaca, retention_days=0)
    device_request = decoded(iso_mdoc_request(client, request_id)["deviceRequest"])
    items = cbor2.loads(device_request["docRequests"][0]["itemsRequest"].value)
    assert set(items["nameSpaces"][MDL_NS].values()) == {False}


def test_each_presentation_request_has_its_own_recipient_key(app, client):
    iaca = make_iaca()
    _, _, _, first = start(app, client, iaca)
    _, _, _, second = start(app, client, iaca, "bob@example.test")
    again = iso_mdoc_request(client, first)
    assert again == iso_mdoc_request(client, first)  # the same request: the same bytes
    keys = [
        decoded(iso_mdoc_request(client, rid)["encryptionInfo"])[1]["recipientPublicKey"]
        for rid in (first, second)
    ]
    assert keys[0] != keys[1]


def test_an_auth0_mdl_answer_sealed_by_hpke_core_verifies(app, client):
    iaca = make_iaca()
    staff, verification, individual_id, request_id = start(app, client, iaca)
    answer = wallet_answer(iso_mdoc_request(client, request_id), iaca)
    response = dc_post(client, request_id, as_credential(answer))
    assert response.status_code == 200, response.get_json()
    assert response.headers["Cache-Control"] == "no-store"
    assert response.get_json()["status"] == "VERIFIED"
    assert response.get_json()["redirect_uri"].startswith(f"{ORIGIN}/i/{individual_id}")
    found = lookup(app, client, staff, verification)
    assert found["status"] == "VERIFIED"
    assert found["claims"]["given_name"] == ELEMENTS["given_name"]
    assert found["claims"]["family_name"] == ELEMENTS["family_name"]
