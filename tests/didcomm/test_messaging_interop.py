"""Messaging against the Hyperledger Identus SDK 7.0.0 itself (what the Socious Wallet runs):
its DIDCommWrapper (the didcomm Rust/WASM library) packs to Verity and unpacks what Verity
packs, including a forward through a mediator, and its own parser reads our ``_oob`` URLs.

The SDK runs once for the module (``identus/sdk_messaging.mjs``), in two rounds over
stdin/stdout: it makes a mediator DID and a holder DID behind it (holding their private keys
in an in-memory store), packs to our DID and parses our invitations; then it unpacks what we
packed for its DIDs.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.npm import ensure_node_modules

from app.didcomm import invitation, messaging, peer_did
from app.didcomm.errors import Unsupported

SDK_DIR = Path(__file__).resolve().parent / "identus"
PRESENTATION = "https://didcomm.atalaprism.io/present-proof/3.0/presentation"
REQUEST = "https://didcomm.atalaprism.io/present-proof/3.0/request-presentation"


def _oob_cases(ours: str) -> dict[str, str]:
    made = invitation.make(ours, goal="Prove you are over 18? -> ~ yes", invitation_id="inv-ok")
    expired = invitation.make(ours, goal="old", invitation_id="inv-old", expires_time=1)
    # Negative control: the spec's base64url, for an invitation whose encoding has - and _.
    control = invitation.make(ours, goal="??>>~~", invitation_id="inv-url")
    text = json.dumps(control, separators=(",", ":")).encode()
    b64url = base64.urlsafe_b64encode(text).decode()
    assert set(b64url) & {"-", "_"}
    base = "https://verity.example/connect"
    # One value per padding length (none, "=", "=="): the SDK's decoder must take each.
    padded = {}
    for n in range(3):
        value = invitation.encode(invitation.make(ours, goal="x" * n, invitation_id="inv-pad"))
        padded[f"padding_{len(value) - len(value.rstrip('='))}"] = f"{base}?_oob={value}"
    assert sorted(padded) == ["padding_0", "padding_1", "padding_2"]
    return {
        **padded,
        "ours": invitation.oob_url(base, made),
        "ours_with_query": invitation.oob_url(base + "?lang=en", made),
        "expired": invitation.oob_url(base, expired),
        "base64url": f"{base}?_oob={b64url}",
    }


class Sdk:
    """The running SDK script, its first answer, and its second (filled by ``unpack``)."""

    def __init__(self, process: subprocess.Popen[str], first: dict, oob: dict[str, str]):
        self.process = process
        self.first = first
        self.urls = oob
        self.oob = dict(zip(oob, first["oob"], strict=True))

    def unpack(self, packed: dict[str, bytes]) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        line = {"unpack": {k: v.decode() for k, v in packed.items()}}
        self.process.stdin.write(json.dumps(line) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())


@pytest.fixture(scope="module")
def ours():
    return peer_did.make("https://verity.example/didcomm")


@pytest.fixture(scope="module")
def sdk(ours):
    ensure_node_modules(SDK_DIR, "@hyperledger/identus-sdk")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run the Identus SDK")
    oob = _oob_cases(ours.did)
    process = subprocess.Popen(
        [node, "sdk_messaging.mjs"],
        cwd=SDK_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"ours": ours.did, "oob": list(oob.values())}) + "\n")
    process.stdin.flush()
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise RuntimeError(f"Identus SDK script failed: {process.communicate()[1]}")
    try:
        yield Sdk(process, json.loads(line), oob)
    finally:
        process.kill()
        process.communicate(timeout=30)


@pytest.fixture(scope="module")
def sent_to_sdk(sdk, ours):
    """Round two, once: what the SDK made of each message we packed for its DIDs."""
    holder, mediator = sdk.first["holder"], sdk.first["mediator"]
    request = messaging.message(
        REQUEST,
        {"goal_code": "Request Proof Presentation", "will_confirm": False, "proof_types": []},
        thid="thread-7",
        attachments=[
            {
                "id": "req-1",
                "media_type": "application/json",
                "format": "prism/jwt",
                "data": {"json": {"options": {"challenge": "c-1", "domain": "verity.example"}}},
            }
        ],
    )
    routed = messaging.for_holder(request, sender=ours, to_did=holder)
    got = sdk.unpack(
        {
            "authcrypt": messaging.pack(request, to_did=holder, sender=ours),
            "anoncrypt": messaging.pack(request, to_did=holder, sender=None),
            "forward": routed.body,
        }
    )
    forward = got["forward"]
    inner = {}
    if "message" in forward:
        inner_jwe = forward["message"]["attachments"][0]["data"]["json"]
        inner = sdk.unpack({"inner": json.dumps(inner_jwe).encode()})["inner"]
    return {"request": request, "routed": routed, "mediator": mediator, **got, "inner": inner}


# (a) The SDK packs, Verity unpacks.


def test_sdk_authcrypt_unpacks_here_with_the_sdks_peer_did_as_sender(sdk, ours):
    packed = sdk.first["packed"]["authcrypt"]
    assert isinstance(packed, str), packed
    got = messaging.unpack(packed.encode(), private_keys=messaging.private_keys(ours))
    holder = sdk.first["holder"]
    assert got.sender == holder
    assert got.sender_kid == f"{holder}#key-1"
    assert got.recipient_kid == f"{ours.did}#key-1"
    assert got.message["type"] == PRESENTATION
    assert got.message["from"] == holder and got.message["to"] == [ours.did]
    assert got.message["thid"] == "thread-1"
    assert got.message["body"] == {"goal_code": "interop"}
    [attachment] = got.message["attachments"]
    assert attachment["id"] == "vp-1" and attachment["format"] == "prism/jwt"
    assert attachment["data"]["base64"] == "ZXlKaGJHY2lPaUpGVXpJMU5rc2lmUQ"


def test_sdk_authcrypt_header_is_ecdh_1pu_a256cbc_hs512(sdk, ours):
    envelope = json.loads(sdk.first["packed"]["authcrypt"])
    protected = json.loads(base64.urlsafe_b64decode(envelope["protected"] + "=="))
    assert (protected["alg"], protected["enc"]) == ("ECDH-1PU+A256KW", "A256CBC-HS512")
    assert [r["header"]["kid"] for r in envelope["recipients"]] == [f"{ours.did}#key-1"]


def test_sdk_anonymous_messages_use_xc20p_which_is_refused_with_a_reason(sdk, ours):
    """The SDK anoncrypts with XC20P; every message a wallet sends us names its sender."""
    packed = sdk.first["packed"]["anoncrypt"]
    assert isinstance(packed, str), packed
    with pytest.raises(Unsupported, match="XC20P"):
        messaging.unpack(packed.encode(), private_keys=messaging.private_keys(ours))


def test_sdk_message_altered_in_transit_is_refused(sdk, ours):
    envelope = json.loads(sdk.first["packed"]["authcrypt"])
    envelope["ciphertext"] = "A" + envelope["ciphertext"][1:]
    with pytest.raises(messaging.MessageError):
        messaging.unpack(json.dumps(envelope).encode(), private_keys=messaging.private_keys(ours))


# (b) Verity packs, the SDK unpacks.


def test_sdk_unpacks_our_authcrypt_and_sees_us_as_sender(sent_to_sdk, sdk, ours):
    got = sent_to_sdk["authcrypt"]
    assert "message" in got, got
    message = got["message"]
    assert message["from"] == ours.did
    assert message["to"] == sdk.first["holder"]
    assert message["type"] == REQUEST and message["thid"] == "thread-7"
    assert message["body"] == sent_to_sdk["request"]["body"]
    [attachment] = message["attachments"]
    assert attachment["id"] == "req-1"
    assert attachment["data"]["json"]["options"]["challenge"] == "c-1"


def test_sdk_unpacks_our_anoncrypt(sent_to_sdk):
    got = sent_to_sdk["anoncrypt"]
    assert "message" in got, got
    assert got["message"]["from"] is None
    assert got["message"]["type"] == REQUEST


def test_forward_goes_to_the_mediators_url_and_the_sdk_reads_both_layers(sent_to_sdk, sdk, ours):
    routed = sent_to_sdk["routed"]
    assert routed.url == "http://127.0.0.1:9/didcomm"  # the mediator DID's own endpoint
    forward = sent_to_sdk["forward"]
    assert "message" in forward, forward
    assert forward["message"]["type"] == "https://didcomm.org/routing/2.0/forward"
    assert forward["message"]["from"] is None
    assert forward["message"]["to"] == sent_to_sdk["mediator"]
    assert forward["message"]["body"] == {"next": sdk.first["holder"]}
    inner = sent_to_sdk["inner"]
    assert "message" in inner, inner
    assert inner["message"]["from"] == ours.did
    assert inner["message"]["thid"] == "thread-7"


# (c) The SDK's invitation parser reads our _oob URLs.


def test_sdk_parses_our_oob_url(sdk, ours):
    for case in ("ours", "ours_with_query"):
        parsed = sdk.oob[case]
        assert "error" not in parsed, (case, parsed)
        assert parsed["id"] == "inv-ok" and parsed["from"] == ours.did
        assert parsed["body"]["goal"] == "Prove you are over 18? -> ~ yes"
        assert parsed["body"]["accept"] == ["didcomm/v2"]
        assert invitation.is_safe(sdk.urls[case].split("_oob=", 1)[1])


def test_sdk_reads_oob_values_with_any_padding(sdk):
    for case in ("padding_0", "padding_1", "padding_2"):
        assert sdk.oob[case].get("id") == "inv-pad", (case, sdk.oob[case])


def test_sdk_refuses_expired_and_base64url_invitations(sdk):
    """Controls: the parser does refuse; our URLs pass because of how they are encoded."""
    assert "InvitationIsInvalid" in sdk.oob["expired"].get("error", ""), sdk.oob["expired"]
    assert "InvitationIsInvalid" in sdk.oob["base64url"].get("error", ""), sdk.oob["base64url"]
