"""The messaging contract: what pack produces, what unpack accepts, what it refuses and why,
and how a message reaches a holder behind a mediator (DIDComm Messaging v2 §5, Routing 2.0)."""

from __future__ import annotations

import hashlib
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from joserfc import jwe as jose
from joserfc.jwk import OKPKey

from app.didcomm import jwe, messaging, peer_did
from app.didcomm.encoding import b64url, b64url_decode
from app.didcomm.errors import (
    DecryptionFailed,
    Malformed,
    MessageError,
    NoService,
    NotEncrypted,
    SenderMismatch,
    TooLarge,
    UnknownRecipient,
    UnknownSender,
    Unsupported,
)

MEDIATOR_URL = "https://mediator.example/didcomm"


@pytest.fixture(scope="module")
def verity():
    return peer_did.make("https://verity.example/didcomm")


@pytest.fixture(scope="module")
def mediator():
    return peer_did.make(MEDIATOR_URL)


@pytest.fixture(scope="module")
def holder(mediator):
    return peer_did.make(mediator.did)


def hello(**headers):
    return messaging.message("https://example.org/hello/1.0/hi", {"text": "hi"}, **headers)


def header(raw: bytes) -> dict:
    return json.loads(b64url_decode(json.loads(raw)["protected"]))


def unpack_as(did, raw, **kwargs):
    return messaging.unpack(raw, private_keys=messaging.private_keys(did), **kwargs)


def test_authcrypt_round_trip_proves_the_sender(verity, holder):
    sent = hello(thid="t-1")
    got = unpack_as(verity, messaging.pack(sent, to_did=verity.did, sender=holder))
    assert got.sender == holder.did
    assert got.sender_kid == f"{holder.did}#key-1"
    assert got.recipient_kid == f"{verity.did}#key-1"
    assert got.message["from"] == holder.did
    assert got.message["to"] == [verity.did]
    assert {k: got.message[k] for k in sent} == sent


def test_anoncrypt_round_trip_names_no_sender(verity):
    got = unpack_as(verity, messaging.pack(hello(), to_did=verity.did, sender=None))
    assert got.sender is None and got.sender_kid is None
    assert "from" not in got.message


def test_authcrypt_header_is_what_the_didcomm_library_checks(verity, holder):
    raw = messaging.pack(hello(), to_did=verity.did, sender=holder)
    protected = header(raw)
    skid = f"{holder.did}#key-1"
    assert protected["typ"] == "application/didcomm-encrypted+json"
    assert protected["alg"] == "ECDH-1PU+A256KW"
    assert protected["enc"] == "A256CBC-HS512"
    assert protected["skid"] == skid
    assert b64url_decode(protected["apu"]) == skid.encode()
    assert protected["epk"]["crv"] == "X25519" and "d" not in protected["epk"]
    digest = hashlib.sha256(f"{verity.did}#key-1".encode()).digest()
    assert protected["apv"] == b64url(digest)
    assert json.loads(raw)["recipients"][0]["header"] == {"kid": f"{verity.did}#key-1"}


def test_anoncrypt_header_has_no_sender(verity):
    protected = header(messaging.pack(hello(), to_did=verity.did, sender=None))
    assert protected["alg"] == "ECDH-ES+A256KW"
    assert protected["enc"] == "A256CBC-HS512"
    assert "skid" not in protected and "apu" not in protected


def two_key_did():
    keys = [X25519PrivateKey.generate() for _ in range(2)]
    did = peer_did.encode(
        [jwe.public_bytes(k) for k in keys],
        [],
        [{"type": "DIDCommMessaging", "serviceEndpoint": {"uri": "https://two.example"}}],
    )
    return did, {f"{did}#key-{i + 1}": k for i, k in enumerate(keys)}


def test_every_key_agreement_key_of_the_recipient_can_decrypt(holder):
    did, keys = two_key_did()
    raw = messaging.pack(hello(), to_did=did, sender=holder)
    kids = [r["header"]["kid"] for r in json.loads(raw)["recipients"]]
    assert kids == [f"{did}#key-1", f"{did}#key-2"]
    assert header(raw)["apv"] == jwe.apv(list(reversed(kids)))  # sorted, whatever the order
    for kid, key in keys.items():
        got = messaging.unpack(raw, private_keys={kid: key}.get)
        assert got.recipient_kid == kid and got.sender == holder.did


