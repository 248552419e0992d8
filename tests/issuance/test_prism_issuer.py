"""Each organization's did:prism issuer (credentials issued over DIDComm): made once on first
use, with keys the Identus SDK accepts, signing ES256K JWTs and StatusList2021 lists that
verifiers independent of this code accept."""

from __future__ import annotations

import base64
import json
import threading
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from issuance.issuance_support import issue, make_org
from joserfc import jws
from joserfc.jwk import ECKey
from statuslist.statuslist2021_support import nquads

from app.didcomm import prism
from app.extensions import db
from app.issuance import prism_issuer
from app.issuance.models import Credential, PrismIssuer
from app.oid4vci.keys import open_private_key

FIRST_BYTE_ZERO_X = None  # found below


def _rejected_key() -> ec.EllipticCurvePrivateKey:
    """A secp256k1 key whose x coordinate begins with a zero byte: the SDK 7.0.0 refuses it."""
    while True:
        key = ec.generate_private_key(ec.SECP256K1())
        if not prism.sdk_accepts(key.public_key()):
            return key


def verify_es256k(token: str, jwk: dict) -> tuple[dict, dict]:
    """The signature checked by joserfc (a JOSE library we did not write)."""
    registry = jws.JWSRegistry(algorithms=["ES256K"])
    key = ECKey.import_key({"kty": "EC", "crv": "secp256k1", "x": jwk["x"], "y": jwk["y"]})
    verified = jws.deserialize_compact(token, key, registry=registry)
    return verified.protected, json.loads(verified.payload)


def issuing_jwk(did: str) -> dict:
    document = prism.resolve(did)
    method = next(m for m in document["verificationMethod"] if m["id"].endswith("#issuing-0"))
    return method["publicKeyJwk"]


def test_the_issuer_is_made_on_first_use_once_per_organization(app):
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Other")
    with app.app_context():
        first = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        again = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        elsewhere = prism_issuer.prism_issuer_of(uuid.UUID(other.id))
        db.session.commit()
        assert first.id == again.id and first.did == again.did
        assert elsewhere.did != first.did
        parsed = prism.parse(first.did)
        assert first.short_form == parsed.canonical
        keys = {key.id: key.usage for key in parsed.operation.public_keys}
        assert keys == {"master-0": prism.MASTER, "issuing-0": prism.ISSUING}
        document = first.document()
        assert document["assertionMethod"] == [f"{first.did}#issuing-0"]
        assert document["authentication"] == []
        assert first.sealed_private_key is not None and first.token_key_label is None
