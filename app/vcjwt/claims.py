"""Reading a JWT's parts and claims defensively, with reasons named after the token.

Everything here is shared by the presentation and the credentials inside it: the strict JOSE
decoding of ``app.sdjwt`` (no duplicate names, canonical base64url), bounds on size and depth,
and the validity dates of both data models, checked with a little clock skew either way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.json_input import JsonInputError, check_value
from app.sdjwt import DEFAULT_ALGS, SdJwtError, read_unverified
from app.sdjwt.jws import allowed_alg, same_media_type
from app.vcjwt.errors import VcJwtError

# Larger than any presentation of one credential a wallet sends (the SD-JWT limit too).
MAX_TOKEN = 64 * 1024
# Clock skew allowed either way on every date, as for SD-JWT VC.
LEEWAY_SECONDS = 30
# Asymmetric signatures only (RFC 8725 §3.1): "none" and HMAC never verify here. ES256K
# (RFC 8812) too: Hyperledger Identus wallets and cloud agents sign VC-JWTs with secp256k1
# did:prism keys. It is not advertised to OpenID4VP wallets (``app.oid4vp.formats``), whose
# profiles (HAIP) do not name it; it is accepted when a presentation arrives signed with it.
ALLOWED_ALGS = (*DEFAULT_ALGS, "ES256K")
# An XML Schema dateTimeStamp is about 30 characters; anything far longer is not one.
MAX_DATE_LENGTH = 64


def read_jwt(token: Any, label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and payload of a compact JWS, not yet verified, bounded in size and depth, with
    its algorithm already checked: an unsigned or HMAC token goes no further (no key is looked
    up, nothing is fetched for it)."""
    if not isinstance(token, str):
        raise VcJwtError(f"{label} is not a JWT")
    if len(token) > MAX_TOKEN:
        raise VcJwtError(f"{label} is larger than {MAX_TOKEN} bytes")
    try:
        header, payload = read_unverified(token, label)
        allowed_alg(header, ALLOWED_ALGS, label)
    except SdJwtError as exc:
        raise VcJwtError(exc.reason) from exc
    try:
        check_value(header)
        check_value(payload)
    except JsonInputError as exc:
        raise VcJwtError(f"{label} is not JSON this verifier accepts: {exc}") from exc
    return header, payload


def check_typ(header: dict[str, Any], accepted: tuple[str, ...], label: str) -> None:
    """RFC 8725 §3.11: a ``typ`` header, when present, must name this kind of token (compared
    as RFC 7515 §4.1.9 says), so a token made for another purpose is not taken for this one."""
    if "typ" not in header:
        return
    if not any(same_media_type(header["typ"], media_type) for media_type in accepted):
        raise VcJwtError(f"{label} type header is not {' or '.join(accepted)}")


def identifier(value: Any, label: str, what: str) -> str | None:
    """A property that is a URL string or an object with an ``id`` (``issuer``, ``holder``)."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("id")
    if not isinstance(value, str) or not value:
        raise VcJwtError(f"{label} {what} is not an identifier")
    return value


def agreeing(claim: str | None, prop: str | None, label: str, names: str) -> str | None:
    """VCDM 1.1 §6.3.1 and VC-JOSE-COSE §3.1.3: a JWT claim and the data model property it
    stands for must not disagree; either may be absent."""
    if claim is not None and prop is not None and claim != prop:
        raise VcJwtError(f"{label} {names} disagree")
    return claim if claim is not None else prop


def string_claim(payload: dict[str, Any], name: str, label: str) -> str | None:
    value = payload.get(name)
    if value is not None and (not isinstance(value, str) or not value):
        raise VcJwtError(f"{label} {name} claim is not a string")
    return value


def numeric_date(payload: dict[str, Any], name: str, label: str) -> float | None:
    """RFC 7519 §2: a NumericDate is a JSON number; booleans are not numbers here."""
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VcJwtError(f"{label} {name} claim is not a date")
    return float(value)


def date_time(document: dict[str, Any], name: str, label: str) -> float | None:
    """A data model date (``validFrom``, ``expirationDate``...) as a POSIX timestamp.

    VCDM 2.0 §4.6 asks for an XML Schema dateTimeStamp: a date-time with its time zone. One
    without a zone names no instant, so it is refused rather than guessed.
    """
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_DATE_LENGTH or "T" not in value:
        raise VcJwtError(f"{label} {name} is not a date-time")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise VcJwtError(f"{label} {name} is not a date-time") from exc
    if parsed.tzinfo is None:
        raise VcJwtError(f"{label} {name} has no time zone")
    return parsed.timestamp()


def check_window(
    label: str, now: datetime, *, starts: list[float | None], ends: list[float | None]
) -> None:
    """Valid from the latest start to the earliest end, with ``LEEWAY_SECONDS`` either way.

    The reasons are the ones the person's page knows ("... has expired", "... is not valid
    yet"), whichever date of either data model set the limit.
    """
    timestamp = now.timestamp()
    if any(end is not None and timestamp - LEEWAY_SECONDS >= end for end in ends):
        raise VcJwtError(f"{label} has expired")
    if any(start is not None and timestamp + LEEWAY_SECONDS < start for start in starts):
        raise VcJwtError(f"{label} is not valid yet")


def check_issued(payload: dict[str, Any], label: str, now: datetime) -> None:
    """RFC 7519 §4.1.6: a token dated more than the leeway ahead has not been issued yet."""
    issued_at = numeric_date(payload, "iat", label)
    if issued_at is not None and issued_at > now.timestamp() + LEEWAY_SECONDS:
        raise VcJwtError(f"{label} was issued in the future")


def earliest(*ends: float | None) -> float | None:
    known = [end for end in ends if end is not None]
    return min(known) if known else None


def one_or_many(value: Any) -> list[Any]:
    """JSON-LD's "one value or an array of them" as a list."""
    return value if isinstance(value, list) else [value]


def check_context(document: dict[str, Any], first: str | tuple[str, ...], label: str) -> None:
    """VCDM 1.1 §4.1 and 2.0 §4.3: ``@context`` is an ordered set whose first item is the data
    model's base context (``first``: one, or the ones accepted). Nothing else of JSON-LD is
    processed: this verifier reads the JSON."""
    accepted = (first,) if isinstance(first, str) else first
    context = one_or_many(document.get("@context"))
    if not context or context[0] not in accepted:
        raise VcJwtError(f"{label} @context does not start with {' or '.join(accepted)}")


def types_of(document: dict[str, Any], required: str, label: str) -> tuple[str, ...]:
    """The ``type`` property: one string or a list of strings, ``required`` among them."""
    types = one_or_many(document.get("type"))
    if not types or not all(isinstance(t, str) and t for t in types):
        raise VcJwtError(f"{label} type is not a list of strings")
    if required not in types:
        raise VcJwtError(f"{label} type does not include {required}")
    return tuple(types)