def test_pack_refuses_a_from_that_is_not_the_sender(verity, holder):
    with pytest.raises(SenderMismatch):
        messaging.pack(hello(**{"from": verity.did}), to_did=verity.did, sender=holder)
    with pytest.raises(SenderMismatch):
        messaging.pack(hello(**{"from": holder.did}), to_did=verity.did, sender=None)
    with pytest.raises(MessageError, match="id and type"):
        messaging.pack({"body": {}}, to_did=verity.did, sender=holder)


# Refusals: each names its reason.


def test_refuses_more_than_the_size_limit(verity, holder):
    big = hello()
    big["body"]["text"] = "x" * messaging.MAX_MESSAGE_BYTES
    raw = messaging.pack(big, to_did=verity.did, sender=holder)
    with pytest.raises(TooLarge) as caught:
        unpack_as(verity, raw)
    assert str(messaging.MAX_MESSAGE_BYTES) in caught.value.reason
    # Counted in bytes, also when given text: 100 KiB of three-byte characters is too much.
    wide = hello()
    wide["body"]["text"] = "\u20ac" * (100 * 1024)
    text = json.dumps(wide, ensure_ascii=False)
    assert len(text) < messaging.MAX_MESSAGE_BYTES < len(text.encode())
    with pytest.raises(TooLarge):
        unpack_as(verity, text)


@pytest.mark.parametrize("raw", [b"not json", b"\xff\xfe", b"[1, 2]", b'"jwe"'])
def test_refuses_what_is_not_json_or_not_an_object(verity, raw):
    with pytest.raises(Malformed):
        unpack_as(verity, raw)


def test_refuses_a_plaintext_message(verity, holder):
    plaintext = json.dumps({**hello(), "from": holder.did, "to": [verity.did]}).encode()
    with pytest.raises(NotEncrypted, match="plaintext"):
        unpack_as(verity, plaintext)


def test_refuses_a_signed_message(verity):
    signed = {"payload": b64url(b"{}"), "signatures": [{"protected": "e30", "signature": "AA"}]}
    with pytest.raises(NotEncrypted, match="signed"):
        unpack_as(verity, json.dumps(signed).encode())


def test_refuses_a_compact_or_flattened_jwe(verity, holder):
    full = json.loads(messaging.pack(hello(), to_did=verity.did, sender=holder))
    flattened = {k: v for k, v in full.items() if k != "recipients"}
    flattened.update(full["recipients"][0])
    with pytest.raises(Malformed, match="general serialization"):
        unpack_as(verity, json.dumps(flattened).encode())
    with pytest.raises(Malformed):
        unpack_as(verity, json.dumps({**full, "tag": 5}).encode())


def test_refuses_a_message_for_someone_else(verity, holder):
    raw = messaging.pack(hello(), to_did=holder.did, sender=verity)
    with pytest.raises(UnknownRecipient):
        unpack_as(verity, raw)


def test_refuses_a_bad_tag(verity, holder):
    envelope = json.loads(messaging.pack(hello(), to_did=verity.did, sender=holder))
    tag = bytearray(b64url_decode(envelope["tag"]))
    tag[0] ^= 1
    envelope["tag"] = b64url(bytes(tag))
    with pytest.raises(DecryptionFailed):
        unpack_as(verity, json.dumps(envelope).encode())


def test_refuses_an_altered_ciphertext(verity, holder):
    envelope = json.loads(messaging.pack(hello(), to_did=verity.did, sender=holder))
    data = bytearray(b64url_decode(envelope["ciphertext"]))
    data[-1] ^= 1
    envelope["ciphertext"] = b64url(bytes(data))
    with pytest.raises(DecryptionFailed):
        unpack_as(verity, json.dumps(envelope).encode())


