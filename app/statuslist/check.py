"""Checking a credential's status against its issuer's Token Status List
(draft-ietf-oauth-status-list 8.3 "Validation Rules").

The credential has already been verified (8.3: the Referenced Token's own rules come first).
Here: fetch the Status List Token at ``status.status_list.uri``, make sure it is a status list
token signed by the same issuer as the credential, read the entry at ``idx``. Verified lists
are cached for their ``ttl`` (never past ``exp``) in the Fetcher's cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509

from app.sdjwt import PublicKey, SdJwtError, read_unverified, verify_jws
from app.sdjwt.jws import same_media_type
from app.statuslist.encoding import INVALID, SUSPENDED, VALID, StatusList, decode_status_list
from app.statuslist.errors import StatusError
from app.statuslist.own import own_entry
from app.trust.errors import FetchError, TrustError
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer, resolve_issuer_key
from app.trust.own import OwnIssuers

# Token Status List 5.1 and 8.1.
TOKEN_TYP = "statuslist+jwt"
ACCEPT = "application/statuslist+jwt"
# Asymmetric signatures only: a list protected by a shared secret proves nothing
# about its issuer. "Ed25519" is the fully-specified name for EdDSA over Ed25519 (RFC 9864).
ALLOWED_ALGS = ("ES256", "ES384", "ES512", "EdDSA", "Ed25519", "RS256", "PS256")
# What reasons call the token: the shared JOSE code starts its reasons with this label.
LABEL = "Status list token"
# Token Status List 11.5 and 13.7: clients bound ttl and exp to reasonable values, so that an
# issuer cannot make every verification refetch (a tiny ttl) or pin a stale list for months.
MIN_CACHE_SECONDS = 10.0
MAX_CACHE_SECONDS = 24 * 3600.0
# Neither ttl nor exp: the issuer gives no guidance, so keep the list briefly.
DEFAULT_CACHE_SECONDS = 300.0


@dataclass(frozen=True)
class StatusResult:
    """The credential's status. ``revoked`` is True for every status other than VALID:
    INVALID (revoked), SUSPENDED, and application-specific values alike, so a caller that
    only reads ``revoked`` never accepts a credential its issuer does not call valid."""

    status: int
    revoked: bool
    uri: str
    idx: int

    @property
    def valid(self) -> bool:
        return self.status == VALID

    @property
    def suspended(self) -> bool:
        return self.status == SUSPENDED

    @property
    def reason(self) -> str | None:
        """A plain sentence for a refused presentation, or None when VALID."""
        if self.status == VALID:
            return None
        if self.status == INVALID:
            return "Credential has been revoked by its issuer"
        if self.status == SUSPENDED:
            return "Credential is suspended by its issuer"
        return f"Credential status is 0x{self.status:02x}, not VALID"


@dataclass(frozen=True)
class StatusReference:
    uri: str
    idx: int


@dataclass(frozen=True)
class _VerifiedList:
    issuer: str
    status_list: StatusList
    exp: float | None


def parse_reference(status_claim: Any) -> StatusReference:
    """Token Status List 6.2 and 8.3 step 1: ``status.status_list`` with ``idx`` and ``uri``."""
    reference = status_claim.get("status_list") if isinstance(status_claim, dict) else None
    if not isinstance(reference, dict):
        raise StatusError("Credential status claim has no status_list reference")
    idx, uri = reference.get("idx"), reference.get("uri")
    if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
        raise StatusError("Credential status_list idx is not a non-negative integer")
    if not isinstance(uri, str) or not uri:
        raise StatusError("Credential status_list uri is missing")
    return StatusReference(uri, idx)


def check_status(
    status_claim: Any,
    *,
    credential_issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    own: OwnIssuers | None = None,
) -> StatusResult:
    """The status of the credential whose ``status`` claim this is. Raises StatusError when
    no statement can be made; the caller decides whether that fails the presentation. A list
    of this deployment's own issuer (``own``) is read as it is now (``app.statuslist.own``)."""
    reference = parse_reference(status_claim)
    if own is not None:
        status = own_entry(reference.uri, reference.idx, credential_issuer, own)
        if status is not None:
            return StatusResult(status, status != VALID, reference.uri, reference.idx)
    status_list = _cached(fetcher, reference.uri, credential_issuer, now)
    if status_list is None:
        status_list = _fetch_verified(reference.uri, credential_issuer, fetcher, anchors, now)
    status = status_list.value(reference.idx)
    return StatusResult(status, status != VALID, reference.uri, reference.idx)


def _cache_key(uri: str) -> tuple[str, str]:
    return ("statuslist", uri)


def _cached(fetcher: Fetcher, uri: str, issuer: ResolvedIssuer, now: datetime) -> StatusList | None:
    entry = fetcher.cache.get(_cache_key(uri))
    if not isinstance(entry, _VerifiedList) or entry.issuer != issuer.identifier:
        return None
    if entry.exp is not None and now.timestamp() >= entry.exp:
        return None
    return entry.status_list


