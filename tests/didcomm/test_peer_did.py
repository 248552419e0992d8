"""did:peer:2 as the Hyperledger Identus SDK writes and reads it: ``#key-N`` ids in order of
appearance, abbreviated services as an object or a list, new- and old-style endpoints."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from app.didcomm import PeerDidError, peer_did
from app.didcomm.encoding import b58decode, b58encode

RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw


def b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def x25519() -> bytes:
    return X25519PrivateKey.generate().public_key().public_bytes(*RAW)


def ed25519() -> bytes:
    return Ed25519PrivateKey.generate().public_key().public_bytes(*RAW)


def jwk_x(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_base58_matches_known_vectors():
    assert b58encode(b"hello world") == "StV1DL6CwTryKyV"
    assert b58encode(b"\0\0\x01") == "112"
    assert b58decode("112") == b"\0\0\x01"
    with pytest.raises(ValueError):
        b58decode("0OIl")


def test_multibase_keys_carry_the_well_known_prefixes():
    did = peer_did.encode([x25519()], [ed25519()], [])
    elements = did.split(".")
    assert elements[0] == "did:peer:2"
    assert elements[1].startswith("Ez6LS")  # X25519 multicodec 0xec01
    assert elements[2].startswith("Vz6Mk")  # Ed25519 multicodec 0xed01


def test_key_ids_follow_order_of_appearance_across_purposes():
    x1, v1, v2 = x25519(), ed25519(), ed25519()
    service = b64({"t": "dm", "s": {"uri": "https://m.example/d", "a": ["didcomm/v2"]}})
    did = ".".join(
        [
            "did:peer:2",
            "V" + "z" + b58encode(b"\xed\x01" + v1),
            "E" + "z" + b58encode(b"\xec\x01" + x1),
            "V" + "z" + b58encode(b"\xed\x01" + v2),
            "S" + service,
        ]
    )
    doc = peer_did.resolve(did)
    assert doc["id"] == did
    assert doc["keyAgreement"] == [f"{did}#key-2"]
    assert doc["authentication"] == [f"{did}#key-1", f"{did}#key-3"]
    methods = {m["id"]: m for m in doc["verificationMethod"]}
    assert [m["id"] for m in doc["verificationMethod"]] == [f"{did}#key-{i}" for i in (1, 2, 3)]
    assert methods[f"{did}#key-2"]["publicKeyJwk"] == {
        "kty": "OKP",
        "crv": "X25519",
        "x": jwk_x(x1),
    }
    assert methods[f"{did}#key-3"]["publicKeyJwk"]["x"] == jwk_x(v2)
    assert methods[f"{did}#key-1"]["type"] == "JsonWebKey2020"
    assert doc["service"] == [
        {
            "id": f"{did}#service",
            "type": "DIDCommMessaging",
            "serviceEndpoint": {
                "uri": "https://m.example/d",
                "accept": ["didcomm/v2"],
                "routingKeys": [],
            },
        }
    ]


def test_service_list_and_empty_list_as_the_sdk_writes_them():
    keys = ".E" + "z" + b58encode(b"\xec\x01" + x25519())
    assert peer_did.resolve("did:peer:2" + keys + ".SW10")["service"] == []  # base64url "[]"
    two = b64(
        [
            {"t": "dm", "s": {"uri": "did:peer:2.Ez6LSmediator", "a": ["didcomm/v2"]}},
            {"t": "dm", "s": {"uri": "https://b.example", "r": ["did:example:r#k"]}},
        ]
    )
    did = "did:peer:2" + keys + ".S" + two
    services = peer_did.resolve(did)["service"]
    assert [s["id"] for s in services] == [f"{did}#service", f"{did}#service-1"]
    assert services[0]["serviceEndpoint"]["uri"] == "did:peer:2.Ez6LSmediator"
    assert services[1]["serviceEndpoint"] == {
        "uri": "https://b.example",
        "routingKeys": ["did:example:r#k"],
        "accept": [],
    }


def test_old_style_service_with_a_bare_url_is_read():
    keys = ".E" + "z" + b58encode(b"\xec\x01" + x25519())
    old = b64({"t": "dm", "s": "https://beta-mediator.example", "r": [], "a": ["didcomm/v2"]})
    service = peer_did.resolve("did:peer:2" + keys + ".S" + old)["service"][0]
    assert service["type"] == "DIDCommMessaging"
    assert service["serviceEndpoint"] == {
        "uri": "https://beta-mediator.example",
        "accept": ["didcomm/v2"],
        "routingKeys": [],
    }


def test_made_did_is_new_style_and_its_secrets_match_its_keys():
    made = peer_did.make("https://verity.example/didcomm")
    parsed = peer_did.parse(made.did)
    service_element = made.did.split(".")[-1]
    assert service_element[0] == "S"
    compact = json.loads(base64.urlsafe_b64decode(service_element[1:] + "=="))
    assert compact == {
        "t": "dm",
        "s": {"uri": "https://verity.example/didcomm", "a": ["didcomm/v2"]},
    }
    (kid_x, raw_x), (kid_v, raw_v) = parsed.key_agreement[0], parsed.authentication[0]
    assert (kid_x, kid_v) == (f"{made.did}#key-1", f"{made.did}#key-2")
    secret_x, secret_v = made.secrets[kid_x], made.secrets[kid_v]
    private_x = X25519PrivateKey.from_private_bytes(base64.urlsafe_b64decode(secret_x["d"] + "="))
    private_v = Ed25519PrivateKey.from_private_bytes(base64.urlsafe_b64decode(secret_v["d"] + "="))
    assert private_x.public_key().public_bytes(*RAW) == raw_x
    assert private_v.public_key().public_bytes(*RAW) == raw_v
    assert peer_did.make("https://a.example").did != peer_did.make("https://a.example").did


def test_encode_then_parse_round_trips():
    xs, vs = [x25519(), x25519()], [ed25519()]
    service = {
        "type": "DIDCommMessaging",
        "serviceEndpoint": {"uri": "https://a.example", "accept": ["didcomm/v2"]},
    }
    did = peer_did.encode(xs, vs, [service])
    parsed = peer_did.parse(did)
    assert [raw for _, raw in parsed.key_agreement] == xs
    assert [raw for _, raw in parsed.authentication] == vs
    assert [kid for kid, _ in parsed.authentication] == [f"{did}#key-3"]


@pytest.mark.parametrize(
    ("did", "reason"),
    [
        ("did:key:z6Mk", "not a did:peer:2"),
        ("did:peer:2", "not a did:peer:2"),
        ("did:peer:2..Ez6LS", "empty element"),
        ("did:peer:2.Xabc", "unknown purpose"),
        ("did:peer:2.Eabc", "must start with z"),
        ("did:peer:2.Ez0OIl", "not valid base58"),
        ("did:peer:2.E" + "z" + b58encode(b"\xed\x01" + bytes(32)), "32-byte X25519"),
        ("did:peer:2.V" + "z" + b58encode(b"\xed\x01" + bytes(32)), "no key agreement"),
        (
            "did:peer:2.Ez" + b58encode(b"\xec\x01" + bytes(32)) + ".S!!",
            "not base64url-encoded JSON",
        ),
        (
            "did:peer:2.Ez" + b58encode(b"\xec\x01" + bytes(32)) + ".S" + b64([1]),
            "other than a JSON object",
        ),
        (
            "did:peer:2.Ez" + b58encode(b"\xec\x01" + bytes(32)) + ".S" + b64({"t": "dm"}),
            "no serviceEndpoint",
        ),
    ],
)
def test_malformed_dids_are_refused_with_a_reason(did, reason):
    with pytest.raises(PeerDidError) as raised:
        peer_did.parse(did)
    assert reason in raised.value.reason


def test_a_service_needs_a_uri():
    with pytest.raises(PeerDidError, match="needs a URI"):
        peer_did.make("")
