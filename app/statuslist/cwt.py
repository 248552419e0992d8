"""Token Status List in its CWT form (Token Status List 5.2 and 6.3), for mdoc credentials.

An ISO mdoc names its status in the MSO (``status.status_list`` with ``idx`` and ``uri``, as
in a JWT). The list is a COSE_Sign1 (RFC 9052) whose protected header says
``typ`` ``application/statuslist+cwt`` (label 16) and whose payload is a CWT claims set:
``sub`` (2) the list's URI, ``iat`` (6), ``exp`` (4), ``ttl`` (65534) and ``status_list``
(65533: ``bits`` and the ZLIB-compressed ``lst`` bytes).

Who may sign it (Token Status List 11.3): the credential's own document signer key, or a
certificate chain (``x5chain``, label 33) that leads to the same trust anchor as the
credential's. Verified lists are kept for their ``ttl`` like JWT ones. Fail-closed: anything
that keeps a statement from being made raises ``StatusError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509

from app.cose import CoseError, Sign1, loads, read_sign1, x5chain
from app.statuslist.check import (
    DEFAULT_CACHE_SECONDS,
    MAX_CACHE_SECONDS,
    MIN_CACHE_SECONDS,
    StatusResult,
    fetch_list,
    parse_reference,
)
from app.statuslist.encoding import VALID, StatusList, status_list_from_bytes
from app.statuslist.errors import StatusError
from app.statuslist.own import own_mdoc_entry
from app.trust.errors import TrustError
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer
from app.trust.own import OwnIssuers
from app.trust.x5c import fingerprint, validate_chain

MEDIA_TYPE = "application/statuslist+cwt"
TYP = 16
SUB, EXP, IAT = 2, 4, 6
TTL, STATUS_LIST = 65534, 65533
LABEL = "Status list CWT"


@dataclass(frozen=True)
class _VerifiedList:
    signer_anchor: str | None
    status_list: StatusList
    exp: float | None
    ttl: float | None


def anchor_of(issuer: ResolvedIssuer) -> str | None:
    """The SHA-256 fingerprint of the trust anchor an x5c issuer's chain ended at."""
    return fingerprint(issuer.certificates[-1]) if issuer.certificates else None


def check_cwt_status(
    status_claim: Any,
    *,
    credential_issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    anchor: str | None = None,
    own: OwnIssuers | None = None,
) -> StatusResult:
    """The status of the mdoc whose MSO ``status`` entry this is; StatusError when no
    statement can be made. ``anchor`` is the fingerprint of the credential's trust anchor
    (taken from ``credential_issuer`` when it has its chain). A list of this deployment's
    own issuers (``own``) is read as it is now (``app.statuslist.own``)."""
    reference = parse_reference(status_claim)
    if own is not None:
        status = own_mdoc_entry(reference.uri, reference.idx, credential_issuer, own)
        if status is not None:
            return StatusResult(status, status != VALID, reference.uri, reference.idx)
    anchor = anchor or anchor_of(credential_issuer)
    key = ("statuslist-cwt", reference.uri)
    entry = fetcher.cache.get(key)
    if (
        not isinstance(entry, _VerifiedList)
        or entry.signer_anchor != anchor
        or (entry.exp is not None and now.timestamp() >= entry.exp)
    ):
        entry = _fetch_verified(reference.uri, credential_issuer, anchor, fetcher, anchors, now)
        fetcher.cache.set(key, entry, _cache_seconds(entry, now), size=len(entry.status_list.data))
    status = entry.status_list.value(reference.idx)
    return StatusResult(status, status != VALID, reference.uri, reference.idx)


def _fetch_verified(
    uri: str,
    issuer: ResolvedIssuer,
    anchor: str | None,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> _VerifiedList:
    try:
        sign1 = read_sign1(fetch_list(fetcher, uri, MEDIA_TYPE), LABEL)
    except CoseError as exc:
        raise StatusError(exc.reason) from exc
    if sign1.protected.get(TYP) != MEDIA_TYPE:
        raise StatusError(f"{LABEL} has typ {sign1.protected.get(TYP)!r}, not {MEDIA_TYPE}")
    _verify_signer(sign1, issuer, anchor, anchors, now)
    claims = _claims(sign1.payload)
    _check_claims(claims, uri, now)
    status_list = _status_list(claims.get(STATUS_LIST))
    return _VerifiedList(anchor, status_list, _number(claims, EXP), _number(claims, TTL))


def _verify_signer(
    sign1: Sign1,
    issuer: ResolvedIssuer,
    anchor: str | None,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> None:
    """The credential's own key, or a chain to the credential's trust anchor (11.3)."""
    try:
        chain = x5chain(sign1)
        if chain is None:
            sign1.verify(issuer.key)
            return
        path = validate_chain(chain, anchors, now)
    except CoseError as exc:
        raise StatusError(exc.reason) from exc
    except TrustError as exc:
        raise StatusError(f"Status list signer could not be established: {exc.reason}") from exc
    if anchor is None or fingerprint(path[-1]) != anchor:
        raise StatusError("Status list is signed by another issuer than the credential")
    try:
        sign1.verify(path[0].public_key())
    except CoseError as exc:
        raise StatusError(exc.reason) from exc


def _claims(payload: bytes | None) -> dict[Any, Any]:
    if payload is None:
        raise StatusError(f"{LABEL} has no payload")
    try:
        claims = loads(payload, f"{LABEL} payload")
    except CoseError as exc:
        raise StatusError(exc.reason) from None
    if not isinstance(claims, dict):
        raise StatusError(f"{LABEL} payload is not a claims map")
    return claims


def _number(claims: dict[Any, Any], key: int) -> float | None:
    value = claims.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise StatusError(f"{LABEL} claim {key} is not a number")
    return float(value)


def _check_claims(claims: dict[Any, Any], uri: str, now: datetime) -> None:
    """Token Status List 8.3 step 4, in the CWT's claim keys."""
    if claims.get(SUB) != uri:
        raise StatusError(f"{LABEL} is for another list: its sub is not the uri")
    if _number(claims, IAT) is None:
        raise StatusError(f"{LABEL} has no iat")
    exp, ttl = _number(claims, EXP), _number(claims, TTL)
    if exp is not None and now.timestamp() >= exp:
        raise StatusError(f"{LABEL} has expired")
    if ttl is not None and ttl <= 0:
        raise StatusError(f"{LABEL} ttl is not a positive number")


def _status_list(value: Any) -> StatusList:
    """4.3: ``bits`` and ``lst``, the ZLIB-compressed byte array as a byte string."""
    if not isinstance(value, dict):
        raise StatusError(f"{LABEL} has no status_list map")
    lst = value.get("lst")
    if not isinstance(lst, bytes):
        raise StatusError("Status list lst is not a byte string")
    return status_list_from_bytes(value.get("bits"), lst)


def _cache_seconds(entry: _VerifiedList, now: datetime) -> float:
    """As for JWT lists (13.7): ttl, else until exp; bounded both ways, never past exp."""
    remaining = None if entry.exp is None else entry.exp - now.timestamp()
    seconds = entry.ttl if entry.ttl is not None else (remaining or DEFAULT_CACHE_SECONDS)
    seconds = min(max(seconds, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)
    return seconds if remaining is None else min(seconds, remaining)
