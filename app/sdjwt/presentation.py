"""Parse and verify an SD-JWT VC presentation (SD-JWT+KB) as a Verifier.

Follows RFC 9901 §7.1 and §7.3 with Key Binding always required, and the SD-JWT VC profile
(draft-ietf-oauth-sd-jwt-vc §2.2). Parsing and verifying are separate steps so callers can
refuse oversized or malformed input before doing any cryptography, and can look at the
(unverified) header to find the issuer's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.sdjwt.disclosures import Unpacker, decode_disclosures, sha256_b64url
from app.sdjwt.encoding import BASE64URL
from app.sdjwt.errors import SdJwtError, refusing
from app.sdjwt.jwk import PublicKey, jwk_to_public_key
from app.sdjwt.jws import DEFAULT_ALGS, read_unverified, split_compact, verify_jws

# draft-ietf-oauth-sd-jwt-vc §2.2.1: "The typ value MUST use dc+sd-jwt". The draft dropped its
# note about also accepting the pre-November-2024 "vc+sd-jwt"; typ exists to stop one kind of
# token being taken for another (RFC 8725 §3.11), so only the current value is accepted.
SD_JWT_VC_TYP = "dc+sd-jwt"
KB_JWT_TYP = "kb+jwt"  # RFC 9901 §4.3

# draft-ietf-oauth-sd-jwt-vc §2.2.2.3: claims that MUST NOT be selectively disclosed. RFC 9901
# §9.7 asks Verifiers to act as though they might be. "iat" and "sub" MAY be disclosed.
NEVER_DISCLOSED = frozenset(
    {"iss", "nbf", "exp", "cnf", "vct", "vct#integrity", "aka_vcts", "status"}
)


@dataclass(frozen=True)
class Presentation:
    """A presentation split into its parts; nothing in it has been verified yet."""

    issuer_jwt: str
    issuer_header: dict
    issuer_payload: dict
    disclosures: list[str]
    kb_jwt: str | None
    sd_jwt_without_kb: str  # the exact characters sd_hash covers, ending with "~"


@dataclass(frozen=True)
class KeyBindingCheck:
    """What the key binding JWT must say for this request (RFC 9901 §7.3)."""

    audience: str  # the verifier's full client_id, prefix included
    nonce: str
    now: int
    max_age_seconds: int = 300
    future_skew_seconds: int = 60


@dataclass(frozen=True)
class VerifiedCredential:
    """The Processed SD-JWT Payload of RFC 9901 §7.1 and what a caller needs from it."""

    issuer: str | None
    vct: str
    claims: dict
    status: dict | None
    cnf_jwk: dict
    header: dict
    # The verified key binding JWT's claims: what a profile puts there beyond RFC 9901 §4.3
    # (OpenID4VP 1.0 §B.3.3 transaction_data_hashes) is read by the caller.
    key_binding: dict = field(default_factory=dict)


@refusing("Presentation is not a compact SD-JWT")
def parse_presentation(
    text: str, *, max_bytes: int = 64 * 1024, max_disclosures: int = 200
) -> Presentation:
    """Split a compact SD-JWT+KB (RFC 9901 §4) into its parts, refusing malformed input.

    The length is checked before anything is decoded, so oversized input costs nothing.
    """
    if not isinstance(text, str):
        raise SdJwtError("Presentation is not text")
    if len(text) > max_bytes:
        raise SdJwtError("Presentation is too large")
    if text.count("~") > max_disclosures + 1:
        raise SdJwtError("Presentation has too many disclosures")
    return _parse(text)


def _parse(text: str) -> Presentation:
    parts = text.split("~")
    if not text.isascii() or len(parts) < 2:
        raise SdJwtError("Presentation is not a compact SD-JWT")
    issuer_jwt, *disclosures, last = parts
    split_compact(issuer_jwt, "Credential")
    if not all(BASE64URL.fullmatch(item) for item in disclosures):
        raise SdJwtError("A disclosure is not base64url encoded")
    if last:
        split_compact(last, "Key binding")
    header, payload = read_unverified(issuer_jwt, "Credential")
    return Presentation(
        issuer_jwt=issuer_jwt,
        issuer_header=header,
        issuer_payload=payload,
        disclosures=disclosures,
        kb_jwt=last or None,
        sd_jwt_without_kb=text[: len(text) - len(last)],
    )


@refusing("Presentation could not be verified")
def verify_presentation(
    p: Presentation,
    issuer_key: PublicKey | dict[str, Any],
    kb: KeyBindingCheck,
    *,
    leeway_seconds: int = 30,
    allowed_algs: tuple[str, ...] = DEFAULT_ALGS,
) -> VerifiedCredential:
    """Verify the credential, its disclosures and its key binding; return what was disclosed.

    Trusting ``issuer_key`` for this issuer is the caller's decision (RFC 9901 §7.1 step 2.3).
    """
    # RFC 9901 §7.3: Key Binding is required by policy, whatever the holder sent.
    if p.kb_jwt is None:
        raise SdJwtError("Presentation has no key binding JWT")
    header, payload = verify_jws(
        p.issuer_jwt,
        issuer_key,
        allowed_algs,
        typ=SD_JWT_VC_TYP,
        label="Credential",
        decoded=(p.issuer_header, p.issuer_payload),
    )
    claims = _processed_payload(payload, p.disclosures)
    vct = _vct(claims)
    issuer = _issuer(claims)
    _check_validity(claims, "Credential", kb.now, leeway_seconds)
    _check_issued(claims, kb.now, leeway_seconds)
    _check_audience(claims, kb.audience)
    cnf_jwk, holder_key = _holder_key(claims)
    status = _status(claims)
    key_binding = _verify_key_binding(p, cnf_jwk, holder_key, kb, leeway_seconds, allowed_algs)
    return VerifiedCredential(issuer, vct, claims, status, cnf_jwk, header, key_binding)


def _processed_payload(payload: dict[str, Any], disclosures: list[str]) -> dict[str, Any]:
    # RFC 9901 §4.1.1: sha-256 when absent; we implement no other, so any other is refused.
    if payload.get("_sd_alg", "sha-256") != "sha-256":
        raise SdJwtError("Credential uses a digest algorithm other than sha-256")
    unpacker = Unpacker(decode_disclosures(disclosures), NEVER_DISCLOSED)
    claims = unpacker.unpack(payload)
    claims.pop("_sd_alg", None)  # RFC 9901 §7.1 step 3.6
    return claims


def _vct(claims: dict[str, Any]) -> str:
    vct = claims.get("vct")
    if not isinstance(vct, str) or not vct:
        raise SdJwtError("Credential has no vct type")  # SD-JWT VC §2.2.2.1: REQUIRED
    return vct


def _issuer(claims: dict[str, Any]) -> str | None:
    issuer = claims.get("iss")
    if issuer is not None and not isinstance(issuer, str):
        raise SdJwtError("Credential issuer (iss) is not a string")
    return issuer


def _numeric_date(claims: dict[str, Any], name: str, what: str) -> float | None:
    # RFC 7519 §2: a NumericDate is a JSON number; booleans are not numbers here.
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SdJwtError(f"{what} {name} claim is not a date")
    return value


def _check_validity(claims: dict[str, Any], what: str, now: int, leeway: int) -> None:
    """RFC 7519 §4.1.4 and §4.1.5, with ``leeway`` seconds of clock skew either way."""
    expires = _numeric_date(claims, "exp", what)
    if expires is not None and now - leeway >= expires:
        raise SdJwtError(f"{what} has expired")
    not_before = _numeric_date(claims, "nbf", what)
    if not_before is not None and now + leeway < not_before:
        raise SdJwtError(f"{what} is not valid yet")
    _numeric_date(claims, "iat", what)


def _check_issued(claims: dict[str, Any], now: int, leeway: int) -> None:
    """RFC 9901 §7.1 step 5 checks validity with iat among the claims: a credential dated more
    than ``leeway`` seconds ahead has not been issued yet."""
    issued_at = _numeric_date(claims, "iat", "Credential")
    if issued_at is not None and issued_at > now + leeway:
        raise SdJwtError("Credential was issued in the future")


def _check_audience(claims: dict[str, Any], audience: str) -> None:
    """RFC 7519 §4.1.3: a JWT whose aud does not name the party processing it MUST be rejected.

    The verifier names itself as the key binding audience (its client_id). Credentials rarely
    carry aud; one that does is for those audiences only, whatever the key binding says.
    """
    if "aud" not in claims:
        return
    aud = claims["aud"]
    names = [aud] if isinstance(aud, str) else aud
    if not isinstance(names, list) or not audience or audience not in names:
        raise SdJwtError("Credential is meant for another audience (aud)")


def _holder_key(claims: dict[str, Any]) -> tuple[dict[str, Any], PublicKey]:
    # SD-JWT VC §2.2.2.3: cnf is REQUIRED for Key Binding; RFC 9901 §4.1.2 / RFC 7800 §3.2.
    cnf = claims.get("cnf")
    jwk = cnf.get("jwk") if isinstance(cnf, dict) else None
    if not isinstance(jwk, dict):
        raise SdJwtError("Credential is not bound to a holder key (no cnf.jwk)")
    try:
        return jwk, jwk_to_public_key(jwk)
    except SdJwtError as exc:
        raise SdJwtError("Credential holder key (cnf.jwk) is not a usable public key") from exc


def _status(claims: dict[str, Any]) -> dict[str, Any] | None:
    status = claims.get("status")
    if status is not None and not isinstance(status, dict):
        raise SdJwtError("Credential status claim is not an object")
    return status


def _verify_key_binding(
    p: Presentation,
    holder_jwk: dict[str, Any],
    holder_key: PublicKey,
    kb: KeyBindingCheck,
    leeway: int,
    allowed_algs: tuple[str, ...],
) -> dict[str, Any]:
    """RFC 9901 §7.3 step 5: signature by cnf.jwk, typ, freshness, aud, nonce and sd_hash;
    the key binding's claims."""
    if not (
        isinstance(kb.audience, str) and kb.audience and isinstance(kb.nonce, str) and kb.nonce
    ):
        # An empty expectation would match a key binding made for nobody in particular.
        raise SdJwtError("Key binding cannot be checked without an audience and a nonce")
    decoded = read_unverified(p.kb_jwt, "Key binding")
    # RFC 7517 §4.4: a JWK "alg" names the one algorithm the holder's key is meant for (checked
    # here because the key is handed to verify_jws already loaded, not as its JWK).
    alg = decoded[0].get("alg")
    if "alg" in holder_jwk and alg in allowed_algs and holder_jwk["alg"] != alg:
        raise SdJwtError("Key binding key is meant for another algorithm")
    _, claims = verify_jws(
        p.kb_jwt, holder_key, allowed_algs, typ=KB_JWT_TYP, label="Key binding", decoded=decoded
    )
    # RFC 9901 §4.3: aud is a single string; OpenID4VP compares it to the full client_id.
    if not isinstance(claims.get("aud"), str):
        raise SdJwtError("Key binding audience is not a single string")
    if claims["aud"] != kb.audience:
        raise SdJwtError("Key binding audience does not match this verifier")
    if not isinstance(claims.get("nonce"), str) or claims["nonce"] != kb.nonce:
        raise SdJwtError("Key binding nonce does not match the request")
    _check_freshness(claims, kb)
    _check_validity(claims, "Key binding", kb.now, leeway)
    if claims.get("sd_hash") != sha256_b64url(_sd_jwt_without_kb(p)):
        raise SdJwtError("Key binding does not cover the disclosures presented (sd_hash)")
    return claims


def _check_freshness(claims: dict[str, Any], kb: KeyBindingCheck) -> None:
    issued_at = _numeric_date(claims, "iat", "Key binding")
    if issued_at is None:
        raise SdJwtError("Key binding has no iat claim")
    if issued_at < kb.now - kb.max_age_seconds:
        raise SdJwtError("Key binding was signed too long ago")
    if issued_at > kb.now + kb.future_skew_seconds:
        raise SdJwtError("Key binding was signed in the future")


def _sd_jwt_without_kb(p: Presentation) -> str:
    """RFC 9901 §4.3.1: rebuild what sd_hash covers from the parts actually verified.

    Rebuilding, rather than trusting ``p.sd_jwt_without_kb``, keeps a hand-built Presentation
    from binding one set of disclosures while verifying another.
    """
    rebuilt = "~".join([p.issuer_jwt, *p.disclosures]) + "~"
    if rebuilt != p.sd_jwt_without_kb:
        raise SdJwtError("Presentation is not a compact SD-JWT")
    return rebuilt
