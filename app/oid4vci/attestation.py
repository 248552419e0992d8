"""Wallet attestations and key attestations: protocol only, no storage.

A wallet provider vouches for a wallet instance with a Client Attestation JWT (OAuth 2.0
Attestation-Based Client Authentication, the draft HAIP 1.0 §4.3 builds on): type
``oauth-client-attestation+jwt``, signed by the provider's key (``x5c`` in its header, HAIP 1.0
§4.3.1), naming the wallet's ``client_id`` as ``sub`` and the instance's key as ``cnf.jwk``.
The instance proves it holds that key with a Client Attestation PoP JWT (type
``oauth-client-attestation-pop+jwt``) for this authorization server (``aud``), fresh (``iat``)
and single use (``jti``). Both travel in the ``OAuth-Client-Attestation`` and
``OAuth-Client-Attestation-PoP`` headers.

A key attestation (OpenID4VCI 1.0 Appendix D.1, type ``key-attestation+jwt``) is a wallet
provider's statement that the keys in ``attested_keys`` live in a secure key store. It comes
in a ``jwt`` proof's ``key_attestation`` header or as the ``attestation`` proof itself
(Appendix F.1, F.3).

Whether a ``jti`` was seen before needs storage, and whom the organization trusts is read
from its trust sources: both are the caller's. Here: everything the JWTs themselves prove,
and the chain of ``x5c`` against the anchors handed in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509

from app.oid4vci.keys import jwk_thumbprint, public_members
from app.sdjwt.errors import SdJwtError
from app.sdjwt.jws import allowed_alg, read_unverified, same_media_type, verify_jws
from app.trust.errors import TrustError
from app.trust.sources import SourceTrust
from app.trust.x5c import leaf_key, parse_x5c, validate_chain

CLIENT_ATTESTATION_TYP = "oauth-client-attestation+jwt"
CLIENT_ATTESTATION_POP_TYP = "oauth-client-attestation-pop+jwt"
KEY_ATTESTATION_TYP = "key-attestation+jwt"
# Draft 15's name, which clients still send (the OpenWallet Foundation's 0.4 among them).
DRAFT_KEY_ATTESTATION_TYP = "keyattestation+jwt"
ATTESTATION_HEADER = "OAuth-Client-Attestation"
ATTESTATION_POP_HEADER = "OAuth-Client-Attestation-PoP"
# HAIP 1.0 §7: ES256 is what wallets must support; the provider may sign with a larger curve.
ATTESTATION_SIGNING_ALGS = ("ES256", "ES384", "ES512")
POP_SIGNING_ALGS = ("ES256", "ES384", "ES512")
MAX_ATTESTATION_BYTES = 16 * 1024
MAX_JTI_CHARS = 256
MAX_ATTESTED_KEYS = 16
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


class AttestationError(Exception):
    """A refused attestation, with a reason a person can read (sent to the wallet)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ClientAttestation:
    """What a verified attestation and its PoP establish: the wallet's ``client_id``, who
    vouched for it (the provider certificate's subject), and the PoP's ``jti`` and ``iat``
    the caller needs to refuse a replay."""

    client_id: str
    provider: str
    key_thumbprint: str
    jti: str
    iat: int

    def replay_key(self) -> str:
        """A ``jti`` is unique per instance key: both, hashed to a fixed size."""
        value = f"client-attestation-pop:{self.key_thumbprint}:{self.jti}"
        return hashlib.sha256(value.encode()).hexdigest()


@dataclass(frozen=True)
class KeyAttestation:
    """The keys a provider attests (public members only) and the ``c_nonce`` it carries."""

    attested_keys: tuple[dict[str, Any], ...]
    nonce: str | None
    provider: str

    def attests(self, jwk: dict[str, Any]) -> bool:
        wanted = jwk_thumbprint(jwk)
        return any(jwk_thumbprint(key) == wanted for key in self.attested_keys)


