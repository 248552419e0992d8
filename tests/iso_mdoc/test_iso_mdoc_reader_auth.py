"""``readerAuth`` (ISO 18013-5 9.1.4) on ``org-iso-mdoc`` DeviceRequests when a reader
certificate is configured (``READER_AUTH_CERT_FILE`` / ``READER_AUTH_KEY_FILE``), checked with
PyPI ``pycose``; and the start-up refusals of a pair that cannot sign it."""

from __future__ import annotations

import hashlib

import cbor2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from iso_mdoc_support import (
    ORIGIN,
    as_credential,
    dc_post,
    decoded,
    iso_mdoc_request,
    start,
    wallet_answer,
)
from mdoc.mdoc_support import make_iaca
from pycose.keys import EC2Key
from pycose.messages import Sign1Message
from signing_certificates import make_pki, write_files


def reader_settings(tmp_path, pki, **options) -> dict[str, str]:
    files = write_files(tmp_path, pki, **options)
    return {
        "READER_AUTH_CERT_FILE": files["REQUEST_SIGNING_CERT_FILE"],
        "READER_AUTH_KEY_FILE": files["REQUEST_SIGNING_KEY_FILE"],
    }


def test_the_device_request_is_signed_by_the_reader_certificate(make_app, tmp_path):
    pki = make_pki()
    app = make_app(**reader_settings(tmp_path, pki))
    client = app.test_client()
    iaca = make_iaca()
    _, _, _, request_id = start(app, client, iaca)
    request = iso_mdoc_request(client, request_id)
    (doc_request,) = decoded(request["deviceRequest"])["docRequests"]
    protected, unprotected, payload, _ = doc_request["readerAuth"]
    assert payload is None  # detached: the wallet rebuilds ReaderAuthenticationBytes
    assert cbor2.loads(protected) == {1: -7}
    assert unprotected[33] == [c.public_bytes(Encoding.DER) for c in (pki.leaf, pki.ca)]
    info_hash = hashlib.sha256(cbor2.dumps([request["encryptionInfo"], ORIGIN])).digest()
    transcript = [None, None, ["dcapi", info_hash]]
    reader_authentication = cbor2.dumps(
        cbor2.CBORTag(
            24,
            cbor2.dumps(["ReaderAuthentication", transcript, doc_request["itemsRequest"]]),
        )
    )
    # ReaderAuth is an untagged COSE_Sign1 (9.1.4): pycose reads the array as decoded here.
    # Its Sign1Message.decode takes tagged bytes only, and on cbor2 6 refuses them all: what a
    # tag holds decodes as a tuple and a frozendict, where pycose 1.1 wants a list and a dict.
    message = Sign1Message.from_cose_obj(list(doc_request["readerAuth"]), True)
    numbers = pki.leaf.public_key().public_numbers()
    message.key = EC2Key(
        crv="P_256", x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big")
    )
    assert message.verify_signature(detached_payload=reader_authentication)
    # The wallet's answer to a signed request verifies like any other.
    answer = wallet_answer(request, iaca)
    assert dc_post(client, request_id, as_credential(answer)).get_json()["status"] == "VERIFIED"


def test_a_key_that_is_not_the_leaf_s_stops_the_start(make_app, tmp_path):
    pki = make_pki()
    other = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(RuntimeError, match="READER_AUTH_KEY_FILE is not the key"):
        make_app(**reader_settings(tmp_path, pki, key=other))


def test_a_key_off_p256_stops_the_start(make_app, tmp_path):
    pki = make_pki(curve=ec.SECP384R1())
    with pytest.raises(RuntimeError, match="P-256"):
        make_app(**reader_settings(tmp_path, pki))


def test_one_file_without_the_other_stops_the_start(make_app, tmp_path):
    settings = reader_settings(tmp_path, make_pki())
    with pytest.raises(RuntimeError, match="must be set together"):
        make_app(READER_AUTH_CERT_FILE=settings["READER_AUTH_CERT_FILE"])