def _fetch_verified(
    uri: str,
    issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> StatusList:
    token = fetch_jwt_list(fetcher, uri, ACCEPT)
    payload = _verify_token(token, uri, issuer, fetcher, anchors, now)
    status_list = decode_status_list(payload.get("status_list"))
    entry = _VerifiedList(issuer.identifier, status_list, _number(payload, "exp"))
    seconds = _cache_seconds(payload, now)
    fetcher.cache.set(_cache_key(uri), entry, seconds, size=len(status_list.data))
    return status_list


def fetch_list(fetcher: Fetcher, uri: str, accept: str) -> bytes:
    """A status list's body, whatever its form. The Fetcher's own cache is bypassed: each
    form keeps what it verified for the list's own lifetime (ttl, exp, validity)."""
    try:
        return fetcher.get_bytes(uri, accept=accept, cache_ttl=0)
    except FetchError as exc:
        raise StatusError(f"Status list could not be fetched: {exc.reason}") from exc


def fetch_jwt_list(fetcher: Fetcher, uri: str, accept: str) -> str:
    """A status list served as a compact JWT (a Token Status List, a W3C list credential)."""
    try:
        return fetch_list(fetcher, uri, accept).decode("ascii").strip()
    except UnicodeDecodeError as exc:
        raise StatusError("Status list answer is not a JWT") from exc


def _verify_token(
    token: str,
    uri: str,
    issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> dict[str, Any]:
    """Token Status List 8.3 steps 3 and 4. Reasons from the shared JOSE code (``SdJwtError``)
    become StatusError here, named after the status list token."""
    try:
        header, unverified = read_unverified(token, LABEL)
    except SdJwtError as exc:
        raise StatusError(exc.reason) from exc
    _check_typ(header)
    key = _signing_key(header, unverified, issuer, fetcher, anchors, now)
    try:
        _, payload = verify_jws(token, key, ALLOWED_ALGS, typ=TOKEN_TYP, label=LABEL)
    except SdJwtError as exc:
        raise StatusError(exc.reason) from exc
    _check_claims(payload, uri, now)
    return payload


def _check_typ(header: dict[str, Any]) -> None:
    # Before the key is resolved (which may fetch): a token of another type is not looked
    # into further. verify_jws checks typ again, with the same comparison (RFC 7515 4.1.9).
    typ = header.get("typ")
    if not same_media_type(typ, TOKEN_TYP):
        raise StatusError(f"Status list token has typ {typ!r}, not {TOKEN_TYP}")


def _signing_key(
    header: dict[str, Any],
    unverified: dict[str, Any],
    issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> PublicKey:
    """The key of the credential's issuer that signed this list.

    Token Status List 11.3: the status list may carry its own x5c or iss, or only a kid
    resolved the way the credential's key was. Without iss, the token speaks for the
    credential's issuer; without x5c, an x5c issuer can only have signed it with the
    credential's own certificate key.
    """
    if "x5c" not in header and "iss" not in unverified and issuer.method == "x5c":
        return issuer.key
    claims = unverified if "iss" in unverified else {**unverified, "iss": issuer.identifier}
    try:
        resolved = resolve_issuer_key(header, claims, fetcher=fetcher, anchors=anchors, now=now)
    except TrustError as exc:
        raise StatusError(f"Status list signer could not be established: {exc.reason}") from exc
    if resolved.identifier != issuer.identifier:
        raise StatusError("Status list is signed by another issuer than the credential")
    return resolved.key


def _number(payload: dict[str, Any], name: str) -> float | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise StatusError(f"Status list token {name} is not a number")
    return float(value)


def _check_claims(payload: dict[str, Any], uri: str, now: datetime) -> None:
    """Token Status List 5.1 and 8.3 step 4; RFC 7519 4.1.4 and 4.1.5."""
    if payload.get("sub") != uri:
        raise StatusError("Status list token is for another list: its sub is not the uri")
    if _number(payload, "iat") is None:
        raise StatusError("Status list token has no iat")
    timestamp = now.timestamp()
    exp, nbf, ttl = _number(payload, "exp"), _number(payload, "nbf"), _number(payload, "ttl")
    if exp is not None and timestamp >= exp:
        raise StatusError("Status list token has expired")
    if nbf is not None and timestamp < nbf:
        raise StatusError("Status list token is not valid yet")
    if ttl is not None and ttl <= 0:
        raise StatusError("Status list token ttl is not a positive number")


def _cache_seconds(payload: dict[str, Any], now: datetime) -> float:
    """Token Status List 13.7: cache for ttl after fetching; without ttl until exp. Bounded
    both ways (11.5), and never past exp."""
    ttl, exp = _number(payload, "ttl"), _number(payload, "exp")
    remaining = None if exp is None else exp - now.timestamp()
    seconds = ttl if ttl is not None else (remaining or DEFAULT_CACHE_SECONDS)
    seconds = min(max(seconds, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)
    return seconds if remaining is None else min(seconds, remaining)