def verify_client_attestation(
    attestation: Any,
    pop: Any,
    *,
    audience: str,
    trust: SourceTrust,
    now: int,
    max_age: int = 300,
    max_skew: int = 60,
) -> ClientAttestation:
    """Check the attestation (its provider trusted, not expired) and its PoP (signed by
    ``cnf.jwk``, for ``audience``, fresh). Raises ``AttestationError`` and nothing else."""
    try:
        return _verify_client_attestation(attestation, pop, audience, trust, now, max_age, max_skew)
    except AttestationError:
        raise
    except (SdJwtError, TrustError) as exc:
        raise AttestationError(exc.reason if hasattr(exc, "reason") else str(exc)) from exc
    except Exception as exc:  # hostile input must be a refusal, never a crash
        raise AttestationError("The client attestation could not be verified") from exc


def _verify_client_attestation(
    attestation: Any,
    pop: Any,
    audience: str,
    trust: SourceTrust,
    now: int,
    max_age: int,
    max_skew: int,
) -> ClientAttestation:
    label = "Client attestation"
    header, payload, provider = _provider_signed(
        attestation, (CLIENT_ATTESTATION_TYP,), label, trust, now
    )
    del header
    client_id = payload.get("sub")
    if not isinstance(client_id, str) or not client_id:
        raise AttestationError("Client attestation has no sub (the wallet's client_id)")
    if not isinstance(payload.get("iss"), str) or not payload["iss"]:
        raise AttestationError("Client attestation has no iss (the wallet provider)")
    _require_unexpired(payload, now, max_skew, label, required=True)
    cnf = payload.get("cnf")
    jwk = cnf.get("jwk") if isinstance(cnf, dict) else None
    instance_key = _public_jwk(jwk, f"{label} cnf.jwk")

    pop_label = "Client attestation PoP"
    pop_text = _compact(pop, pop_label)
    pop_header, pop_payload = read_unverified(pop_text, pop_label)
    if not same_media_type(pop_header.get("typ"), CLIENT_ATTESTATION_POP_TYP):
        raise AttestationError(f"{pop_label} type header is not {CLIENT_ATTESTATION_POP_TYP}")
    allowed_alg(pop_header, POP_SIGNING_ALGS, pop_label)
    verify_jws(
        pop_text,
        instance_key,
        POP_SIGNING_ALGS,
        typ=CLIENT_ATTESTATION_POP_TYP,
        label=pop_label,
        decoded=(pop_header, pop_payload),
    )
    aud = pop_payload.get("aud")
    names = aud if isinstance(aud, list) else [aud]
    if audience not in [name for name in names if isinstance(name, str)]:
        raise AttestationError(f"{pop_label} is for another authorization server (aud)")
    iss = pop_payload.get("iss")
    if iss is not None and iss != client_id:
        raise AttestationError(f"{pop_label} iss is not the attestation's sub")
    jti = pop_payload.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI_CHARS:
        raise AttestationError(f"{pop_label} has no usable jti")
    iat = _number(pop_payload, "iat", pop_label)
    if iat is None:
        raise AttestationError(f"{pop_label} has no iat")
    if iat > now + max_skew:
        raise AttestationError(f"{pop_label} iat is in the future")
    if iat < now - max_age:
        raise AttestationError(f"{pop_label} is too old (iat)")
    _require_unexpired(pop_payload, now, max_skew, pop_label, required=False)
    return ClientAttestation(
        client_id=client_id,
        provider=provider,
        key_thumbprint=jwk_thumbprint(instance_key),
        jti=jti,
        iat=int(iat),
    )


