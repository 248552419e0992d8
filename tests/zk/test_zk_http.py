"""A ZK age check end to end: a verification of the shipped mDL schema asks age_over_18 as a
zero-knowledge proof, the person's page hands the browser an ``mso_mdoc_zk`` query, the isrg-rust
backend proves over the Digital Credentials API handover of that very request, and Verity
(google-cpp, in its worker pool) verifies the 1.5 MB answer and keeps only the claim.

The answer endpoints keep a ZK answer and answer at once; the job worker's ``zk`` queue checks
the proof (``run_pending`` plays the worker here) and records the decision.

One proof is made here (seconds of CPU); the other tests refuse before any proof is needed.
"""

from __future__ import annotations

import base64
import json
import uuid
from urllib.parse import urlsplit

import pytest
from factories import make_apikey, make_staff, make_verification
from pages.pages_support import wallet_link
from wallets import (
    dc_api_key,
    dc_api_openid4vp_request,
    encrypt_response,
    encrypt_to,
    jwk_thumbprint,
    post_encrypted_response,
    post_response,
    read_request,
)
from zk_support import ORIGIN, V6, V7, end_of_day, licence, prove, zk_response

from app.jobs.queue import queue_of
from app.mdoc import dc_api_session_transcript

MDL_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"
SD_JWT_AGE_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000003"


def pem(cert) -> str:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM).decode()


def start(app, client, iaca, customer="crm-zk", **fields):
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        schema_id=MDL_SCHEMA_ID,
        claims=["age_over_18"],
        trusted_issuers=[pem(iaca)],
        attributes=[],
        zk=True,
        **fields,
    )
    individual, request, page = another(client, verification, customer)
    return staff, verification, individual, request, page


def another(client, verification, customer: str):
    """One more person of ``verification``: the individual, its page's request, the page."""
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer, "verification_id": verification["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}")
    assert page.status_code == 200
    request = read_request(client, wallet_link(page.get_data(as_text=True)))
    return individual, request, page.get_data(as_text=True)


def dc_answer(client, request_id: str, entry: str) -> dict:
    protocol, data = dc_api_openid4vp_request(client, request_id)
    key = data["client_metadata"]["jwks"]["keys"][0]
    return {
        "protocol": protocol,
        "data": {"response": encrypt_to(key, {"vp_token": {"credential": [entry]}})},
    }


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_an_isrg_proof_over_the_dc_api_is_verified_and_only_the_claim_is_kept(
    app, client, test_authority, now
):
    staff, verification, _individual, request, page = start(app, client, test_authority.iaca)
    assert verification["zk"] is True
    queue_of(app).flush()
    # The person is told what the organization learns.
    assert "only that you are over 18, and who issued your licence" in page

    body = client.get(f"/oid4vp/dc-requests/{request.request_id}").get_json()
    assert [r["protocol"] for r in body["requests"]] == ["openid4vp-v1-unsigned"]
    query = body["requests"][0]["data"]["dcql_query"]["credentials"][0]
    assert query["format"] == "mso_mdoc_zk"
    assert query["meta"]["doctype_value"] == "org.iso.18013.5.1.mDL"
    assert [e["id"] for e in query["meta"]["zk_system_type"]] == [V7.circuit_hash, V6.circuit_hash]
    assert query["claims"] == [
        {"path": ["org.iso.18013.5.1", "age_over_18"], "intent_to_retain": False}
    ]

    # The wallet proves over the OpenID4VPDCAPIHandover of this request (origin, nonce, key).
    key = dc_api_key(client, request.request_id)
    transcript = dc_api_session_transcript(ORIGIN, request.nonce, jwk_thumbprint(key))
    timestamp = end_of_day(now)
    specimen = licence(test_authority, transcript, now)
    proof = prove(specimen, transcript, timestamp, circuit=V7)
    entry = b64url(
        zk_response(proof, chain=test_authority.ds, timestamp=timestamp, system_id=V7.circuit_hash)
    )
    posted = json.dumps(dc_answer(client, request.request_id, entry))
    assert len(posted) > 1024 * 1024  # past MAX_CONTENT_LENGTH: this endpoint takes 2 MiB

    answered = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        data=posted,
        content_type="application/json",
        headers={"Origin": ORIGIN},
    )
    # Kept for its check, answered at once: no web worker waits for the proof.
    assert answered.status_code == 202, answered.get_json()
    body = answered.get_json()
    assert body["checking"] is True
    assert body["status"] == "REQUESTED"
    polled = client.get(f"/verifications/{_individual['id']}/verify").get_json()
    assert polled["status"] == "REQUESTED"

    assert queue_of(app).run_pending() >= 1  # the job worker checks the proof
    polled = client.get(f"/verifications/{_individual['id']}/verify").get_json()
    assert polled["status"] == "VERIFIED"
    # The answering browser's link opens the result.
    result = client.get(
        urlsplit(body["redirect_uri"]).path + "?" + urlsplit(body["redirect_uri"]).query
    )
    assert result.status_code == 200
    assert "Verified" in result.get_data(as_text=True)

    looked_up = client.get(
        f"/verifications/{verification['id']}/individuals/crm-zk",
        headers={"apikey": make_apikey(app, staff.organization_id)},
    ).get_json()
    assert looked_up["status"] == "VERIFIED"
    assert looked_up["claims"] == {"age_over_18": True}
    assert looked_up["issuer"] == "CN=Test IACA DS"
    assert looked_up["validation_error"] is None


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"schema_id": SD_JWT_AGE_SCHEMA_ID}, "ZK_NOT_AVAILABLE"),
        ({"claims": ["given_name"]}, "ZK_CLAIM_NOT_PROVABLE"),
        ({"claims": ["age_over_18", "age_over_21"]}, "ZK_CLAIM_NOT_PROVABLE"),
        (
            {
                "claims": [],
                "attributes": [{"name": "birth_date", "operator": "AGE_AT_LEAST", "value": 18}],
            },
            "ZK_CLAIM_NOT_PROVABLE",
        ),
    ],
)
def test_a_zk_verification_no_pinned_circuit_can_answer_is_refused(app, client, fields, code):
    staff = make_staff(app)
    body = {"name": "Age", "schema_id": MDL_SCHEMA_ID, "claims": ["age_over_18"], "zk": True}
    response = client.post(
        "/verifications",
        json={**body, **fields},
        headers=staff.headers(),
    )
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["code"] == code


