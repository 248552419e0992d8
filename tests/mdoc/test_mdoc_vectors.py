"""Device responses real wallets produced (tests/mdoc/vectors, see its README): they decode,
their issuer signatures and digests verify against their own certificates at their own dates,
and their device signatures verify only over the transcript they were made for.

Only the Paradym response uses the OpenID4VP 1.0 handover this service sends; the others
predate it, so against our transcript their device signature must fail (and the failure must
be the device check, which runs last: everything the issuer signed passed). The older
handovers are rebuilt here, in the test, to show the rest of the verification is right.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import cbor2
import pytest

from app.mdoc import MdocError, openid4vp_session_transcript, verify_device_response
from app.trust.x5c import load_pem_anchors

VECTORS = Path(__file__).resolve().parent / "vectors"
NAMES = ("animo_paradym", "google", "france", "ubique")


def load(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / f"{name}.json").read_text())


def doctype_of(vector: dict[str, Any]) -> str:
    entry = vector["device_response"]
    response = cbor2.loads(base64.urlsafe_b64decode(entry + "=" * (-len(entry) % 4)))
    return response["documents"][0]["docType"]


def verify(vector: dict[str, Any], transcript: bytes):
    return verify_device_response(
        vector["device_response"],
        doctype=doctype_of(vector),
        transcript=transcript,
        anchors=[cert for pem in vector["anchors_pem"] for cert in load_pem_anchors(pem)],
        now=datetime.fromisoformat(vector["now"].replace("Z", "+00:00")),
    )


def our_transcript(handover: dict[str, Any]) -> bytes:
    """The OpenID4VP 1.0 transcript this service builds from the request's values."""
    thumbprint = handover.get("jwk_thumbprint_hex")
    return openid4vp_session_transcript(
        handover["client_id"],
        handover["nonce"],
        bytes.fromhex(thumbprint) if thumbprint else None,
        handover.get("response_uri") or handover["client_id"],
    )


def their_transcript(handover: dict[str, Any]) -> bytes:
    """The transcript the wallet really signed, for the handovers that predate OpenID4VP 1.0."""
    if handover["kind"] == "openid4vp":
        return our_transcript(handover)
    if handover["kind"] == "dc_api_draft24":
        info = [handover["origin"], handover["client_id"], handover["nonce"]]
        return cbor2.dumps(
            [None, None, ["OpenID4VPDCAPIHandover", hashlib.sha256(cbor2.dumps(info)).digest()]]
        )
    # ISO 18013-7 first edition (OpenID4VP draft 18): [clientIdHash, responseUriHash, nonce].
    mdoc_nonce = handover["mdoc_generated_nonce"]
    client_id_hash = hashlib.sha256(cbor2.dumps([handover["client_id"], mdoc_nonce])).digest()
    response_uri_hash = hashlib.sha256(cbor2.dumps([handover["response_uri"], mdoc_nonce])).digest()
    return cbor2.dumps([None, None, [client_id_hash, response_uri_hash, handover["nonce"]]])


@pytest.mark.parametrize("name", NAMES)
def test_a_real_device_response_verifies_over_the_transcript_it_was_signed_for(name):
    vector = load(name)

    verified = verify(vector, their_transcript(vector["handover"]))

    assert verified.doctype == doctype_of(vector)
    assert verified.issuer.method == "x5c"
    assert verified.namespaces and all(verified.namespaces.values())


@pytest.mark.parametrize("name", ("google", "france", "ubique"))
def test_an_older_handover_fails_only_at_the_device_signature(name):
    vector = load(name)

    with pytest.raises(MdocError) as refused:
        verify(vector, our_transcript(vector["handover"]))

    assert refused.value.reason == "DeviceAuth signature does not verify"


def test_the_paradym_pid_verifies_with_our_openid4vp_transcript():
    vector = load("animo_paradym")

    verified = verify(vector, our_transcript(vector["handover"]))

    assert verified.doctype == "eu.europa.ec.eudi.pid.1"
    assert verified.namespaces == {
        "eu.europa.ec.eudi.pid.1": {"given_name": "Erika", "family_name": "Mustermann"}
    }
    assert [cert.subject.rfc4514_string() for cert in verified.issuer.certificates] == [
        "C=NL,CN=credo dcs",
        "C=NL,CN=Animo",
    ]


def test_the_french_mdl_values_are_json():
    vector = load("france")

    namespace = verify(vector, their_transcript(vector["handover"])).namespaces["org.iso.18013.5.1"]

    assert namespace["issue_date"] == "2019-10-20"
    assert namespace["driving_privileges"][0] == {
        "vehicle_category_code": "A",
        "issue_date": "2018-08-09",
        "expiry_date": "2024-10-20",
    }
    assert base64.urlsafe_b64decode(namespace["portrait"] + "==").startswith(b"\xff\xd8")


@pytest.mark.parametrize("name", NAMES)
def test_a_real_device_response_is_refused_after_its_certificate_expired(name):
    vector = load(name) | {"now": "2031-01-01T00:00:00Z"}

    with pytest.raises(MdocError):
        verify(vector, their_transcript(vector["handover"]))
