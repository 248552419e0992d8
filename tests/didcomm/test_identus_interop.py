"""did:peer:2 and did:prism against the Hyperledger Identus SDK 7.0.0 itself (npm
``@hyperledger/identus-sdk``, what the Socious Wallet runs): DIDs the SDK makes resolve here to
the same keys under the same ids, and DIDs made here resolve in the SDK. The SDK runs once for
the module (``identus/sdk_dids.mjs``)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.npm import ensure_node_modules

from app.didcomm import peer_did, prism
from app.didcomm.encoding import b58decode

SDK_DIR = Path(__file__).resolve().parent / "identus"
MEDIATOR = "did:peer:2.Ez6LSmediatorplaceholder"


@pytest.fixture(scope="module")
def ours():
    return {
        "peer": peer_did.make("https://verity.example/didcomm"),
        "prism": prism.make(
            {
                "master-0": prism.MASTER,
                "authentication-0": prism.AUTHENTICATION,
                "issuing-0": prism.ISSUING,
            }
        ),
    }


@pytest.fixture(scope="module")
def sdk(ours):
    ensure_node_modules(SDK_DIR, "@hyperledger/identus-sdk")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run the Identus SDK")
    completed = subprocess.run(
        [node, "sdk_dids.mjs", ours["peer"].did, ours["prism"].did],
        cwd=SDK_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"Identus SDK script failed: {completed.stderr}")
    return json.loads(completed.stdout)


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk_x_by_id(methods) -> dict[str, str]:
    return {
        m["id"]: m["publicKeyJwk"]["x"] if "publicKeyJwk" in m else m["jwk"]["x"] for m in methods
    }


def test_sdk_peer_did_resolves_here_to_its_keys_under_the_sdks_ids(sdk):
    made = sdk["peer"]
    doc = peer_did.resolve(made["did"])
    did = made["did"]
    assert doc["keyAgreement"] == [f"{did}#key-1"] == made["sdk"]["keyAgreement"]
    assert doc["authentication"] == [f"{did}#key-2"] == made["sdk"]["authentication"]
    assert jwk_x_by_id(doc["verificationMethod"]) == {
        f"{did}#key-1": b64u(bytes.fromhex(made["x25519"])),
        f"{did}#key-2": b64u(bytes.fromhex(made["ed25519"])),
    }
    assert jwk_x_by_id(doc["verificationMethod"]) == jwk_x_by_id(made["sdk"]["methods"])
    assert doc["service"][0]["type"] == "DIDCommMessaging"
    assert doc["service"][0]["serviceEndpoint"]["uri"] == MEDIATOR


def test_our_peer_did_resolves_in_the_sdk_to_the_same_keys_ids_and_uri(sdk, ours):
    seen = sdk["ours"]["peer"]
    assert "error" not in seen, seen
    doc = peer_did.resolve(ours["peer"].did)
    assert seen["id"] == ours["peer"].did
    assert seen["keyAgreement"] == doc["keyAgreement"]
    assert seen["authentication"] == doc["authentication"]
    assert jwk_x_by_id(seen["methods"]) == jwk_x_by_id(doc["verificationMethod"])
    assert [s["uri"] for s in seen["services"]] == ["https://verity.example/didcomm"]


def test_sdk_prism_did_is_hash_checked_and_re_encodes_byte_identically(sdk):
    made = sdk["prism"]
    parsed = prism.parse(made["did"])
    assert parsed.operation.long_form() == made["did"]
    keys = {k.id: (k.usage, b"\x04" + k.x + k.y) for k in parsed.operation.public_keys}
    assert keys == {
        "master-0": (prism.MASTER, bytes.fromhex(made["master"])),
        "authentication-0": (prism.AUTHENTICATION, bytes.fromhex(made["authentication"])),
        "issuing-0": (prism.ISSUING, bytes.fromhex(made["issuing"])),
    }
    doc = parsed.document()
    assert doc["authentication"] == [f"{made['did']}#authentication-0"]
    assert doc["assertionMethod"] == [f"{made['did']}#issuing-0"]
    x = bytes.fromhex(made["authentication"])[1:33]
    assert jwk_x_by_id(doc["verificationMethod"])[f"{made['did']}#authentication-0"] == b64u(x)


def test_our_prism_did_resolves_in_the_sdk_to_the_same_keys(sdk, ours):
    seen = sdk["ours"]["prism"]
    assert "error" not in seen, seen
    did = ours["prism"].did
    assert seen["id"] == did
    assert seen["authentication"] == [f"{did}#authentication-0"]
    sdk_keys = {m["id"]: b58decode(m["multibase"][1:]) for m in seen["methods"]}
    expected = {}
    for key_id, private in ours["prism"].keys.items():
        numbers = private.public_key().public_numbers()
        expected[f"{did}#{key_id}"] = (
            b"\x04" + numbers.x.to_bytes(32, "big") + numbers.y.to_bytes(32, "big")
        )
    assert sdk_keys == expected
