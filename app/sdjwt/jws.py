"""Verify a compact JWS (RFC 7515) signed with an asymmetric key, and nothing else.

This is the one place the package checks signatures, so the rules of RFC 8725 §3.1 live here:
the algorithm comes from an allow-list and must fit the key the caller supplied; ``none`` and
HMAC are refused whatever the allow-list says (an HMAC "verified" with a public key is the
classic algorithm confusion); keys named by the token itself (``jwk``, ``jku``, ``x5c``, ``kid``)
are never used here, only the key the caller passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from app.sdjwt.encoding import b64url_decode, decode_json_object
from app.sdjwt.errors import SdJwtError, refusing
from app.sdjwt.jwk import EC_CURVES, MIN_RSA_BITS, PublicKey, jwk_to_public_key

# "Ed25519" is RFC 9864's fully-specified replacement for "EdDSA" over Ed25519, which RFC 9864
# deprecates; both are accepted while wallets move over.
DEFAULT_ALGS = (
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
    "Ed25519",
    "PS256",
    "PS384",
    "PS512",
    "RS256",
)


@dataclass(frozen=True)
class _Algorithm:
    family: str  # "EC", "RSA", "RSA-PSS" or "EdDSA"
    hash: hashes.HashAlgorithm | None = None
    curve: str | None = None  # JWK curve name: for ECDSA, and for a fully-specified EdDSA


# RFC 7518 §3.1 (ES*: §3.4, RS*: §3.3, PS*: §3.5), RFC 8037 §3.1 (EdDSA), RFC 9864 §2.2
# ("Ed25519": EdDSA with the Ed25519 curve only) and RFC 8812 §3.2 (ES256K: ECDSA over
# secp256k1 with SHA-256, R || S as for ES256). Nothing else is implemented, so "none" and
# "HS*" can never be accepted even if a caller allow-lists them. ES256K is not in
# DEFAULT_ALGS: only a format whose wallets sign with it (W3C VC-JWT from Identus wallets)
# allow-lists it.
ALGORITHMS: dict[str, _Algorithm] = {
    "ES256": _Algorithm("EC", hashes.SHA256(), "P-256"),
    "ES384": _Algorithm("EC", hashes.SHA384(), "P-384"),
    "ES512": _Algorithm("EC", hashes.SHA512(), "P-521"),
    "ES256K": _Algorithm("EC", hashes.SHA256(), "secp256k1"),
    "RS256": _Algorithm("RSA", hashes.SHA256()),
    "RS384": _Algorithm("RSA", hashes.SHA384()),
    "RS512": _Algorithm("RSA", hashes.SHA512()),
    "PS256": _Algorithm("RSA-PSS", hashes.SHA256()),
    "PS384": _Algorithm("RSA-PSS", hashes.SHA384()),
    "PS512": _Algorithm("RSA-PSS", hashes.SHA512()),
    "EdDSA": _Algorithm("EdDSA"),
    "Ed25519": _Algorithm("EdDSA", curve="Ed25519"),
}


@refusing("Token could not be verified")
def verify_jws(
    compact: str,
    key: PublicKey | dict[str, Any],
    allowed_algs: tuple[str, ...] | list[str] | frozenset[str] = DEFAULT_ALGS,
    *,
    typ: str | None = None,
    label: str = "Token",
    decoded: tuple[dict[str, Any], dict[str, Any]] | None = None,
    understood: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Check a compact JWS against ``key`` and return its header and JSON payload.

    ``typ``, when given, is the media type the header must declare (RFC 8725 §3.11), compared
    as RFC 7515 §4.1.9 says. ``label`` names the token in reasons ("Credential", "Key binding").
    ``decoded`` is what ``read_unverified`` already made of this very ``compact``, so a caller
    that had to look inside before verifying does not pay for decoding twice. ``understood``
    names the header extensions the caller handles, which ``crit`` may then list.
    """
    header_b64, payload_b64, signature_b64 = split_compact(compact, label)
    header = decoded[0] if decoded else decode_json_object(header_b64, f"{label} header")
    alg = allowed_alg(header, allowed_algs, label)
    crit = header.get("crit")
    if "crit" in header and (
        not isinstance(crit, list)
        or not crit
        or not all(isinstance(name, str) and name in understood for name in crit)
    ):
        # RFC 7515 §4.1.11: extensions listed in "crit" must be understood by the caller.
        raise SdJwtError(f"{label} requires header extensions this verifier does not support")
    if typ is not None and not same_media_type(header.get("typ"), typ):
        raise SdJwtError(f"{label} type header is not {typ}")
    public_key = _key_for(key, alg, label)
    signature = b64url_decode(signature_b64, f"{label} signature")
    signing_input = f"{header_b64}.{payload_b64}".encode("ascii")
    if not _signature_holds(public_key, ALGORITHMS[alg], signature, signing_input):
        raise SdJwtError(f"{label} signature does not verify")
    return header, decoded[1] if decoded else decode_json_object(payload_b64, f"{label} payload")