def test_without_the_zk_extra_a_zk_verification_is_not_configured(app, client, monkeypatch):
    import app.verifications.zk as rules

    monkeypatch.setattr(rules, "available", lambda: False)
    staff = make_staff(app)
    response = client.post(
        "/verifications",
        json={"name": "Age", "schema_id": MDL_SCHEMA_ID, "claims": ["age_over_18"], "zk": True},
        headers=staff.headers(),
    )
    assert response.status_code == 503
    assert response.get_json()["code"] == "NOT_CONFIGURED"


def post_dc(client, request_id: str, entry: str, address: str = "10.0.0.2"):
    return client.post(
        f"/oid4vp/dc-responses/{request_id}",
        json=dc_answer(client, request_id, entry),
        headers={"Origin": ORIGIN},
        environ_base={"REMOTE_ADDR": address},
    )


def waiting_checks(app) -> int:
    from app.extensions import db
    from app.presentations.models import ZkCheck

    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(ZkCheck))


def attempts_of(app, individual) -> int:
    from app.extensions import db
    from app.verifications.models import PresentationAttempt, PresentationRequest

    with app.app_context():
        return db.session.scalar(
            db.select(db.func.count())
            .select_from(PresentationAttempt)
            .join(PresentationRequest, PresentationRequest.id == PresentationAttempt.request_id)
            .where(PresentationRequest.individual_id == uuid.UUID(individual["id"]))
        )


def status_of(client, individual) -> str:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]


def test_beyond_the_checks_capacity_a_zk_answer_gets_429_and_nothing_is_consumed(
    app, client, test_authority, monkeypatch
):
    monkeypatch.setitem(app.config, "ZK_VERIFY_WORKERS", 1)
    monkeypatch.setitem(app.config, "ZK_VERIFY_QUEUE", 0)
    queue_of(app).flush()
    _s, verification, first, first_request, _p = start(
        app, client, test_authority.iaca, customer="crm-a"
    )
    second, second_request, _p = another(client, verification, "crm-b")
    assert post_dc(client, first_request.request_id, b64url(b"\xa0")).status_code == 202

    busy = post_dc(client, second_request.request_id, b64url(b"\xa0"))
    assert busy.status_code == 429
    assert busy.get_json()["code"] == "ZK_BUSY"
    assert int(busy.headers["Retry-After"]) >= 1
    assert status_of(client, second) == "REQUESTED"

    queue_of(app).run_pending()  # the waiting check is decided: there is room again
    assert status_of(client, first) == "FAILED"
    assert post_dc(client, second_request.request_id, b64url(b"\xa0")).status_code == 202
    queue_of(app).run_pending()
    assert status_of(client, second) == "FAILED"


def test_a_second_answer_to_a_request_being_checked_is_refused(app, client, test_authority):
    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-2x")
    assert post_dc(client, request.request_id, b64url(b"\xa0")).status_code == 202
    again = post_dc(client, request.request_id, b64url(b"\xa0"))
    assert again.status_code == 400
    assert again.get_json()["code"] == "ALREADY_ANSWERED"
    assert waiting_checks(app) == 1
    queue_of(app).run_pending()
    assert waiting_checks(app) == 0
    assert status_of(client, individual) == "FAILED"
    assert attempts_of(app, individual) == 1  # decided once


