"""Check DPoP proofs (RFC 9449) and make the server's DPoP nonces: protocol only, no storage.

A DPoP proof is a JWT of type ``dpop+jwt`` the wallet signs for one HTTP request with the key
its access token is bound to (``cnf.jkt``, the key's RFC 7638 thumbprint). It names the
method (``htm``) and the URI without query and fragment (``htu``), carries a unique ``jti``, an
``iat``, the server's ``nonce`` and, at a resource, the hash of the access token (``ath``).

Whether a ``jti`` was seen before needs storage: the caller keeps it until ``max_age`` past
its ``iat`` (``replay_window``) and refuses a second use. The nonces are stateless: an HMAC
over the time they were made, so any worker of the deployment accepts any other's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import string
import struct
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from app.oid4vci.keys import jwk_thumbprint
from app.sdjwt.encoding import b64url_encode
from app.sdjwt.errors import SdJwtError
from app.sdjwt.jws import allowed_alg, read_unverified, same_media_type, verify_jws

DPOP_TYP = "dpop+jwt"  # RFC 9449 §4.2
DPOP_SIGNING_ALGS = ("ES256",)  # advertised as dpop_signing_alg_values_supported
MAX_DPOP_BYTES = 8 * 1024
MAX_JTI_CHARS = 256
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
LABEL = "DPoP proof"
_NONCE_MAC_BYTES = 16


class DpopError(Exception):
    """A refused DPoP proof: ``invalid_dpop_proof``, or ``use_dpop_nonce`` when the nonce is
    missing or stale and a retry with the server's fresh nonce will do (RFC 9449 §8, §9)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def invalid(description: str) -> DpopError:
    return DpopError("invalid_dpop_proof", description)


@dataclass(frozen=True)
class DpopProof:
    """What a verified proof establishes: the key's thumbprint, and the ``jti`` and ``iat``
    the caller needs to refuse a replay."""

    jkt: str
    jti: str
    iat: int


def htu_of(url: str) -> str:
    """RFC 9449 §4.3 (point 9): the target URI without query and fragment, normalized as §4.2
    asks before comparing (RFC 3986 §6.2.2, §6.2.3): scheme and host case-insensitive, the
    scheme's default port and an empty port left out, percent-encoded unreserved characters
    decoded and other percent-encodings in upper case, an empty path as ``/``. Otherwise a
    wallet that writes the same URI another way is refused."""
    parts = urlsplit(url)
    scheme, netloc = parts.scheme.lower(), parts.netloc.lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default is not None and netloc.endswith(default):
        netloc = netloc[: -len(default)]
    netloc = netloc.removesuffix(":")
    path = _PERCENT.sub(_normal_escape, parts.path) or "/"
    return urlunsplit((scheme, netloc, path, "", ""))


_DEFAULT_PORTS = {"https": ":443", "http": ":80"}
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")


def _normal_escape(match: re.Match[str]) -> str:
    """RFC 3986 §6.2.2.1-2: an unreserved character stands for itself; other escapes in
    upper case."""
    character = chr(int(match.group(1), 16))
    return character if character in _UNRESERVED else f"%{match.group(1).upper()}"


def access_token_hash(access_token: str) -> str:
    """RFC 9449 §4.2 ``ath``: base64url of the SHA-256 of the token's ASCII."""
    return b64url_encode(hashlib.sha256(access_token.encode("ascii", "replace")).digest())


def verify_dpop_proof(
    proof: Any,
    *,
    method: str,
    url: str,
    now: int,
    nonce_valid: Any,
    access_token: str | None = None,
    max_age: int = 300,
    max_skew: int = 60,
) -> DpopProof:
    """RFC 9449 §4.3 checks, in its order; raises ``DpopError`` and nothing else.

    ``nonce_valid(nonce) -> bool`` says whether a nonce is one the server made and still
    takes; a proof without one, or with a stale one, is ``use_dpop_nonce`` (§8).
    """
    try:
        return _verify(proof, method, url, now, nonce_valid, access_token, max_age, max_skew)
    except DpopError:
        raise
    except SdJwtError as exc:
        raise invalid(exc.reason.replace("Token", LABEL)) from exc
    except Exception as exc:  # hostile input is a refusal, never a crash
        raise invalid("DPoP proof could not be verified") from exc


