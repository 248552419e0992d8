"""Check the proof of possession a wallet sends with a Credential Request.

OpenID4VCI 1.0 Appendix F.1 (proof type ``jwt``): the wallet signs a JWT of type
``openid4vci-proof+jwt`` with the key the credential is to be bound to, names that key in the
``jwk`` header, addresses the JWT to the Credential Issuer (``aud``) and includes the issuer's
fresh ``c_nonce``. Only the ``jwk`` header is supported (the issuer advertises binding method
``jwk``); ``kid`` and ``x5c`` would need key resolution the issuer has no use for.

Whether the nonce is one this issuer handed out and not yet used is the caller's question: it
needs storage. Here: everything the JWT itself can prove.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.oid4vci.errors import CredentialError, InvalidProof
from app.oid4vci.keys import public_members
from app.sdjwt.errors import SdJwtError
from app.sdjwt.jws import read_unverified, same_media_type, verify_jws

PROOF_TYP = "openid4vci-proof+jwt"  # OpenID4VCI 1.0 Appendix F.1
# Advertised as proof_signing_alg_values_supported; asymmetric only (none and HMAC are refused
# by verify_jws whatever this list says).
PROOF_SIGNING_ALGS = ("ES256",)
# A proof is a few hundred bytes; anything far larger is refused before it is decoded.
MAX_PROOF_BYTES = 8 * 1024
# RFC 7518 §6.2.2 / §6.3.2 / RFC 8037 §2: members only a private key has.
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
LABEL = "Proof"


@dataclass(frozen=True)
class Proof:
    """What a verified proof establishes: the holder's public key, the nonce it carries (for
    the caller to consume), and the ``iss`` (client_id) if the wallet sent one."""

    jwk: dict[str, Any]
    nonce: str | None
    client_id: str | None = None


def verify_proof_jwt(
    proof: str,
    *,
    audience: str,
    now: int,
    max_age: int = 300,
    max_skew: int = 60,
    require_nonce: bool = True,
    algorithms: tuple[str, ...] = PROOF_SIGNING_ALGS,
) -> Proof:
    """Verify a ``jwt`` key proof; raises ``InvalidProof`` and nothing else, whatever the input.

    A proof without a ``nonce`` is ``invalid_proof`` as §8.3.1.2 says (case 3); ``InvalidNonce``
    is for the caller, once it finds the nonce unknown, expired or used.
    """
    try:
        return _verify(proof, audience, now, max_age, max_skew, require_nonce, algorithms)
    except CredentialError:
        raise
    except SdJwtError as exc:
        raise InvalidProof(exc.reason) from exc
    except Exception as exc:  # hostile input must be a refusal, never a crash
        raise InvalidProof("Proof could not be verified") from exc


def _verify(
    proof: Any,
    audience: str,
    now: int,
    max_age: int,
    max_skew: int,
    require_nonce: bool,
    algorithms: tuple[str, ...],
) -> Proof:
    if not isinstance(proof, str) or not proof:
        raise InvalidProof("Proof is not a compact JWT")
    if len(proof) > MAX_PROOF_BYTES:
        raise InvalidProof("Proof is too large")
    header, payload = read_unverified(proof, LABEL)
    if not same_media_type(header.get("typ"), PROOF_TYP):
        raise InvalidProof(f"Proof type header is not {PROOF_TYP}")
    _check_alg(header, algorithms)
    jwk = _holder_jwk(header)
    verify_jws(proof, jwk, algorithms, typ=PROOF_TYP, label=LABEL, decoded=(header, payload))
    _check_audience(payload, audience)
    _check_issued_at(payload, now, max_age, max_skew)
    _check_expiry(payload, now, max_skew)
    client_id = payload.get("iss") if isinstance(payload.get("iss"), str) else None
    # The key as the credential binds it (cnf.jwk): its public members only. The JWK's other
    # members (alg, use, key_ops) were held against the proof by verify_jws above.
    bound = public_members(jwk)
    return Proof(jwk=bound, nonce=_nonce(payload, require_nonce), client_id=client_id)


def _check_alg(header: dict[str, Any], algorithms: tuple[str, ...]) -> None:
    """Appendix F.1: ``alg`` MUST NOT be ``none`` or a MAC, and must be one the issuer offers
    (§12.2.4 ``proof_signing_alg_values_supported``). Checked before the key is looked at, so
    the refusal names the real fault; ``verify_jws`` enforces the same list again."""
    alg = header.get("alg")
    if alg == "none":
        raise InvalidProof("Proof is unsigned (alg none), which is never accepted")
    if isinstance(alg, str) and alg.startswith("HS"):
        raise InvalidProof("Proof uses an HMAC algorithm, which is never accepted")
    if alg not in algorithms:
        raise InvalidProof(f"Proof signing algorithm is not one of {', '.join(algorithms)}")


def _holder_jwk(header: dict[str, Any]) -> dict[str, Any]:
    """Appendix F.1: the key is named by exactly one of ``kid``, ``jwk``, ``x5c``; this issuer
    binds to ``jwk`` only. A private key in the header means the wallet leaked it."""
    jwk = header.get("jwk")
    if jwk is None:
        raise InvalidProof("Proof header has no jwk: only jwk key binding is supported")
    if not isinstance(jwk, dict):
        raise InvalidProof("Proof header jwk is not a JSON object")
    if "kid" in header or "x5c" in header:
        raise InvalidProof("Proof header names its key more than once (jwk with kid or x5c)")
    if _PRIVATE_MEMBERS.intersection(jwk):
        raise InvalidProof("Proof header jwk contains private key material")
    return jwk


def _check_audience(payload: dict[str, Any], audience: str) -> None:
    """Appendix F.1: ``aud`` MUST be the Credential Issuer Identifier (RFC 7519 §4.1.3 allows
    a string or an array of strings)."""
    aud = payload.get("aud")
    names = aud if isinstance(aud, list) else [aud]
    if audience not in [name for name in names if isinstance(name, str)]:
        raise InvalidProof("Proof is not addressed to this credential issuer (aud)")


def _number(payload: dict[str, Any], name: str) -> int | float | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidProof(f"Proof {name} is not a number")
    return value


def _check_issued_at(payload: dict[str, Any], now: int, max_age: int, max_skew: int) -> None:
    """Appendix F.1: ``iat`` is REQUIRED; a proof made long ago could have been captured and
    replayed, one dated ahead was made with a wrong clock (or to outlive its window)."""
    iat = _number(payload, "iat")
    if iat is None:
        raise InvalidProof("Proof has no iat")
    if iat > now + max_skew:
        raise InvalidProof("Proof iat is in the future")
    if iat < now - max_age:
        raise InvalidProof("Proof is too old (iat)")


def _check_expiry(payload: dict[str, Any], now: int, max_skew: int) -> None:
    """RFC 7519 §4.1.4: an optional ``exp`` in the past means the wallet itself withdrew it."""
    exp = _number(payload, "exp")
    if exp is not None and exp <= now - max_skew:
        raise InvalidProof("Proof has expired (exp)")


def _nonce(payload: dict[str, Any], require_nonce: bool) -> str | None:
    """The ``c_nonce`` (Appendix F.1 ``nonce``): a string, required when the issuer has a
    Nonce Endpoint, which this one has. Its absence is ``invalid_proof`` (§8.3.1.2 case 3)."""
    nonce = payload.get("nonce")
    if nonce is None and not require_nonce:
        return None
    if nonce is None:
        raise InvalidProof("Proof carries no nonce: fetch a c_nonce from the nonce endpoint")
    if not isinstance(nonce, str) or not nonce:
        raise InvalidProof("Proof nonce is not a non-empty string")
    return nonce
