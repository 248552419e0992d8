"""A second mdoc implementation over ``org-iso-mdoc``: PyPI ``pymdoccbor`` issues the mDL, the
wallet's device signature over the ``dcapi`` SessionTranscript is made with PyPI ``pycose``, and
npm ``@hpke/core`` seals the DeviceResponse; the service opens and verifies it."""

from __future__ import annotations

import hashlib

import cbor2
from cryptography.hazmat.primitives.asymmetric import ec
from iso_mdoc_support import (
    MDL,
    MDL_NS,
    ORIGIN,
    as_credential,
    dc_post,
    iso_mdoc_request,
    lookup,
    sealed,
    start,
)
from mdoc.mdoc_support import Iaca, make_iaca
from pycose.algorithms import Es256
from pycose.headers import Algorithm
from pycose.keys import EC2Key
from pycose.messages import Sign1Message
from pymdoccbor.mdoc.issuer import MdocCborIssuer

ASKED = {"given_name": "Erika", "family_name": "Mustermann", "age_over_18": True}


def ec2(key: ec.EllipticCurvePrivateKey, private: bool) -> dict:
    numbers = key.private_numbers()
    cose = {
        "KTY": "EC2",
        "CURVE": "P_256",
        "X": numbers.public_numbers.x.to_bytes(32, "big"),
        "Y": numbers.public_numbers.y.to_bytes(32, "big"),
    }
    if private:
        cose |= {"ALG": "ES256", "D": numbers.private_value.to_bytes(32, "big")}
    return cose


def pymdoccbor_device_response(iaca: Iaca, transcript: list) -> bytes:
    device_key = ec.generate_private_key(ec.SECP256R1())
    issuer = MdocCborIssuer(private_key=ec2(iaca.signer_key, True), alg="ES256")
    response = issuer.new(
        data={MDL_NS: ASKED},
        doctype=MDL,
        validity={"issuance_date": "2024-01-02", "expiry_date": "2050-12-31"},
        devicekeyinfo=ec2(device_key, False),
        x509_chain=[iaca.signer],
    )
    # ISO 18013-5 9.1.3.4: the device signs DeviceAuthenticationBytes, detached.
    device_namespaces = cbor2.CBORTag(24, cbor2.dumps({}))
    authentication = cbor2.dumps(
        cbor2.CBORTag(24, cbor2.dumps(["DeviceAuthentication", transcript, MDL, device_namespaces]))
    )
    message = Sign1Message(phdr={Algorithm: Es256}, payload=authentication)
    message.key = EC2Key.from_dict(ec2(device_key, True))
    signed = cbor2.loads(message.encode(tag=False))
    signed[2] = None
    response["documents"][0]["deviceSigned"] = {
        "nameSpaces": device_namespaces,
        "deviceAuth": {"deviceSignature": signed},
    }
    return cbor2.dumps(response)


def test_a_pymdoccbor_mdl_sealed_by_hpke_core_verifies(app, client):
    iaca = make_iaca()
    staff, verification, _, request_id = start(app, client, iaca)
    request = iso_mdoc_request(client, request_id)
    info_hash = hashlib.sha256(cbor2.dumps([request["encryptionInfo"], ORIGIN])).digest()
    transcript = [None, None, ["dcapi", info_hash]]
    answer = sealed(request, pymdoccbor_device_response(iaca, transcript))
    response = dc_post(client, request_id, as_credential(answer))
    assert response.get_json()["status"] == "VERIFIED", response.get_json()
    found = lookup(app, client, staff, verification)
    assert found["claims"] == {
        "given_name": "Erika",
        "family_name": "Mustermann",
        "age_over_18": True,
    }