def verify_key_attestation(
    attestation: Any, *, trust: SourceTrust, now: int, max_skew: int = 60
) -> KeyAttestation:
    """Appendix D.1: signed by a trusted wallet provider, ``iat`` present, not expired,
    ``attested_keys`` a non-empty array of public JWKs. Raises ``AttestationError`` only."""
    label = "Key attestation"
    try:
        _, payload, provider = _provider_signed(
            attestation, (KEY_ATTESTATION_TYP, DRAFT_KEY_ATTESTATION_TYP), label, trust, now
        )
        iat = _number(payload, "iat", label)
        if iat is None:
            raise AttestationError(f"{label} has no iat")
        if iat > now + max_skew:
            raise AttestationError(f"{label} iat is in the future")
        _require_unexpired(payload, now, max_skew, label, required=False)
        keys = payload.get("attested_keys")
        if not isinstance(keys, list) or not keys or len(keys) > MAX_ATTESTED_KEYS:
            raise AttestationError(f"{label} attested_keys is not a non-empty array")
        attested = tuple(_public_jwk(key, f"{label} attested_keys") for key in keys)
        nonce = payload.get("nonce")
        if nonce is not None and (not isinstance(nonce, str) or not nonce):
            raise AttestationError(f"{label} nonce is not a non-empty string")
        return KeyAttestation(attested, nonce, provider)
    except AttestationError:
        raise
    except (SdJwtError, TrustError) as exc:
        raise AttestationError(exc.reason if hasattr(exc, "reason") else str(exc)) from exc
    except Exception as exc:
        raise AttestationError(f"{label} could not be verified") from exc


def _provider_signed(
    token: Any, typs: tuple[str, ...], label: str, trust: SourceTrust, now: int
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A JWT a wallet provider signed with the leaf of its ``x5c``, the chain leading to a
    certificate the organization's wallet provider sources grant now; its ``typ`` one of
    ``typs``."""
    text = _compact(token, label)
    header, payload = read_unverified(text, label)
    typ = next((name for name in typs if same_media_type(header.get("typ"), name)), None)
    if typ is None:
        raise AttestationError(f"{label} type header is not {typs[0]}")
    allowed_alg(header, ATTESTATION_SIGNING_ALGS, label)
    if "x5c" not in header:
        raise AttestationError(f"{label} header has no x5c: the wallet provider's certificate")
    chain = parse_x5c(header["x5c"])
    anchors = trust.certificates()
    if not anchors:
        raise AttestationError(
            "This issuer trusts no wallet provider: add a trust source of wallet providers"
        )
    moment = datetime.fromtimestamp(now, UTC)
    try:
        path = validate_chain(chain, anchors, moment)
    except TrustError:
        raise AttestationError(f"{label} is not from a trusted wallet provider") from None
    refusal = trust.refusal(path)
    if refusal is not None:
        raise AttestationError(f"{label} is not from a trusted wallet provider: {refusal}")
    leaf = chain[0]
    verify_jws(
        text,
        leaf_key(leaf),
        ATTESTATION_SIGNING_ALGS,
        typ=typ,
        label=label,
        decoded=(header, payload),
    )
    return header, payload, _subject(leaf)


def _subject(cert: x509.Certificate) -> str:
    return cert.subject.rfc4514_string()


def _compact(token: Any, label: str) -> str:
    if not isinstance(token, str) or not token.strip():
        raise AttestationError(f"{label} is missing")
    if len(token) > MAX_ATTESTATION_BYTES:
        raise AttestationError(f"{label} is too large")
    return token.strip()


def _public_jwk(jwk: Any, label: str) -> dict[str, Any]:
    if not isinstance(jwk, dict) or not isinstance(jwk.get("kty"), str):
        raise AttestationError(f"{label} is not a JWK")
    if _PRIVATE_MEMBERS.intersection(jwk):
        raise AttestationError(f"{label} contains private key material")
    return public_members(jwk)


def _number(payload: dict[str, Any], name: str, label: str) -> int | float | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise AttestationError(f"{label} {name} is not a number")
    return value


def _require_unexpired(
    payload: dict[str, Any], now: int, max_skew: int, label: str, *, required: bool
) -> None:
    exp = _number(payload, "exp", label)
    if exp is None:
        if required:
            raise AttestationError(f"{label} has no exp")
        return
    if exp <= now - max_skew:
        raise AttestationError(f"{label} has expired (exp)")
    nbf = _number(payload, "nbf", label)
    if nbf is not None and nbf > now + max_skew:
        raise AttestationError(f"{label} is not valid yet (nbf)")