def _verify(
    proof: Any,
    method: str,
    url: str,
    now: int,
    nonce_valid: Any,
    access_token: str | None,
    max_age: int,
    max_skew: int,
) -> DpopProof:
    if not isinstance(proof, str) or not proof or "," in proof:
        raise invalid("DPoP header is not one compact JWT")
    if len(proof) > MAX_DPOP_BYTES:
        raise invalid("DPoP proof is too large")
    header, payload = read_unverified(proof, LABEL)
    if not same_media_type(header.get("typ"), DPOP_TYP):
        raise invalid(f"DPoP proof type header is not {DPOP_TYP}")
    allowed_alg(header, DPOP_SIGNING_ALGS, LABEL)
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or _PRIVATE_MEMBERS.intersection(jwk):
        raise invalid("DPoP proof header must carry the public key as jwk")
    verify_jws(proof, jwk, DPOP_SIGNING_ALGS, typ=DPOP_TYP, label=LABEL, decoded=(header, payload))
    jti = payload.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI_CHARS:
        raise invalid("DPoP proof has no usable jti")
    if payload.get("htm") != method:
        raise invalid("DPoP proof is for another HTTP method (htm)")
    htu = payload.get("htu")
    if not isinstance(htu, str) or htu_of(htu) != htu_of(url):
        raise invalid("DPoP proof is for another URI (htu)")
    iat = payload.get("iat")
    if isinstance(iat, bool) or not isinstance(iat, int | float):
        raise invalid("DPoP proof has no iat")
    if iat > now + max_skew or iat < now - max_age:
        raise invalid("DPoP proof iat is outside the accepted window")
    nonce = payload.get("nonce")
    if not isinstance(nonce, str) or not nonce_valid(nonce):
        raise DpopError("use_dpop_nonce", "Use the DPoP nonce this server provides")
    if access_token is not None and payload.get("ath") != access_token_hash(access_token):
        raise invalid("DPoP proof is for another access token (ath)")
    return DpopProof(jkt=jwk_thumbprint(jwk), jti=jti, iat=int(iat))


def replay_key(proof: DpopProof) -> str:
    """What a replay cache keeps of a proof: its key and ``jti`` (a ``jti`` is unique per key,
    RFC 9449 §11.1), hashed so that the row has a fixed size."""
    return hashlib.sha256(f"{proof.jkt}:{proof.jti}".encode()).hexdigest()


# -- server nonces ----------------------------------------------------------------------------


def new_nonce(key: bytes, now: int) -> str:
    """A nonce the server can check later without storing it: the time it was made and an
    HMAC of that time under ``key``."""
    stamp = struct.pack(">Q", now)
    mac = hmac.new(key, b"dpop-nonce" + stamp, hashlib.sha256).digest()[:_NONCE_MAC_BYTES]
    return base64.urlsafe_b64encode(stamp + mac).rstrip(b"=").decode("ascii")


def nonce_valid(key: bytes, nonce: str, now: int, lifetime: int) -> bool:
    """True for a nonce made under ``key`` less than ``lifetime`` seconds ago."""
    try:
        raw = base64.urlsafe_b64decode(nonce + "=" * (-len(nonce) % 4))
    except (ValueError, TypeError):
        return False
    if len(raw) != 8 + _NONCE_MAC_BYTES:
        return False
    stamp = raw[:8]
    expected = hmac.new(key, b"dpop-nonce" + stamp, hashlib.sha256).digest()[:_NONCE_MAC_BYTES]
    if not hmac.compare_digest(raw[8:], expected):
        return False
    made = struct.unpack(">Q", stamp)[0]
    return now - lifetime < made <= now + 5
