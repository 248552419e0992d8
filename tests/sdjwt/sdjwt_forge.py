"""A small test-side issuer and holder that can build exactly the token each attack needs.

Deliberately independent of ``app.sdjwt``: tokens are assembled by hand from ``cryptography``
primitives so a bug in the verifier cannot hide itself by also being in the test signer.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

AUDIENCE = "redirect_uri:https://verifier.example/callback"
NONCE = "n-0S6_WzA2Mj"
NOW = 1_800_000_000
_CURVES = {"ES256": (ec.SECP256R1(), 32), "ES384": (ec.SECP384R1(), 48)}
_CURVES["ES512"] = (ec.SECP521R1(), 66)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64json(value: Any) -> str:
    return b64(json.dumps(value).encode("utf-8"))


def digest(disclosure: str) -> str:
    """RFC 9901 §4.2.3, written out independently of the verifier."""
    return b64(hashlib.sha256(disclosure.encode("ascii")).digest())


def disclose(name: str, value: Any) -> str:
    return b64json([secrets.token_urlsafe(16), name, value])


def disclose_element(value: Any) -> str:
    return b64json([secrets.token_urlsafe(16), value])


def public_jwk(key: Any) -> dict[str, Any]:
    """The public JWK of an EC, Ed25519 or RSA private or public key."""
    public = key.public_key() if hasattr(key, "public_key") else key
    if isinstance(public, ec.EllipticCurvePublicKey):
        size = (public.curve.key_size + 7) // 8
        numbers = public.public_numbers()
        crv = {256: "P-256", 384: "P-384", 521: "P-521"}[public.curve.key_size]
        return {
            "kty": "EC",
            "crv": crv,
            "x": b64(numbers.x.to_bytes(size, "big")),
            "y": b64(numbers.y.to_bytes(size, "big")),
        }
    if isinstance(public, ed25519.Ed25519PublicKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": b64(raw)}
    numbers = public.public_numbers()
    return {
        "kty": "RSA",
        "n": b64(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
        "e": b64(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")),
    }


def private_jwk(key: Any) -> dict[str, Any]:
    """The private JWK of an EC or Ed25519 key (for the node wallet)."""
    jwk = public_jwk(key)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        size = (key.curve.key_size + 7) // 8
        return {**jwk, "d": b64(key.private_numbers().private_value.to_bytes(size, "big"))}
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return {**jwk, "d": b64(raw)}


def raw_signature(alg: str, key: Any, data: bytes) -> bytes:
    """Sign as JWS does (RFC 7518 §3): ECDSA as R || S, RSA and EdDSA as is."""
    if alg in _CURVES:
        digest_alg = {"ES256": hashes.SHA256(), "ES384": hashes.SHA384()}.get(alg, hashes.SHA512())
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(digest_alg)))
        size = _CURVES[alg][1]
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")
    if alg in ("EdDSA", "Ed25519"):  # RFC 8037 §3.1; RFC 9864 §2.2
        return key.sign(data)
    if alg.startswith("HS"):
        return hmac.new(key, data, hashlib.sha256).digest()
    if alg == "none":
        return b""
    if alg.startswith("PS"):
        pss = padding.PSS(padding.MGF1(hashes.SHA256()), hashes.SHA256.digest_size)
        return key.sign(data, pss, hashes.SHA256())
    return key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def sign(header: dict[str, Any], payload: dict[str, Any], key: Any) -> str:
    signing_input = f"{b64json(header)}.{b64json(payload)}"
    return f"{signing_input}.{b64(raw_signature(header['alg'], key, signing_input.encode()))}"


def tamper(compact: str) -> str:
    """Change one signature byte, keeping the encoding canonical."""
    head, _, signature = compact.rpartition(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[0] ^= 0x01
    return f"{head}.{b64(bytes(raw))}"


def generate(alg: str = "ES256") -> Any:
    if alg in _CURVES:
        return ec.generate_private_key(_CURVES[alg][0])
    if alg in ("EdDSA", "Ed25519"):
        return ed25519.Ed25519PrivateKey.generate()
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Forge:
    """Builds one credential and its presentation; every part can be overridden.

    The default is a valid presentation with a nested disclosure (address.country), an array
    element disclosure (nationalities[1]), a recursive array and decoy digests.
    """

    issuer_key: Any = field(default_factory=generate)
    holder_key: Any = field(default_factory=generate)
    now: int = NOW
    disclosures: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.disclosures = {
            "given_name": disclose("given_name", "Erika"),
            "family_name": disclose("family_name", "Mustermann"),
            "country": disclose("country", "DE"),
            "nationality_fr": disclose_element("FR"),
        }
        address = {"locality": "Berlin", "_sd": [digest(self.disclosures["country"])]}
        self.disclosures["address"] = disclose("address", address)

    def payload(self, **changes: Any) -> dict[str, Any]:
        d = {name: digest(text) for name, text in self.disclosures.items()}
        payload = {
            "iss": "https://issuer.example",
            "vct": "urn:example:pid:1",
            "iat": self.now - 60,
            "exp": self.now + 3600,
            "cnf": {"jwk": public_jwk(self.holder_key)},
            "_sd_alg": "sha-256",
            "_sd": sorted([d["given_name"], d["family_name"], d["address"], digest("decoy")]),
            "nationalities": ["DE", {"...": d["nationality_fr"]}, {"...": digest("decoy2")}],
        }
        payload.update(changes)
        return {name: value for name, value in payload.items() if value is not None}

    def issuer_jwt(self, payload: dict[str, Any] | None = None, **header: Any) -> str:
        full_header = {"alg": "ES256", "typ": "dc+sd-jwt", **header}
        return sign(full_header, payload or self.payload(), self.issuer_key)

    def shown(self) -> list[str]:
        """The disclosures a holder typically shows: all but family_name."""
        names = ("given_name", "address", "country", "nationality_fr")
        return [self.disclosures[name] for name in names]

    def key_binding(self, sd_jwt: str, key: Any = None, header=None, **claims: Any) -> str:
        payload = {
            "aud": AUDIENCE,
            "nonce": NONCE,
            "iat": self.now,
            "sd_hash": digest(sd_jwt),
            **claims,
        }
        payload = {name: value for name, value in payload.items() if value is not None}
        full_header = {"alg": "ES256", "typ": "kb+jwt", **(header or {})}
        return sign(full_header, payload, key or self.holder_key)

    def present(
        self, issuer_jwt: str | None = None, shown: list[str] | None = None, **kb: Any
    ) -> str:
        sd_jwt = sd_jwt_of(
            issuer_jwt or self.issuer_jwt(), self.shown() if shown is None else shown
        )
        return sd_jwt + self.key_binding(sd_jwt, **kb)


def sd_jwt_of(issuer_jwt: str, disclosures: list[str]) -> str:
    """RFC 9901 §4: the Issuer-signed JWT and each disclosure, each followed by "~"."""
    return "".join(f"{part}~" for part in [issuer_jwt, *disclosures])
