"""A DIDComm presentation as the Socious Wallet sends it, opened and verified in process.

The figure is the agent's own work on one present-proof 3.0 presentation: open the authcrypt
envelope (ECDH-1PU+A256KW, A256CBC-HS512) with the organization's key, take the ``prism/jwt``
attachment, and verify the VP (ES256K by the holder's long-form did:prism) and the VC in it
(ES256K by the issuer's long-form did:prism, resolved from the DID itself, hash checked).

The floor is the raw cryptography the same message needs, with ``cryptography`` and keys
already loaded: the two X25519 agreements of ECDH-1PU (ephemeral and static), the AES key
unwrap, the AES-256-CBC decryption and HMAC-SHA-512 of the content, and the two ES256K
verifications. No database and no network: the status list check is left out (it is fetched
and cached, once per list per five minutes).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap, aes_key_wrap

try:
    import presenting
except ModuleNotFoundError:  # imported by the tests as bench.didcomm
    from bench import presenting

DOMAIN_URI = "https://verity.bench/didcomm"


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def presentation_message() -> tuple[dict, bytes, str, str, list]:
    """The verifier's DID, the packed presentation, its challenge and domain, and what the
    floor verifies (key, signature, signed bytes) for the two JWTs."""
    from app.didcomm import messaging, peer_did, prism, protocols

    verifier = peer_did.make(DOMAIN_URI)
    holder_peer = peer_did.make("https://holder.bench/inbox")
    issuer = prism.make({"master-0": prism.MASTER, "issuing-0": prism.ISSUING})
    holder = prism.make({"master-0": prism.MASTER, "authentication-0": prism.AUTHENTICATION})
    now = int(time.time())
    vc = prism.sign_es256k(
        {
            "iss": issuer.did,
            "sub": holder.did,
            "nbf": now - 60,
            "vc": {
                "@context": ["https://www.w3.org/2018/credentials/v1"],
                "type": ["VerifiableCredential"],
                "credentialSubject": {"id": holder.did, "type": "verification", "country": "DE"},
            },
        },
        issuer.keys["issuing-0"],
        f"{issuer.did}#issuing-0",
    )
    challenge, domain = secrets.token_urlsafe(24), verifier.did
    vp = prism.sign_es256k(
        {
            "iss": holder.did,
            "aud": domain,
            "nonce": challenge,
            "iat": now,
            "vp": {
                "@context": ["https://www.w3.org/2018/presentations/v1"],
                "type": ["VerifiablePresentation"],
                "verifiableCredential": [vc],
            },
        },
        holder.keys["authentication-0"],
        f"{holder.did}#authentication-0",
    )
    message = messaging.message(
        protocols.PRESENTATION,
        {},
        thid=str(uuid.uuid4()),
        attachments=[
            {
                "id": str(uuid.uuid4()),
                "media_type": "application/json",
                "format": protocols.PRISM_JWT,
                "data": {"base64": _b64u(vp.encode())},
            }
        ],
    )
    packed = messaging.pack(message, to_did=verifier.did, sender=holder_peer)
    checks = [
        _es256k_check(token, key)
        for token, key in (
            (vp, holder.keys["authentication-0"].public_key()),
            (vc, issuer.keys["issuing-0"].public_key()),
        )
    ]
    return {"verifier": verifier}, packed, challenge, domain, checks


def _es256k_check(token: str, key: ec.EllipticCurvePublicKey) -> tuple:
    head, body, signature = token.split(".")
    raw = _unb64u(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    return key, der, f"{head}.{body}".encode()


def didcomm_operations() -> tuple[Callable[[], object], Callable[[], object]]:
    """``(floor, verify)`` for one DIDComm presentation."""
    from app.didcomm import messaging, protocols
    from app.trust.fetch import Fetcher
    from app.vcjwt import verify_vp_jwt

    parties, packed, challenge, domain, checks = presentation_message()
    private_keys = messaging.private_keys(parties["verifier"])
    fetcher = Fetcher()
    floor = _floor(len(packed), checks)

    def verify() -> object:
        opened = messaging.unpack(packed, private_keys=private_keys)
        token = protocols.presented_jwt(opened.message)
        return verify_vp_jwt(
            token,
            audience=domain,
            nonce=challenge,
            now=datetime.now(UTC),
            fetcher=fetcher,
            anchors=[],
        )

    return floor, verify


def _floor(size: int, checks: list) -> Callable[[], None]:
    """The same amount of raw work: two X25519 agreements, a key unwrap, CBC decryption and
    HMAC of a message of this size, two ES256K verifications."""
    recipient, ephemeral, sender = (X25519PrivateKey.generate() for _ in range(3))
    ephemeral_public, sender_public = ephemeral.public_key(), sender.public_key()
    kek = os.urandom(32)
    cek = os.urandom(64)
    wrapped = aes_key_wrap(kek, cek)
    iv = os.urandom(16)
    content = os.urandom(size // 16 * 16)
    algorithm = ec.ECDSA(hashes.SHA256())

    def floor() -> None:
        recipient.exchange(ephemeral_public)
        recipient.exchange(sender_public)
        key = aes_key_unwrap(kek, wrapped)
        mac = hmac.HMAC(key[:32], hashes.SHA512())
        mac.update(content)
        mac.finalize()
        decryptor = Cipher(algorithms.AES(key[32:]), modes.CBC(iv)).decryptor()
        decryptor.update(content) + decryptor.finalize()
        for public, signature, message in checks:
            public.verify(signature, message, algorithm)

    return floor


def didcomm_rounds(rounds: int, seconds: float = 0.5) -> presenting.InProcess:
    """``floor | verify | floor | ... | floor`` for a DIDComm presentation."""
    return presenting.in_process_rounds(rounds, seconds, didcomm_operations())


if __name__ == "__main__":  # a quick look: python bench/didcomm.py
    measured = didcomm_rounds(5)
    floor = sorted(s.ops_per_second for s in measured.floor)
    verify = sorted(s.ops_per_second for s in measured.verify)
    print(json.dumps({"floor": floor, "verify": verify}))
