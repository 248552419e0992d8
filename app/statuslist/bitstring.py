"""Checking a W3C credential's status against its issuer's Bitstring Status List
(W3C Bitstring Status List v1.0, §4.1 "Validate Algorithm").

The credential has already been verified. Its ``credentialStatus`` holds one or more
``BitstringStatusListEntry`` objects (§2.1). For each entry whose purpose is ``revocation`` or
``suspension``: fetch the status list credential at ``statusListCredential`` (a VC-JWT), make
sure the credential's own issuer signed it, that it is a ``BitstringStatusListCredential``
whose subject is a ``BitstringStatusList`` for that purpose (§2.2), expand ``encodedList``
(multibase base64url of a GZIP-compressed bitstring, §4.3), refuse a list shorter than the
131,072 entries herd privacy needs (§4.1 STATUS_LIST_LENGTH_ERROR) and read the entry's bits,
index 0 being the left-most bit (§6.1 "Bitstring Encoding"). A ``refresh`` entry says nothing
about validity and is skipped; any other purpose cannot be judged and fails closed.

``StatusList2021Entry`` entries, of the draft this specification replaced, are routed to
``app.statuslist.statuslist2021`` (the lists the Hyperledger Identus cloud agent publishes:
JSON-LD credentials with an embedded proof), so one ``credentialStatus`` may hold either.

Verified lists are cached in the Fetcher's cache for their ``ttl`` (milliseconds, §2.2),
bounded as for Token Status List and never past the list credential's own end of validity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509

from app.sdjwt import SdJwtError
from app.sdjwt.encoding import b64url_decode
from app.statuslist import statuslist2021
from app.statuslist.check import (
    DEFAULT_CACHE_SECONDS,
    MAX_CACHE_SECONDS,
    MIN_CACHE_SECONDS,
    StatusResult,
    fetch_jwt_list,
)
from app.statuslist.encoding import (
    DEFAULT_MAX_DECOMPRESSED,
    INVALID,
    SUSPENDED,
    VALID,
    inflate,
    read_msb_first,
)
from app.statuslist.errors import StatusError
from app.statuslist.own import own_entry, own_prism_entry
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer
from app.trust.own import OwnIssuers
from app.vcjwt import VcJwtError, VerifiedCredential, verify_credential_jwt

ENTRY_TYPE = "BitstringStatusListEntry"
STATUS_LIST_2021_ENTRY_TYPE = statuslist2021.ENTRY_TYPE
LIST_CREDENTIAL_TYPE = "BitstringStatusListCredential"
LIST_TYPE = "BitstringStatusList"
# What a set bit means for each purpose this verifier judges, as Token Status List values so
# StatusResult words them ("revoked", "suspended").
PURPOSES = {"revocation": INVALID, "suspension": SUSPENDED}
SKIPPED_PURPOSES = frozenset({"refresh"})
# §4.1 step 2: minimumNumberOfEntries.
MIN_ENTRIES = 131_072
# More entries than any credential needs (one per purpose); bounds the fetches one makes.
MAX_ENTRIES = 4
MAX_STATUS_SIZE = 8
# §2.1: statusListIndex is a base-10 integer in a string; ten digits go past any list we read.
INDEX = re.compile(r"[0-9]{1,10}")
ACCEPT = "application/vc+jwt, application/jwt;q=0.9"
LABEL = "Status list credential"
# This deployment's issuers serve each status list as a Bitstring Status List credential too.
OWN_LIST_SUFFIX = "/bitstring"


@dataclass(frozen=True)
class Entry:
    purpose: str
    uri: str
    index: int
    size: int
    # BitstringStatusListEntry, or StatusList2021Entry (read by app.statuslist.statuslist2021).
    type: str = ENTRY_TYPE


@dataclass(frozen=True)
class _VerifiedList:
    issuer: str
    purposes: frozenset[str]
    bits: bytes
    expires: float | None

    def value(self, entry: Entry) -> int:
        """The ``entry.size`` bits at ``entry.index * entry.size``, most significant first."""
        entries = len(self.bits) * 8 // entry.size
        if entries < MIN_ENTRIES:
            raise StatusError(
                f"Status list has {entries} entries, fewer than the {MIN_ENTRIES} the "
                "specification requires"
            )
        return read_msb_first(self.bits, entry.index, entry.size)


def check_bitstring_status(
    credential_status: Any,
    *,
    credential_issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    own: OwnIssuers | None = None,
) -> StatusResult:
    """The status of the credential whose ``credentialStatus`` this is: the first entry that
    is not VALID, else VALID. Raises StatusError when no statement can be made; the caller
    decides whether that fails the presentation. A list of this deployment's own issuer
    (``own``: ``<issuer>/status-lists/<n>/bitstring``, or ``<issuer>/credential-status/<n>``
    for its did:prism, the same bits as Token Status List ``n``) is read as it is now
    (``app.statuslist.own``)."""
    result: StatusResult | None = None
    for entry in parse_entries(credential_status):
        if entry.purpose in SKIPPED_PURPOSES:
            continue
        status = _own_entry(entry, credential_issuer, own)
        if status is not None:
            result = StatusResult(status, status != VALID, entry.uri, entry.index)
            if not result.valid:
                return result
            continue
        if entry.type == STATUS_LIST_2021_ENTRY_TYPE:
            result = _status_2021(entry, credential_issuer, fetcher, now)
            if not result.valid:
                return result
            continue
        status_list = _cached(fetcher, entry.uri, credential_issuer, now)
        if status_list is None:
            status_list = _fetch_verified(entry.uri, credential_issuer, fetcher, anchors, now)
        result = _status(entry, status_list)
        if not result.valid:
            return result
    if result is None:
        raise StatusError("Credential status has no revocation or suspension entry")
    return result


def _status_2021(
    entry: Entry, issuer: ResolvedIssuer, fetcher: Fetcher, now: datetime
) -> StatusResult:
    if not statuslist2021.is_set(
        entry.purpose, entry.uri, entry.index, issuer=issuer, fetcher=fetcher, now=now
    ):
        return StatusResult(VALID, False, entry.uri, entry.index)
    return StatusResult(PURPOSES[entry.purpose], True, entry.uri, entry.index)


def _own_entry(entry: Entry, issuer: ResolvedIssuer, own: OwnIssuers | None) -> int | None:
    # This deployment serves its lists as Bitstring Status List credentials, and as
    # StatusList2021 credentials for what its did:prism issuers issue over DIDComm.
    if own is None:
        return None
    if entry.type == STATUS_LIST_2021_ENTRY_TYPE:
        return own_prism_entry(entry.uri, entry.index, entry.purpose, issuer, own)
    if entry.type != ENTRY_TYPE or not entry.uri.endswith(OWN_LIST_SUFFIX):
        return None
    if entry.size != 1 or entry.purpose != "revocation":
        return None
    return own_entry(entry.uri.removesuffix(OWN_LIST_SUFFIX), entry.index, issuer, own)


def parse_entries(credential_status: Any) -> list[Entry]:
    entries = credential_status if isinstance(credential_status, list) else [credential_status]
    if not entries or len(entries) > MAX_ENTRIES:
        raise StatusError(f"Credential status must have between 1 and {MAX_ENTRIES} entries")
    return [_entry(entry) for entry in entries]


def _entry(entry: Any) -> Entry:
    """§2.1 BitstringStatusListEntry: type, statusPurpose, statusListIndex,
    statusListCredential and an optional statusSize."""
    if not isinstance(entry, dict):
        raise StatusError("Credential status entry is not an object")
    kind = entry.get("type")
    if kind == STATUS_LIST_2021_ENTRY_TYPE:
        purpose, uri, index = statuslist2021.parse_entry(entry)
        return Entry(purpose, uri, index, 1, STATUS_LIST_2021_ENTRY_TYPE)
    if kind != ENTRY_TYPE:
        raise StatusError(
            f"Credential status type is neither {ENTRY_TYPE} nor {STATUS_LIST_2021_ENTRY_TYPE}"
        )
    purpose, uri = entry.get("statusPurpose"), entry.get("statusListCredential")
    index, size = entry.get("statusListIndex"), entry.get("statusSize", 1)
    if not isinstance(purpose, str) or not purpose:
        raise StatusError("Credential status entry has no statusPurpose")
    if purpose not in PURPOSES and purpose not in SKIPPED_PURPOSES:
        raise StatusError("Credential status purpose is neither revocation nor suspension")
    if not isinstance(index, str) or not INDEX.fullmatch(index):
        raise StatusError("Credential statusListIndex is not a base-10 integer in a string")
    if not isinstance(uri, str) or not uri:
        raise StatusError("Credential statusListCredential is missing")
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_STATUS_SIZE:
        raise StatusError(f"Credential statusSize is not an integer from 1 to {MAX_STATUS_SIZE}")
    return Entry(purpose, uri, int(index), size)


def _status(entry: Entry, status_list: _VerifiedList) -> StatusResult:
    # §4.1: the entry's purpose must be one the list declares.
    if entry.purpose not in status_list.purposes:
        raise StatusError(f"Status list is not a {entry.purpose} list")
    if status_list.value(entry) == 0:
        return StatusResult(VALID, False, entry.uri, entry.index)
    return StatusResult(PURPOSES[entry.purpose], True, entry.uri, entry.index)


def _cache_key(uri: str) -> tuple[str, str]:
    return ("bitstring", uri)


def _cached(
    fetcher: Fetcher, uri: str, issuer: ResolvedIssuer, now: datetime
) -> _VerifiedList | None:
    entry = fetcher.cache.get(_cache_key(uri))
    if not isinstance(entry, _VerifiedList) or entry.issuer != issuer.identifier:
        return None
    if entry.expires is not None and now.timestamp() >= entry.expires:
        return None
    return entry


def _fetch_verified(
    uri: str,
    issuer: ResolvedIssuer,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
) -> _VerifiedList:
    """§4.1 step 4: dereference, verify the proof (here the JWT's signature), then read."""
    token = fetch_jwt_list(fetcher, uri, ACCEPT)
    try:
        credential = verify_credential_jwt(
            token, fetcher=fetcher, anchors=anchors, now=now, label=LABEL
        )
    except VcJwtError as exc:
        raise StatusError(exc.reason) from exc
    verified = _read_list(credential, uri, issuer)
    fetcher.cache.set(
        _cache_key(uri), verified, _cache_seconds(credential, now), size=len(verified.bits)
    )
    return verified


def _read_list(credential: VerifiedCredential, uri: str, issuer: ResolvedIssuer) -> _VerifiedList:
    """§2.2 BitstringStatusListCredential, signed by the credential's own issuer: a list from
    anyone else could say anything about this credential."""
    if credential.issuer.identifier != issuer.identifier:
        raise StatusError("Status list is signed by another issuer than the credential")
    if LIST_CREDENTIAL_TYPE not in credential.types:
        raise StatusError(f"Status list credential is not a {LIST_CREDENTIAL_TYPE}")
    if credential.id is not None and credential.id != uri:
        raise StatusError("Status list credential is for another list: its id is not its URL")
    subject = credential.subject
    if LIST_TYPE not in _strings(subject.get("type")):
        raise StatusError(f"Status list credential subject is not a {LIST_TYPE}")
    purposes = _strings(subject.get("statusPurpose"))
    if not purposes:
        raise StatusError("Status list credential has no statusPurpose")
    bits = decode_encoded_list(subject.get("encodedList"))
    return _VerifiedList(issuer.identifier, frozenset(purposes), bits, credential.expires)


def _strings(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [item for item in values if isinstance(item, str) and item]


def decode_encoded_list(encoded: Any, *, max_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """§4.3 Bitstring Expansion: multibase-decode (``u``: base64url without padding), then
    GZIP-decompress, never inflating more than ``max_bytes``."""
    if not isinstance(encoded, str) or not encoded.startswith("u"):
        raise StatusError("Status list encodedList is not multibase base64url (no u prefix)")
    try:
        compressed = b64url_decode(encoded[1:], "Status list encodedList")
    except SdJwtError as exc:
        raise StatusError("Status list encodedList is not base64url") from exc
    return inflate(compressed, max_bytes=max_bytes, what="Status list encodedList", gzip=True)


def _cache_seconds(credential: VerifiedCredential, now: datetime) -> float:
    """§2.2 ``ttl`` (milliseconds) when given, else a default; bounded both ways as for Token
    Status List, and never past the list credential's end of validity."""
    ttl = credential.subject.get("ttl")
    valid_ttl = isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0
    seconds = ttl / 1000 if valid_ttl else DEFAULT_CACHE_SECONDS
    seconds = min(max(seconds, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)
    if credential.expires is not None:
        seconds = min(seconds, credential.expires - now.timestamp())
    return seconds