def test_refuses_a_message_whose_skid_names_a_key_that_did_not_encrypt_it(verity, holder):
    """ECDH-1PU: the sender's static key enters the KDF, so naming another sender fails."""
    forger = X25519PrivateKey.generate()
    plaintext = json.dumps({**hello(), "from": holder.did, "to": [verity.did]}).encode()
    envelope = jwe.encrypt(
        plaintext,
        [(f"{verity.did}#key-1", b64url_decode(verity.secrets[f"{verity.did}#key-1"]["x"]))],
        sender=(f"{holder.did}#key-1", forger),
    )
    with pytest.raises(DecryptionFailed):
        unpack_as(verity, json.dumps(envelope).encode())


def reheader(raw: bytes, **changes) -> bytes:
    envelope = json.loads(raw)
    protected = json.loads(b64url_decode(envelope["protected"]))
    protected.update(changes)
    envelope["protected"] = b64url(json.dumps(protected).encode())
    return json.dumps(envelope).encode()


@pytest.mark.parametrize(
    "changes",
    [
        {"alg": "ECDH-ES"},
        {"alg": "RSA-OAEP"},
        {"enc": "XC20P"},
        {"enc": "A256GCM"},  # not with ECDH-1PU key wrapping (draft §2.1)
        {"epk": {"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}},
    ],
)
def test_refuses_unsupported_algorithms(verity, holder, changes):
    raw = messaging.pack(hello(), to_did=verity.did, sender=holder)
    with pytest.raises(Unsupported):
        unpack_as(verity, reheader(raw, **changes))


def test_refuses_a_header_whose_apv_or_apu_does_not_match(verity, holder):
    raw = messaging.pack(hello(), to_did=verity.did, sender=holder)
    with pytest.raises(Malformed, match="apv"):
        unpack_as(verity, reheader(raw, apv=jwe.apv(["did:example:other#key-1"])))
    with pytest.raises(Malformed, match="apu"):
        unpack_as(verity, reheader(raw, apu=b64url(b"did:example:other#key-1")))


def test_reads_anoncrypt_with_a256gcm(verity):
    """Other agents may anoncrypt with A256GCM (DIDComm v2 §5.1.4): written here with joserfc,
    the ephemeral key in the protected header as DIDComm agents write it."""
    kid = f"{verity.did}#key-1"
    plaintext = json.dumps({**hello(), "to": [verity.did]}).encode()
    ephemeral = OKPKey.generate_key("X25519", private=True)
    protected = {"typ": jwe.TYP, "alg": "ECDH-ES+A256KW", "enc": "A256GCM", "apv": jwe.apv([kid])}
    obj = jose.GeneralJSONEncryption(
        {**protected, "epk": ephemeral.as_dict(private=False)}, plaintext
    )
    recipient = {"kty": "OKP", "crv": "X25519", "x": verity.secrets[kid]["x"]}
    obj.add_recipient({"kid": kid}, OKPKey.import_key(recipient))
    obj.recipients[0].ephemeral_key = ephemeral
    registry = jose.JWERegistry(algorithms=["ECDH-ES+A256KW", "A256GCM"])
    envelope = dict(jose.encrypt_json(obj, None, registry=registry))
    envelope["recipients"][0]["header"] = {"kid": kid}
    raw = json.dumps(envelope).encode()
    assert header(raw)["enc"] == "A256GCM"
    got = unpack_as(verity, raw)
    assert got.message["body"] == {"text": "hi"} and got.sender is None


def test_refuses_a_from_other_than_the_authenticated_sender(verity, holder):
    kid = f"{verity.did}#key-1"
    sender_kid = f"{holder.did}#key-1"
    sender_key = X25519PrivateKey.from_private_bytes(b64url_decode(holder.secrets[sender_kid]["d"]))
    for plaintext in ({**hello(), "from": verity.did}, hello()):
        envelope = jwe.encrypt(
            json.dumps(plaintext).encode(),
            [(kid, b64url_decode(verity.secrets[kid]["x"]))],
            sender=(sender_kid, sender_key),
        )
        with pytest.raises(SenderMismatch, match="from"):
            unpack_as(verity, json.dumps(envelope).encode())


def test_refuses_a_to_that_does_not_name_us(verity, holder):
    raw = messaging.pack(hello(to=[holder.did]), to_did=verity.did, sender=holder)
    with pytest.raises(SenderMismatch, match="to"):
        unpack_as(verity, raw)


def test_refuses_a_sender_of_an_unknown_did_method(verity):
    """A resolver that knows did:example lets it pack; ours (did:peer:2 only) refuses it."""
    key = X25519PrivateKey.generate()
    public = jwe.public_bytes(key)
    stranger = peer_did.NewPeerDid(
        "did:example:stranger",
        {
            "did:example:stranger#key-1": {
                "crv": "X25519",
                "x": b64url(public),
                "d": b64url(key.private_bytes_raw()),
            }
        },
    )

    def knows_example(did):
        if did == stranger.did:
            return {
                "id": did,
                "verificationMethod": [
                    {
                        "id": f"{did}#key-1",
                        "publicKeyJwk": {"kty": "OKP", "crv": "X25519", "x": b64url(public)},
                    }
                ],
                "keyAgreement": [f"{did}#key-1"],
            }
        return messaging.resolve_peer(did)

    raw = messaging.pack(hello(), to_did=verity.did, sender=stranger, resolve=knows_example)
    assert unpack_as(verity, raw, resolve=knows_example).sender == stranger.did
    with pytest.raises(UnknownSender, match="did:example"):
        unpack_as(verity, raw)


def test_refuses_a_sender_key_missing_from_its_did(verity, holder, mediator):
    raw = messaging.pack(hello(), to_did=verity.did, sender=holder)
    with pytest.raises(UnknownSender):
        unpack_as(verity, raw, resolve=lambda did: messaging.resolve_peer(mediator.did))


# Routing to a holder.


def test_for_holder_behind_a_mediator_wraps_a_forward(verity, holder, mediator):
    sent = hello(thid="t-9")
    out = messaging.for_holder(sent, sender=verity, to_did=holder.did)
    assert out.url == MEDIATOR_URL
    assert out.content_type == "application/didcomm-encrypted+json"
    forward = unpack_as(mediator, out.body)
    assert forward.sender is None  # anoncrypted: the mediator learns nothing of the sender
    assert forward.message["type"] == "https://didcomm.org/routing/2.0/forward"
    assert forward.message["body"] == {"next": holder.did}
    assert forward.message["to"] == [mediator.did]
    [attachment] = forward.message["attachments"]
    assert attachment["media_type"] == "application/json"
    inner = unpack_as(holder, json.dumps(attachment["data"]["json"]).encode())
    assert inner.sender == verity.did
    assert inner.message["thid"] == "t-9" and inner.message["body"] == sent["body"]
    with pytest.raises(UnknownRecipient):
        unpack_as(mediator, json.dumps(attachment["data"]["json"]).encode())


def test_for_holder_with_an_http_endpoint_sends_directly(verity, mediator):
    out = messaging.for_holder(hello(), sender=verity, to_did=mediator.did)
    assert out.url == MEDIATOR_URL
    assert unpack_as(mediator, out.body).sender == verity.did


def test_for_holder_refuses_a_did_without_a_usable_service(verity):
    bare = peer_did.encode([jwe.public_bytes(X25519PrivateKey.generate())], [], [])
    with pytest.raises(NoService):
        messaging.for_holder(hello(), sender=verity, to_did=bare)
    ftp = peer_did.make("ftp://files.example/")
    with pytest.raises(NoService, match="http"):
        messaging.for_holder(hello(), sender=verity, to_did=ftp.did)
    routed = peer_did.make("https://x.example", routing_keys=["did:example:r#key-1"])
    with pytest.raises(NoService, match="routing keys"):
        messaging.for_holder(hello(), sender=verity, to_did=routed.did)


def test_message_helper_gives_fresh_ids_and_seconds():
    a, b = hello(), hello()
    assert a["id"] != b["id"]
    assert abs(a["created_time"] - b["created_time"]) < 5 and a["created_time"] < 10**11
