"""The DIDComm v2 encryption envelope: JWE in the general JSON serialization, X25519 keys.

DIDComm Messaging v2 §5.1 (Message Encryption) names two modes, both with one ephemeral key
shared by all recipients and carried in the *protected* header:

- authcrypt: ``ECDH-1PU+A256KW`` with ``A256CBC-HS512`` (draft-madden-jose-ecdh-1pu-04), what
  the Hyperledger Identus SDK 7 sends and expects (``src/mercury/didcomm/Wrapper.ts``:
  ``enc_alg_auth: "A256cbcHs512Ecdh1puA256kw"``, via the ``didcomm`` Rust/WASM library);
- anoncrypt: ``ECDH-ES+A256KW`` with ``A256CBC-HS512`` (written) or ``A256GCM`` (also read).

The header follows §5.1.1 as that library checks it: ``apv`` = base64url(SHA-256 of the
recipients' key ids, sorted, joined by ``.``), ``apu`` = base64url(``skid``), ``kid`` per
recipient, ``typ`` = ``application/didcomm-encrypted+json``.

Built on ``joserfc`` (its ``drafts.jwe_ecdh_1pu`` puts the content tag into the key-wrapping
KDF as ECDH-1PU §2.3 requires; measured against the SDK in
``tests/didcomm/test_messaging_interop.py``). One adjustment: joserfc gives each recipient its
own ephemeral key in the per-recipient header, which the DIDComm library refuses, so here one
ephemeral key is shared by every recipient, placed in the protected header (hence covered by
the AAD), and the per-recipient copies joserfc writes are dropped.

Not accepted: ``XC20P`` (the SDK's anoncrypt choice, which it never uses towards a verifier:
every message the wallet sends us names its sender, so it is authcrypted), NIST curves.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from joserfc import jwe
from joserfc.drafts.jwe_ecdh_1pu import register_ecdh_1pu
from joserfc.errors import JoseError
from joserfc.jwk import OKPKey

from app.didcomm.encoding import b64url, b64url_decode, read_json
from app.didcomm.errors import DecryptionFailed, Malformed, NotEncrypted, Unsupported

TYP = "application/didcomm-encrypted+json"
AUTHCRYPT = "ECDH-1PU+A256KW"
ANONCRYPT = "ECDH-ES+A256KW"
A256CBC_HS512 = "A256CBC-HS512"
A256GCM = "A256GCM"
# ECDH-1PU in key-wrapping mode needs a compactly committing cipher (draft §2.1): CBC-HMAC only.
ACCEPTED = {AUTHCRYPT: {A256CBC_HS512}, ANONCRYPT: {A256CBC_HS512, A256GCM}}

register_ecdh_1pu()
_REGISTRY = jwe.JWERegistry(algorithms=[AUTHCRYPT, ANONCRYPT, A256CBC_HS512, A256GCM])
# joserfc's defaults (1 KiB protected header, 64 KiB ciphertext) are too small for DIDComm: a
# holder's did:peer:2 embeds its mediator's DID, so skid and apu alone pass 1 KiB, and a
# forward carries a whole message. The caller bounds the message as a whole instead.
_REGISTRY.max_protected_header_length = 16 * 1024
_REGISTRY.max_ciphertext_length = 1024 * 1024
_RAW_PRIVATE = (
    serialization.Encoding.Raw,
    serialization.PrivateFormat.Raw,
    serialization.NoEncryption(),
)
_RAW_PUBLIC = serialization.Encoding.Raw, serialization.PublicFormat.Raw


def _okp(public: bytes, private: X25519PrivateKey | None = None) -> OKPKey:
    return _okp_of(public, private.private_bytes(*_RAW_PRIVATE) if private is not None else None)


@functools.lru_cache(maxsize=256)
def _okp_of(public: bytes, private: bytes | None) -> OKPKey:
    """joserfc's key object for raw X25519 bytes, kept for the keys that come back (ours on
    every message, a holder's for its whole exchange): importing one costs as much as an
    X25519 agreement (bench/didcomm.py)."""
    jwk = {"kty": "OKP", "crv": "X25519", "x": b64url(public)}
    if private is not None:
        jwk["d"] = b64url(private)
    return OKPKey.import_key(jwk)


def public_bytes(private: X25519PrivateKey) -> bytes:
    """The raw 32-byte public key of an X25519 private key."""
    return private.public_key().public_bytes(*_RAW_PUBLIC)


def apv(kids: list[str]) -> str:
    """DIDComm v2 §5.1.1: base64url(SHA-256(sorted recipient key ids joined by ``.``))."""
    return b64url(hashlib.sha256(".".join(sorted(kids)).encode()).digest())


def encrypt(
    plaintext: bytes,
    recipients: list[tuple[str, bytes]],
    *,
    sender: tuple[str, X25519PrivateKey] | None = None,
) -> dict[str, Any]:
    """A JWE to every ``(kid, raw X25519 public key)``: authcrypt if ``sender`` is
    ``(skid, private key)``, else anoncrypt; always ``A256CBC-HS512``."""
    if not recipients:
        raise Unsupported("The recipient has no X25519 key agreement key to encrypt to.")
    ephemeral = OKPKey.generate_key("X25519", private=True)
    epk = {"kty": "OKP", "crv": "X25519", "x": ephemeral.as_dict(private=False)["x"]}
    protected: dict[str, Any] = {"typ": TYP, "alg": ANONCRYPT, "enc": A256CBC_HS512}
    sender_key = None
    if sender is not None:
        skid, private = sender
        sender_key = _okp(public_bytes(private), private)
        protected.update(alg=AUTHCRYPT, skid=skid, apu=b64url(skid.encode()))
    protected.update(apv=apv([kid for kid, _ in recipients]), epk=epk)
    obj = jwe.GeneralJSONEncryption(protected, plaintext)
    for kid, public in recipients:
        obj.add_recipient({"kid": kid}, _okp(public))
        recipient = obj.recipients[-1]
        recipient.ephemeral_key = ephemeral
        recipient.sender_key = sender_key
    out = dict(jwe.encrypt_json(obj, None, registry=_REGISTRY))
    for entry in out["recipients"]:
        entry["header"] = {"kid": entry["header"]["kid"]}
    return out


@dataclass(frozen=True)
class Envelope:
    """A JWE read but not yet decrypted: its protected header and recipient key ids."""

    jwe: dict[str, Any]
    protected: dict[str, Any]
    kids: list[str]

    @property
    def alg(self) -> str:
        return self.protected["alg"]

    @property
    def skid(self) -> str | None:
        return self.protected.get("skid")


def read(message: Any) -> Envelope:
    """Check the shape of a JWE (general serialization) and its DIDComm header, no keys used."""
    if not isinstance(message, dict):
        raise Malformed("The message is not a JSON object.")
    if "signatures" in message or "signature" in message:
        raise NotEncrypted("A signed message was sent where only encrypted ones are accepted.")
    if "ciphertext" not in message:
        raise NotEncrypted("A plaintext message was sent where only encrypted ones are accepted.")
    fields = ("protected", "iv", "ciphertext", "tag")
    if not all(isinstance(message.get(f), str) for f in fields):
        raise Malformed("The JWE lacks one of protected, iv, ciphertext, tag.")
    recipients = message.get("recipients")
    if not isinstance(recipients, list) or not recipients:
        raise Malformed("The JWE is not in the general serialization (no recipients list).")
    kids = []
    for entry in recipients:
        header = entry.get("header") if isinstance(entry, dict) else None
        if not isinstance(header, dict) or not isinstance(header.get("kid"), str):
            raise Malformed("A recipient of the JWE has no kid.")
        if not isinstance(entry.get("encrypted_key"), str):
            raise Malformed("A recipient of the JWE has no encrypted_key.")
        kids.append(header["kid"])
    try:
        header = b64url_decode(message["protected"])
    except ValueError:
        raise Malformed("The JWE protected header is not base64url.") from None
    protected = read_json(header, Malformed, "The JWE protected header")
    if not isinstance(protected, dict):
        raise Malformed("The JWE protected header is not a JSON object.")
    alg, enc = protected.get("alg"), protected.get("enc")
    if alg not in ACCEPTED:
        raise Unsupported(f"The key management algorithm {alg!r} is not accepted.")
    if enc not in ACCEPTED[alg]:
        raise Unsupported(f"The content encryption {enc!r} is not accepted with {alg}.")
    epk = protected.get("epk")
    if not isinstance(epk, dict) or epk.get("kty") != "OKP" or epk.get("crv") != "X25519":
        raise Unsupported("The ephemeral key is not an X25519 key in the protected header.")
    if protected.get("apv") != apv(kids):
        raise Malformed("The apv does not match the recipients' key ids (DIDComm v2 §5.1.1).")
    if alg == AUTHCRYPT:
        skid = protected.get("skid")
        if not isinstance(skid, str):
            raise Malformed("An authcrypt message names no sender key (skid).")
        if "apu" in protected and protected["apu"] != b64url(skid.encode()):
            raise Malformed("The apu does not match the skid (DIDComm v2 §5.1.1).")
    return Envelope(message, protected, kids)


def decrypt(
    envelope: Envelope,
    kid: str,
    private: X25519PrivateKey,
    sender_public: bytes | None = None,
) -> bytes:
    """The plaintext, decrypted with the private key of recipient ``kid`` (and the sender's
    public key for authcrypt); :class:`DecryptionFailed` on any cryptographic failure."""
    if (envelope.alg == AUTHCRYPT) != (sender_public is not None):
        raise Unsupported("Authcrypt needs the sender's key; anoncrypt takes none.")
    entry = next(e for e in envelope.jwe["recipients"] if e["header"]["kid"] == kid)
    single = {k: v for k, v in envelope.jwe.items() if k != "recipients"}
    single["recipients"] = [entry]
    sender_key = _okp(sender_public) if sender_public is not None else None
    try:
        opened = jwe.decrypt_json(
            single,  # type: ignore[arg-type]
            _okp(public_bytes(private), private),
            registry=_REGISTRY,
            sender_key=sender_key,
        )
    except (JoseError, ValueError) as exc:
        raise DecryptionFailed(
            "The message could not be decrypted: altered in transit, or not encrypted by the "
            f"key it names ({type(exc).__name__})."
        ) from None
    assert opened.plaintext is not None
    return opened.plaintext
