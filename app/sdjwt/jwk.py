"""Turn a public JSON Web Key (RFC 7517) into a ``cryptography`` public key.

Only asymmetric signature keys are accepted. A JWK carrying private members is refused rather
than stripped: a key published or embedded with its private half is compromised, and a caller
that passes one has made a mistake worth hearing about.
"""

from __future__ import annotations

import functools
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

from app.sdjwt.encoding import b64url_decode
from app.sdjwt.errors import SdJwtError

PublicKey = (
    ec.EllipticCurvePublicKey | rsa.RSAPublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
)

# RFC 7518 §6.2.2, §6.3.2 and RFC 8037 §2: members that only a private key has.
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})

# RFC 7518 §6.2.1.1: curve name, curve, and coordinate length in bytes (§6.2.1.2); RFC 8812
# §3.1 registers "secp256k1" (the curve of ES256K, which Hyperledger Identus wallets sign
# with). A key on it verifies only under ES256K: an allow-list without ES256K refuses it.
EC_CURVES: dict[str, tuple[ec.EllipticCurve, int]] = {
    "P-256": (ec.SECP256R1(), 32),
    "P-384": (ec.SECP384R1(), 48),
    "P-521": (ec.SECP521R1(), 66),
    "secp256k1": (ec.SECP256K1(), 32),
}

# RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used with these algorithms."
MIN_RSA_BITS = 2048


def jwk_to_public_key(jwk: dict[str, Any]) -> PublicKey:
    """Build the public key a JWK describes: EC P-256/384/521 or secp256k1, OKP Ed25519/Ed448,
    or RSA."""
    if not isinstance(jwk, dict):
        raise SdJwtError("Key is not a JSON Web Key")
    kty = jwk.get("kty")
    if kty == "oct":
        raise SdJwtError("Symmetric keys are never accepted for signatures")
    if _PRIVATE_MEMBERS & jwk.keys():
        raise SdJwtError("Key contains private key material")
    builders = {"EC": _ec_key, "OKP": _okp_key, "RSA": _rsa_key}
    if not isinstance(kty, str) or kty not in builders:
        raise SdJwtError("Key type is not supported")
    return builders[kty](jwk)


def _member(jwk: dict[str, Any], name: str) -> bytes:
    if name not in jwk:
        raise SdJwtError("Key is missing a required member")
    return b64url_decode(jwk[name], "A key member")


def _ec_key(jwk: dict[str, Any]) -> ec.EllipticCurvePublicKey:
    curve_name = jwk.get("crv")
    if not isinstance(curve_name, str) or curve_name not in EC_CURVES:
        raise SdJwtError("Key curve is not supported")
    x, y = jwk.get("x"), jwk.get("y")
    if isinstance(x, str) and isinstance(y, str):
        return _ec_point(curve_name, x, y)
    _member(jwk, "x"), _member(jwk, "y")  # says which member is missing or malformed
    raise SdJwtError("Key is missing a required member")


@functools.lru_cache(maxsize=512)
def _ec_point(curve_name: str, x_text: str, y_text: str) -> ec.EllipticCurvePublicKey:
    """The key of these coordinates, kept for the last 512: an issuer's key comes back with
    every credential (checking the point is on the curve is a tenth of a verification). A
    refusal raises, and is not kept."""
    curve, size = EC_CURVES[curve_name]
    x = b64url_decode(x_text, "A key member")
    y = b64url_decode(y_text, "A key member")
    if len(x) != size or len(y) != size:
        raise SdJwtError("Key coordinates have the wrong length for the curve")
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(x, "big"), int.from_bytes(y, "big"), curve
    )
    try:
        return numbers.public_key()
    except ValueError as exc:  # the point is not on the curve
        raise SdJwtError("Key is not a valid point on its curve") from exc


def _okp_key(jwk: dict[str, Any]) -> ed25519.Ed25519PublicKey | ed448.Ed448PublicKey:
    # RFC 8037 §2: OKP keys for signatures are Ed25519 and Ed448; X25519/X448 are for ECDH.
    loaders = {
        "Ed25519": ed25519.Ed25519PublicKey.from_public_bytes,
        "Ed448": ed448.Ed448PublicKey.from_public_bytes,
    }
    curve_name = jwk.get("crv")
    if not isinstance(curve_name, str) or curve_name not in loaders:
        raise SdJwtError("Key curve is not supported")
    try:
        return loaders[curve_name](_member(jwk, "x"))
    except ValueError as exc:
        raise SdJwtError("Key is not a valid Edwards curve key") from exc


def _rsa_key(jwk: dict[str, Any]) -> rsa.RSAPublicKey:
    n_bytes, e_bytes = _member(jwk, "n"), _member(jwk, "e")
    # RFC 7518 §6.3.1.1/§6.3.1.2: the minimum number of octets, so no leading zero.
    if n_bytes[0] == 0 or e_bytes[0] == 0:
        raise SdJwtError("Key is not a valid RSA key")
    n, e = int.from_bytes(n_bytes, "big"), int.from_bytes(e_bytes, "big")
    if n.bit_length() < MIN_RSA_BITS:
        raise SdJwtError("RSA key is shorter than 2048 bits")
    try:
        return rsa.RSAPublicNumbers(e, n).public_key()
    except ValueError as exc:
        raise SdJwtError("Key is not a valid RSA key") from exc
