"""In-process figure of the issuer: SD-JWT VCs signed per second by ``app.oid4vci`` over one
raw ES256 signature per second with ``cryptography`` (the floor).

An issuance cannot cost less than its one signature; what the signer adds on top (salts,
disclosures, digests, JSON, base64url, the DER to R || S conversion) is what this measures.
Both run in this one thread, interleaved like the verifier's figure (``presenting.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

try:  # run as bench/run.py, beside it
    import presenting
except ModuleNotFoundError:  # imported by the tests as bench.issuing
    from bench import presenting

ISSUER = "http://127.0.0.1/issuers/bench"
STATUS_URI = f"{ISSUER}/status-lists/1"
LIFETIME = 365 * 24 * 3600


class SigningError(Exception):
    """The bench's credential is not one a verifier would accept; the message says why."""


def in_process_operations() -> tuple[Callable[[], object], Callable[[], str], dict]:
    """``(floor, sign, issuer_jwk)``: one raw ES256 signature of the credential's own signing input, and
    one whole SD-JWT VC (the bench's PID claims, ``cnf.jwk``, a status reference) signed with
    ``sign_sd_jwt_vc``. The keys are loaded once, as the issuer keeps an opened key."""
    from app.oid4vci.credential import sign_sd_jwt_vc
    from app.oid4vci.keys import generate_signing_key, public_jwk

    issuer_key = generate_signing_key()
    kid = public_jwk(issuer_key)["kid"]
    holder_jwk = presenting.public_jwk(ec.generate_private_key(ec.SECP256R1()))

    def sign() -> str:
        now = int(time.time())
        return sign_sd_jwt_vc(
            private_key=issuer_key,
            kid=kid,
            issuer=ISSUER,
            vct=presenting.PID_VCT,
            claims=presenting.PERSON,
            holder_jwk=holder_jwk,
            status_uri=STATUS_URI,
            status_idx=90_210,
            issued_at=now,
            expires_at=now + LIFETIME,
        )

    signing_input = sign().split("~", 1)[0].rpartition(".")[0].encode("ascii")
    sha256 = ec.ECDSA(hashes.SHA256())

    def floor() -> None:
        issuer_key.sign(signing_input, sha256)

    return floor, sign, public_jwk(issuer_key)


def check(credential: str, issuer_jwk: dict) -> None:
    """Raise ``SigningError`` unless ``credential`` verifies under ``issuer_jwk`` and discloses
    exactly the bench's claims: the figure must be about credentials worth issuing."""
    from app.sdjwt import SdJwtError, verify_jws

    issuer_jwt, *disclosures, last = credential.split("~")
    try:
        _, payload = verify_jws(issuer_jwt, issuer_jwk, ("ES256",), typ="dc+sd-jwt")
    except SdJwtError as exc:
        raise SigningError(f"the signed credential does not verify: {exc.reason}") from None
    by_digest = {
        base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode(): d
        for d in disclosures
    }

    def resolve(node: object) -> object:
        if not isinstance(node, dict):
            return node
        resolved = {name: resolve(value) for name, value in node.items() if name != "_sd"}
        for digest in node.get("_sd", ()):
            if digest not in by_digest:
                raise SigningError("the credential's digests do not match its disclosures")
            _, name, value = json.loads(presenting.unb64(by_digest.pop(digest)))
            resolved[name] = resolve(value)
        return resolved

    claims = resolve(payload)
    if last or by_digest:
        raise SigningError("the credential's disclosures do not match its digests")
    if {name: claims.get(name) for name in presenting.PERSON} != presenting.PERSON:
        raise SigningError("the credential does not disclose the bench's claims")


def in_process_rounds(rounds: int, seconds: float) -> presenting.InProcess:
    """``floor | sign | floor | ... | floor`` after a warm-up slice of each, one thread; the
    ``verify`` slices of the result are the signing ones."""
    floor, sign, issuer_jwk = in_process_operations()
    check(sign(), issuer_jwk)
    presenting.timed(floor, seconds)
    presenting.timed(sign, seconds)
    floors, signs = [presenting.timed(floor, seconds)], []
    for _ in range(rounds):
        signs.append(presenting.timed(sign, seconds))
        floors.append(presenting.timed(floor, seconds))
    return presenting.InProcess(floors, signs)
