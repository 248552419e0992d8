"""The benchmark's own wallet (bench/presenting.py) makes presentations the service accepts.

No timing here: these check that what ``make bench`` measures is a real, accepted presentation,
so its figures are about verifying credentials and not about refusing them.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
from factories import make_staff, make_verification
from jwcrypto import jwk
from sd_jwt.verifier import SDJWTVerifier

from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation
from app.trust import Fetcher, resolve_issuer_key
from bench import mdoc as bench_mdoc
from bench import presenting

AUDIENCE = "redirect_uri:https://verity.test/oid4vp/responses/1"
NONCE = "bench-nonce-1"
DISCLOSED = {
    "given_name": "Erika",
    "family_name": "Mustermann",
    "birthdate": "1984-01-26",
    "address": {"country": "DE"},
}


def verify(presentation: str, *, audience: str = AUDIENCE, nonce: str = NONCE):
    """The service's path: resolve the issuer from the credential, then verify strictly."""
    parsed = parse_presentation(presentation)
    issuer = resolve_issuer_key(
        parsed.issuer_header,
        parsed.issuer_payload,
        fetcher=Fetcher(),
        anchors=(),
        now=datetime.now(UTC),
    )
    check = KeyBindingCheck(audience=audience, nonce=nonce, now=int(time.time()))
    return issuer, verify_presentation(parsed, issuer.key, check)


def test_the_service_verifier_accepts_a_bench_presentation():
    credential = presenting.issue()
    issuer, verified = verify(presenting.present(credential, AUDIENCE, NONCE))
    assert issuer.identifier == credential.issuer
    assert issuer.identifier.startswith("did:jwk:")
    assert verified.vct == presenting.PID_VCT
    assert {name: verified.claims[name] for name in DISCLOSED} == DISCLOSED
    assert "locality" not in verified.claims["address"]


def test_an_independent_implementation_accepts_it_too():
    credential = presenting.issue()
    presentation = presenting.present(credential, AUDIENCE, NONCE)
    issuer_key = jwk.JWK.from_json(json.dumps(credential.issuer_public_jwk))
    checked = SDJWTVerifier(presentation, lambda iss, header: issuer_key, AUDIENCE, NONCE)
    payload = checked.get_verified_payload()
    assert {name: payload[name] for name in DISCLOSED} == DISCLOSED


@pytest.mark.parametrize(
    ("audience", "nonce"), [(AUDIENCE, "another-nonce"), ("redirect_uri:https://x", NONCE)]
)
def test_the_key_binding_is_for_one_request_only(audience, nonce):
    presentation = presenting.present(presenting.issue(), AUDIENCE, NONCE)
    with pytest.raises(SdJwtError):
        verify(presentation, audience=audience, nonce=nonce)


def test_the_in_process_operations_check_the_same_presentation():
    floor, verify_once = presenting.in_process_operations()
    floor()  # the presentation's own two signatures verify as raw ES256
    assert verify_once().claims["given_name"] == "Erika"


def test_the_in_process_ratio_compares_each_slice_with_the_floor_around_it():
    slices = [presenting.Slice(rate, 1) for rate in (100.0, 300.0, 200.0)]
    measured = presenting.InProcess(slices, [presenting.Slice(100.0, 1)] * 2)
    assert measured.ratios() == [0.5, 0.4]


def test_the_bench_wallet_answers_a_real_request_and_is_verified(app, client):
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        claims=["given_name"],
        attributes=[{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
        trusted_issuers=[],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "bench-1", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    # Unsigned: the link carries the request (nothing to fetch).
    claims = presenting.carried_request(link)
    assert claims is not None
    path, form = presenting.response(presenting.issue(), claims)
    assert client.post(path, data=form).status_code == 200
    status = client.get(f"/verifications/{individual['id']}/verify").get_json()
    assert status["status"] == "VERIFIED", status["validation_error"]


def test_the_bench_mdoc_is_one_the_verifier_accepts_and_its_floor_checks_its_signatures():
    floor, verify = bench_mdoc.in_process_operations()
    floor()  # the three raw verifications: they raise if a message or signature is wrong
    document = verify()
    assert document.doctype == bench_mdoc.DOCTYPE
    assert document.namespaces[bench_mdoc.NAMESPACE]["birth_date"] == "1984-01-26"


def test_the_bench_org_iso_mdoc_response_opens_verifies_and_its_floor_checks_its_signatures():
    floor, verify = bench_mdoc.iso_mdoc_operations()
    floor()  # one HPKE open and the three raw verifications: they raise if anything is wrong
    document = verify()  # derives the recipient key, opens the response, verifies the mdoc
    assert document.doctype == bench_mdoc.DOCTYPE
    assert document.namespaces[bench_mdoc.NAMESPACE]["birth_date"] == "1984-01-26"


def test_the_bench_didcomm_presentation_opens_verifies_and_its_floor_checks_its_signatures():
    from bench import didcomm as bench_didcomm

    floor, verify = bench_didcomm.didcomm_operations()
    floor()  # the raw agreements, decryption and two ES256K checks: they raise if anything is wrong
    verified = verify()  # opens the envelope, takes the attachment, verifies the VP and its VC
    assert verified.issuer.method == "did:prism"
    assert verified.subject == {"type": "verification", "country": "DE"}