def proof_shaped_answer(test_authority, now) -> str:
    """Passes every check before the proof: what reaches the pool."""
    return b64url(
        zk_response(
            b"not a proof",
            chain=test_authority.ds,
            timestamp=end_of_day(now),
            system_id=V7.circuit_hash,
        )
    )


def test_a_check_the_pool_cannot_run_is_tried_again_then_dropped_leaving_the_request_open(
    app, client, test_authority, now, monkeypatch
):
    from app.presentations import zk_checks
    from app.presentations.models import ZkCheck
    from app.zk import VerificationPool, ZkBusy

    def overloaded(_pool, _check):
        raise ZkBusy(1)

    monkeypatch.setattr(VerificationPool, "verify", overloaded)
    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-ovl")
    assert (
        post_dc(client, request.request_id, proof_shaped_answer(test_authority, now)).status_code
        == 202
    )
    with app.app_context():
        from app.extensions import db

        check_id = str(db.session.scalars(db.select(ZkCheck.id)).one())
        for _ in range(zk_checks.MAX_ATTEMPTS):
            zk_checks.check(check_id)  # as the queue hands it over, each time after a delay
        assert db.session.scalar(db.select(db.func.count()).select_from(ZkCheck)) == 0
    # Nothing was decided: the person may answer again on the same link.
    assert status_of(client, individual) == "REQUESTED"
    monkeypatch.undo()
    assert post_dc(client, request.request_id, b64url(b"\xa0")).status_code == 202


def test_a_check_whose_job_was_lost_is_handed_over_by_the_sweep(app, client, test_authority, now):
    from datetime import timedelta

    from app import clock
    from app.presentations import zk_checks

    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-lost")
    assert post_dc(client, request.request_id, b64url(b"\xa0")).status_code == 202
    queue_of(app).flush()  # the queue's storage lost the job
    later = clock.now() + timedelta(seconds=zk_checks.UNCLAIMED_SECONDS + 1)
    clock.set_source(lambda: later)
    try:
        with app.app_context():
            zk_checks.sweep()
        queue_of(app).run_pending()
    finally:
        clock.set_source(None)
    assert status_of(client, individual) == "FAILED"


def test_a_zk_answer_by_direct_post_is_kept_and_decided_by_the_job(app, client, test_authority):
    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-dp")
    payload = {"vp_token": {"credential": [b64url(b"\xa0")]}, "state": request.state}
    if "jwks" in request.claims.get("client_metadata", {}):
        answered = post_encrypted_response(client, request, encrypt_response(request, payload))
    else:
        answered = post_response(client, request, b64url(b"\xa0"))
    assert answered.status_code == 200, answered.get_json()
    assert "redirect_uri" in answered.get_json()
    assert status_of(client, individual) == "REQUESTED"
    queue_of(app).run_pending()
    assert status_of(client, individual) == "FAILED"


def test_zk_answers_are_throttled_per_client(app, client, test_authority, monkeypatch):
    monkeypatch.setitem(app.config, "ZK_ANSWER_LIMIT", "1/minute")
    _staff, _verification, _individual, request, _page = start(
        app, client, test_authority.iaca, customer="crm-flood"
    )
    statuses = [
        client.post(
            f"/oid4vp/dc-responses/{request.request_id}",
            json={"protocol": "openid4vp-v1-unsigned", "data": {}},
            headers={"Origin": ORIGIN},
            environ_base={"REMOTE_ADDR": "10.0.0.3"},
        )
        for _ in range(2)
    ]
    assert statuses[0].status_code == 400
    assert statuses[1].status_code == 429
    assert statuses[1].get_json()["code"] == "RATE_LIMITED"
    assert "Retry-After" in statuses[1].headers


def test_a_large_answer_to_a_verification_without_zk_is_still_refused(app, client, test_authority):
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        schema_id=MDL_SCHEMA_ID,
        claims=["age_over_18"],
        attributes=[],
        trusted_issuers=[pem(test_authority.iaca)],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-plain", "verification_id": verification["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}")
    request = read_request(client, wallet_link(page.get_data(as_text=True)))
    response = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={"protocol": "openid4vp-v1-unsigned", "data": {"response": "x" * 1_500_000}},
        headers={"Origin": ORIGIN},
    )
    assert response.status_code == 413


def test_the_page_says_a_proof_is_being_checked_in_the_persons_language(
    app, client, test_authority
):
    _s, _verification, individual, _request, page = start(
        app, client, test_authority.iaca, customer="crm-words"
    )
    # What the browser button says once a ZK answer is kept (202 ``checking``).
    assert 'data-checking="Your wallet answered. Its proof is being checked' in page
    german = client.get(f"/i/{individual['id']}", headers={"Accept-Language": "de"})
    assert "Ihr Nachweis wird geprüft" in german.get_data(as_text=True)