def split_compact(compact: str, label: str) -> tuple[str, str, str]:
    """Split a compact JWS into header, payload and signature (RFC 7515 §7.1).

    An empty signature is let through here so that an unsigned token is refused for what it
    is ("alg none") rather than as merely malformed; it can never verify.
    """
    parts = compact.split(".") if isinstance(compact, str) else []
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise SdJwtError(f"{label} is not a compact JWS")
    return parts[0], parts[1], parts[2]


@refusing("Token could not be read")
def read_unverified(compact: str, label: str = "Token") -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and payload of a compact JWS, decoded as strictly as ``verify_jws`` does but
    not verified: for finding the key that must then verify it (``iss``, ``kid``, ``x5c``)."""
    header_b64, payload_b64, _ = split_compact(compact, label)
    return (
        decode_json_object(header_b64, f"{label} header"),
        decode_json_object(payload_b64, f"{label} payload"),
    )


def allowed_alg(header: dict[str, Any], allowed_algs: Any, label: str) -> str:
    """The header's algorithm, refused as ``verify_jws`` would refuse it. Public so that a
    caller can turn away an unsigned or HMAC token before resolving its key (which may fetch)."""
    alg = header.get("alg")
    if not isinstance(alg, str):
        raise SdJwtError(f"{label} header names no signing algorithm")
    if alg == "none":
        raise SdJwtError(f"{label} is unsigned (alg none), which is never accepted")
    if alg.startswith("HS"):
        raise SdJwtError(f"{label} uses an HMAC algorithm, which is never accepted")
    allowed = (allowed_algs,) if isinstance(allowed_algs, str) else tuple(allowed_algs)
    if alg not in ALGORITHMS or alg not in allowed:
        raise SdJwtError(f"{label} uses a signing algorithm that is not allowed")
    return alg


def same_media_type(value: Any, expected: str) -> bool:
    """Compare media types as RFC 7515 §4.1.9 says: case-insensitively, with "application/"
    understood in front of any value that has no "/"."""
    if not isinstance(value, str):
        return False
    return _full_media_type(value) == _full_media_type(expected)


def _full_media_type(value: str) -> str:
    value = value.lower()
    return value if "/" in value else f"application/{value}"


def _key_for(key: Any, alg: str, label: str) -> PublicKey:
    """Resolve the caller's key and make sure it is the kind ``alg`` needs (RFC 8725 §3.1)."""
    if isinstance(key, dict):
        # RFC 7517 §4.4: a JWK "alg" names the one algorithm the key is meant for.
        if "alg" in key and key["alg"] != alg:
            raise SdJwtError(f"{label} key is meant for another algorithm")
        key = jwk_to_public_key(key)
    if not _fits(key, ALGORITHMS[alg]):
        raise SdJwtError(f"{label} key does not fit its signing algorithm")
    return key


def _fits(key: Any, spec: _Algorithm) -> bool:
    if spec.family == "EC":
        return (
            isinstance(key, ec.EllipticCurvePublicKey)
            and key.curve.name == EC_CURVES[spec.curve][0].name
        )
    if spec.curve == "Ed25519":
        return isinstance(key, ed25519.Ed25519PublicKey)
    if spec.family == "EdDSA":
        return isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey)
    return isinstance(key, rsa.RSAPublicKey) and key.key_size >= MIN_RSA_BITS


def _signature_holds(key: Any, spec: _Algorithm, signature: bytes, data: bytes) -> bool:
    try:
        if spec.family == "EC":
            return _ecdsa_holds(key, spec, signature, data)
        if spec.family == "EdDSA":
            key.verify(signature, data)
            return True
        # RFC 8017 §8.2.2 / §8.1.2: the signature is exactly as long as the modulus.
        if len(signature) != (key.key_size + 7) // 8:
            return False
        if spec.family == "RSA":
            key.verify(signature, data, padding.PKCS1v15(), spec.hash)
        else:
            # RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash output.
            pss = padding.PSS(padding.MGF1(spec.hash), spec.hash.digest_size)
            key.verify(signature, data, pss, spec.hash)
        return True
    except (InvalidSignature, ValueError):
        return False


def _ecdsa_holds(
    key: ec.EllipticCurvePublicKey, spec: _Algorithm, signature: bytes, data: bytes
) -> bool:
    # RFC 7518 §3.4: the JWS signature is R || S, each exactly the coordinate length; a DER
    # signature, or one of any other length, is not a JWS signature. A high S is accepted for
    # ES256K as for the NIST curves: RFC 8812 §3.2 does not require low S (Bitcoin's rule
    # against malleability), and nothing here identifies a token by its signature bytes; the
    # Identus SDK signs low S, which verifies either way.
    size = EC_CURVES[spec.curve][1]
    if len(signature) != 2 * size:
        return False
    r = int.from_bytes(signature[:size], "big")
    s = int.from_bytes(signature[size:], "big")
    key.verify(encode_dss_signature(r, s), data, ec.ECDSA(spec.hash))
    return True
