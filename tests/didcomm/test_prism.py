"""Long-form did:prism as Identus wallets make and sign with it: the protobuf codec (hash
checked, byte-identical re-encoding), the DID document by key usage, the maker's keys, ES256K."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from app.didcomm import PrismDidError, prism

N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def long_form(op: bytes) -> str:
    return f"did:prism:{hashlib.sha256(op).hexdigest()}:{b64u(op)}"


def xy(key: ec.EllipticCurvePrivateKey) -> tuple[bytes, bytes]:
    n = key.public_key().public_numbers()
    return n.x.to_bytes(32, "big"), n.y.to_bytes(32, "big")


def ld(number: int, data: bytes) -> bytes:
    """One length-delimited field, written out by hand (lengths here are all < 16384)."""
    n = len(data)
    length = bytes([n]) if n < 128 else bytes([0x80 | (n & 0x7F), n >> 7])
    return bytes([number << 3 | 2]) + length + data


def hand_key(key_id: str, usage: int, x: bytes, y: bytes) -> bytes:
    ec_data = ld(1, b"secp256k1") + ld(2, x) + ld(3, y)
    return ld(1, key_id.encode()) + bytes([0x10, usage]) + ld(8, ec_data)


def hand_operation(*keys: bytes, services: bytes = b"") -> bytes:
    did_data = b"".join(ld(2, k) for k in keys) + services
    return ld(1, ld(1, did_data))


def test_hand_written_operation_decodes_and_re_encodes_byte_identically():
    master, auth, issuing = (ec.generate_private_key(ec.SECP256K1()) for _ in range(3))
    service = ld(3, ld(1, b"didcomm-1") + ld(2, b"DIDCommMessaging") + ld(3, b"https://a.example"))
    op = hand_operation(
        hand_key("master-0", 1, *xy(master)),
        hand_key("authentication-0", 4, *xy(auth)),
        hand_key("issuing-0", 2, *xy(issuing)),
        services=service,
    )
    did = long_form(op)
    parsed = prism.parse(did)
    assert parsed.canonical == f"did:prism:{hashlib.sha256(op).hexdigest()}"
    assert parsed.operation.encode() == op
    assert parsed.operation.long_form() == did
    assert [(k.id, k.usage) for k in parsed.operation.public_keys] == [
        ("master-0", 1),
        ("authentication-0", 4),
        ("issuing-0", 2),
    ]


def test_document_lists_keys_under_their_usages_and_leaves_out_master_and_revocation():
    keys = [ec.generate_private_key(ec.SECP256K1()) for _ in range(5)]
    op = hand_operation(
        hand_key("master-0", 1, *xy(keys[0])),
        hand_key("issuing-0", 2, *xy(keys[1])),
        hand_key("agreement-0", 3, *xy(keys[2])),
        hand_key("authentication-0", 4, *xy(keys[3])),
        hand_key("revocation-0", 5, *xy(keys[4])),
    )
    did = long_form(op)
    doc = prism.resolve(did)
    assert doc["id"] == did
    assert doc["alsoKnownAs"] == [did.rsplit(":", 1)[0]]
    assert doc["assertionMethod"] == [f"{did}#issuing-0"]
    assert doc["keyAgreement"] == [f"{did}#agreement-0"]
    assert doc["authentication"] == [f"{did}#authentication-0"]
    assert [m["id"] for m in doc["verificationMethod"]] == [
        f"{did}#issuing-0",
        f"{did}#agreement-0",
        f"{did}#authentication-0",
    ]
    x, y = xy(keys[3])
    assert doc["verificationMethod"][2]["publicKeyJwk"] == {
        "kty": "EC",
        "crv": "secp256k1",
        "x": b64u(x),
        "y": b64u(y),
    }


def test_compressed_secp256k1_key_is_expanded_in_the_document():
    master, auth = ec.generate_private_key(ec.SECP256K1()), ec.generate_private_key(ec.SECP256K1())
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    compressed = auth.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint)
    key = (
        ld(1, b"authentication-0")
        + bytes([0x10, 4])
        + ld(9, ld(1, b"secp256k1") + ld(2, compressed))
    )
    op = hand_operation(hand_key("master-0", 1, *xy(master)), key)
    did = long_form(op)
    _, y = xy(auth)
    assert prism.resolve(did)["verificationMethod"][0]["publicKeyJwk"]["y"] == b64u(y)
    assert prism.parse(did).operation.encode() == op


def test_made_did_has_master_and_issuing_keys_and_signs_verifiably():
    made = prism.make()
    parsed = prism.parse(made.did)
    assert [(k.id, k.usage) for k in parsed.operation.public_keys] == [
        ("master-0", 1),
        ("issuing-0", 2),
    ]
    doc = parsed.document()
    kid = f"{made.did}#issuing-0"
    token = prism.sign_es256k({"iss": made.did, "nonce": "n"}, made.keys["issuing-0"], kid)
    header, payload = prism.verify_es256k(token, doc, "assertionMethod")
    assert header == {"alg": "ES256K", "typ": "JWT", "kid": kid}
    assert payload == {"iss": made.did, "nonce": "n"}
    signature = base64.urlsafe_b64decode(token.rsplit(".", 1)[1] + "==")
    assert len(signature) == 64 and int.from_bytes(signature[32:], "big") <= N // 2
    with pytest.raises(PrismDidError, match="not an authentication key"):
        prism.verify_es256k(token, doc, "authentication")


def test_signatures_are_low_s_every_time():
    made = prism.make()
    for _ in range(40):
        token = prism.sign_es256k({"i": 1}, made.keys["issuing-0"], f"{made.did}#issuing-0")
        assert (
            int.from_bytes(base64.urlsafe_b64decode(token.rsplit(".", 1)[1] + "==")[32:], "big")
            <= N // 2
        )


def test_a_high_s_signature_from_another_signer_still_verifies():
    made = prism.make()
    kid = f"{made.did}#issuing-0"
    head = b64u(json.dumps({"alg": "ES256K", "kid": kid}).encode()) + "." + b64u(b"{}")
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    r, s = decode_dss_signature(
        made.keys["issuing-0"].sign(head.encode(), ec.ECDSA(hashes.SHA256()))
    )
    high = s if s > N // 2 else N - s
    token = head + "." + b64u(r.to_bytes(32, "big") + high.to_bytes(32, "big"))
    assert encode_dss_signature(r, high)
    assert prism.verify_es256k(token, prism.resolve(made.did), "assertionMethod")[1] == {}


def test_tampered_or_foreign_jws_is_refused():
    made, other = prism.make(), prism.make()
    doc = prism.resolve(made.did)
    kid = f"{made.did}#issuing-0"
    token = prism.sign_es256k({"a": 1}, made.keys["issuing-0"], kid)
    head, _, sig = token.split(".")
    with pytest.raises(PrismDidError, match="does not verify"):
        prism.verify_es256k(head + "." + b64u(b'{"a":2}') + "." + sig, doc, "assertionMethod")
    forged = prism.sign_es256k({"a": 1}, other.keys["issuing-0"], kid)
    with pytest.raises(PrismDidError, match="does not verify"):
        prism.verify_es256k(forged, doc, "assertionMethod")
    with pytest.raises(PrismDidError, match="not ES256K"):
        prism.verify_es256k(
            b64u(b'{"alg":"none"}') + "." + b64u(b"{}") + ".", doc, "assertionMethod"
        )
    with pytest.raises(PrismDidError, match="three"):
        prism.verify_es256k("a.b", doc, "assertionMethod")
    with pytest.raises(PrismDidError, match="64 bytes"):
        prism.verify_es256k(
            f"{head}.{token.split('.')[1]}.{b64u(b'x' * 63)}", doc, "assertionMethod"
        )


def draws(*keys):
    it = iter(keys)
    return lambda: next(it)


def zero_led_key(coordinate: int) -> ec.EllipticCurvePrivateKey:
    while True:
        key = ec.generate_private_key(ec.SECP256K1())
        if xy(key)[coordinate][0] == 0:
            return key


@pytest.mark.parametrize("coordinate", [0, 1])
def test_maker_never_uses_a_key_whose_coordinate_begins_with_zero(coordinate):
    bad = zero_led_key(coordinate)
    assert not prism.sdk_accepts(bad.public_key())
    good1, good2 = (ec.generate_private_key(ec.SECP256K1()) for _ in range(2))
    while not (prism.sdk_accepts(good1.public_key()) and prism.sdk_accepts(good2.public_key())):
        good1, good2 = (ec.generate_private_key(ec.SECP256K1()) for _ in range(2))
    made = prism.make(new_key=draws(bad, good1, bad, good2))
    assert made.keys == {"master-0": good1, "issuing-0": good2}
    for key in prism.parse(made.did).operation.public_keys:
        assert key.x[0] != 0 and key.y[0] != 0


def test_maker_takes_other_key_sets_but_always_a_master():
    made = prism.make({"master-0": prism.MASTER, "authentication-0": prism.AUTHENTICATION})
    assert prism.resolve(made.did)["authentication"] == [f"{made.did}#authentication-0"]
    with pytest.raises(PrismDidError, match="master key"):
        prism.make({"issuing-0": prism.ISSUING})


def test_wrong_hash_and_malformed_dids_are_refused_with_a_reason():
    made = prism.make()
    digest, encoded = made.did[len("did:prism:") :].split(":")
    cases = {
        "did:web:x": "not a did:prism",
        f"did:prism:{digest}": "short form",
        f"did:prism:{'0' * 64}:{encoded}": "not the SHA-256",
        f"did:prism:{digest}:{encoded}:x": "more parts",
        f"did:prism:{digest}:{encoded}+": "not base64url",
        long_form(b"\x0a\x05ab"): "cut short",
        long_form(b"\x12\x00"): "not a create-DID",
        long_form(
            ld(1, ld(1, ld(2, hand_key("issuing-0", 2, b"x" * 32, b"y" * 32))))
        ): "no master key",
        long_form(ld(1, ld(1, ld(2, ld(1, b"master-0") + bytes([0x10, 1]))))): "no key data",
        long_form(b"\x0b"): "wire type",
    }
    for did, reason in cases.items():
        with pytest.raises(PrismDidError) as raised:
            prism.parse(did)
        assert reason in raised.value.reason, did


def test_key_on_an_unknown_curve_is_refused_when_resolving():
    op = hand_operation(
        hand_key("master-0", 1, b"x" * 32, b"y" * 32),
        ld(1, b"auth-0") + bytes([0x10, 4]) + ld(9, ld(1, b"P-256") + ld(2, b"\x02" + b"x" * 32)),
    )
    with pytest.raises(PrismDidError, match="not supported"):
        prism.resolve(long_form(op))