def test_a_check_one_job_holds_is_not_decided_by_another_until_its_lease_passes(
    app, client, test_authority
):
    from datetime import timedelta

    from app import clock
    from app.extensions import db
    from app.presentations import zk_checks
    from app.presentations.models import ZkCheck

    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-held")
    assert post_dc(client, request.request_id, b64url(b"\xa0")).status_code == 202
    with app.app_context():
        check_id = db.session.scalars(db.select(ZkCheck.id)).one()
        assert zk_checks._claim(check_id) is not None  # one job took it (and then stopped)
        zk_checks.check(str(check_id))  # another is handed the same check
    assert status_of(client, individual) == "REQUESTED"
    assert waiting_checks(app) == 1
    with app.app_context():
        lease = zk_checks.current().lease
    later = clock.now() + lease + timedelta(seconds=1)
    clock.set_source(lambda: later)
    try:
        with app.app_context():
            zk_checks.check(str(check_id))  # the first job's lease has passed
            db.session.commit()  # as the job runner does when a job returns
    finally:
        clock.set_source(None)
    assert status_of(client, individual) == "FAILED"
    assert attempts_of(app, individual) == 1
    assert waiting_checks(app) == 0


def test_an_answer_received_in_time_is_decided_even_if_its_request_expired_meanwhile(
    app, client, test_authority
):
    from datetime import timedelta

    from app import clock

    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-late")
    assert post_dc(client, request.request_id, b64url(b"\xa0")).status_code == 202
    seconds = app.config["PRESENTATION_REQUEST_SECONDS"]
    later = clock.now() + timedelta(seconds=seconds + 60)
    clock.set_source(lambda: later)
    try:
        queue_of(app).run_pending()
    finally:
        clock.set_source(None)
    assert status_of(client, individual) == "FAILED"
    assert attempts_of(app, individual) == 1


def test_concurrent_answers_to_one_request_keep_one_check(app, client, test_authority):
    import threading

    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-race")
    bodies = [dc_answer(client, request.request_id, b64url(b"\xa0")) for _ in range(4)]
    barrier = threading.Barrier(len(bodies))
    statuses: list[int] = []

    def answer(body):
        own = app.test_client()
        barrier.wait()
        statuses.append(
            own.post(
                f"/oid4vp/dc-responses/{request.request_id}",
                json=body,
                headers={"Origin": ORIGIN},
                environ_base={"REMOTE_ADDR": "10.0.0.9"},
            ).status_code
        )

    threads = [threading.Thread(target=answer, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [202, 400, 400, 400]
    assert waiting_checks(app) == 1
    queue_of(app).run_pending()
    assert attempts_of(app, individual) == 1


def test_the_job_holds_no_transaction_while_the_proof_is_checked(
    app, client, test_authority, now, monkeypatch
):
    """On SQLite an open write transaction would stall every other writer for the proof's
    time (a second, or the yield's seconds): the decision's reads end before the proof."""
    from app.extensions import db
    from app.zk import VerificationPool

    seen: list[bool] = []

    def holds(_pool, _check):
        seen.append(db.session().in_transaction())
        return "Zero-knowledge proof does not verify"

    monkeypatch.setattr(VerificationPool, "verify", holds)
    queue_of(app).flush()
    _s, _v, individual, request, _p = start(app, client, test_authority.iaca, customer="crm-tx")
    assert (
        post_dc(client, request.request_id, proof_shaped_answer(test_authority, now)).status_code
        == 202
    )
    queue_of(app).run_pending()
    assert seen == [False]
    assert status_of(client, individual) == "FAILED"


def test_a_door_that_counted_before_a_concurrent_one_filled_the_last_place_gives_way(
    app, client, test_authority, monkeypatch
):
    from app.presentations import zk_checks

    monkeypatch.setitem(app.config, "ZK_VERIFY_WORKERS", 1)
    monkeypatch.setitem(app.config, "ZK_VERIFY_QUEUE", 0)
    queue_of(app).flush()
    _s, verification, _first, first_request, _p = start(
        app, client, test_authority.iaca, customer="crm-first"
    )
    second, second_request, _p = another(client, verification, "crm-second")
    assert post_dc(client, first_request.request_id, b64url(b"\xa0")).status_code == 202
    # The second door counted while the first was still being kept: both passed the count.
    monkeypatch.setattr(zk_checks, "refuse_when_full", lambda: None)
    late = post_dc(client, second_request.request_id, b64url(b"\xa0"))
    assert late.status_code == 429
    assert late.get_json()["code"] == "ZK_BUSY"
    assert waiting_checks(app) == 1  # its check was taken back
    assert status_of(client, second) == "REQUESTED"
