"""Checking a ``StatusList2021Entry`` against its issuer's StatusList2021 list, as the
Hyperledger Identus cloud agent publishes it (W3C CCG "Verifiable Credentials Status List
v2021", Working Draft 2023-04-27, the version the agent's revocation.md cites).

The list is a JSON-LD credential (not a JWT) of type ``StatusList2021Credential`` with an
embedded proof (``app.statuslist.ldproof``), fetched through the Fetcher. Everything read from
it is first checked to be covered by that proof: the document may hold only the members the
shipped contexts define, so nothing JSON-LD would drop unsigned is read, and no blank-node
structure reaches the canonicalization beyond the subject's. Then: the list must be the
credential issuer's, for the entry's purpose, at least 16KB uncompressed ("The uncompressed
bitstring MUST be at least 16KB in size", §3.2 credentialSubject.encodedList; the agent always
writes 131,072 bits), and bit ``statusListIndex`` (index 0 the left-most bit, §5.5 "Bitstring
Encoding"; the agent reverses each byte of a java.util.BitSet to write it so,
BitString.scala) is the status. Any doubt fails closed with a StatusError.

Where the agent departs from the draft, the agent is followed: ``statusPurpose`` is written
``Revocation`` (the Scala enum's name) and compared without case; ``statusListIndex`` may be a
number; ``encodedList`` is base64url with padding (java.util.Base64's URL encoder), read here
in either base64 alphabet, padded or not; ``issuanceDate`` is a number of seconds.

A verified list is kept in the Fetcher's cache for the Token Status List default (the format
has no ``ttl``), never past its ``expirationDate``.
"""

from __future__ import annotations

import base64
import gzip
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.sdjwt import SdJwtError
from app.sdjwt.encoding import parse_json
from app.statuslist.check import DEFAULT_CACHE_SECONDS, MIN_CACHE_SECONDS, fetch_list
from app.statuslist.encoding import DEFAULT_MAX_DECOMPRESSED, inflate, read_msb_first
from app.statuslist.errors import StatusError
from app.statuslist.jsonld import CONTEXTS
from app.statuslist.ldproof import base64_either, same_did, verify_list_proof
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer

ENTRY_TYPE = "StatusList2021Entry"
LIST_CREDENTIAL_TYPE = "StatusList2021Credential"
LIST_TYPE = "StatusList2021"
CREDENTIALS_V1 = "https://www.w3.org/2018/credentials/v1"
# The status list context the lists made here name: the draft's own (§2.1), which the Identus
# SDK carries (IsCredentialRevoked.ts), so its check fetches no context. The agent names a copy
# on w3c.github.io (VCStatusList2021.scala) that the SDK would have to fetch: offline, or once
# that page moves, every check of the list fails. Both hold the same terms, so the N-Quads
# signed are the same whichever a list names; lists naming either are read.
LIST_CONTEXT = "https://w3id.org/vc/status-list/2021/v1"
PURPOSES = ("revocation", "suspension")
# §3.2: at least 16KB uncompressed.
MIN_BITS = 131_072
INDEX = re.compile(r"[0-9]{1,10}")
ACCEPT = "application/vc+ld+json, application/ld+json;q=0.9, application/json;q=0.8"
# The members this verifier lets a list have: each is defined by the shipped contexts (so the
# proof covers it) and is a plain value or the one subject object.
LIST_MEMBERS = frozenset(
    {
        "@context",
        "id",
        "type",
        "issuer",
        "issuanceDate",
        "expirationDate",
        "credentialSubject",
        "proof",
        "name",
        "description",
    }
)
SUBJECT_MEMBERS = frozenset({"id", "type", "statusPurpose", "encodedList", "name", "description"})


def parse_entry(entry: dict[str, Any]) -> tuple[str, str, int]:
    """A ``StatusList2021Entry``'s purpose (lower case), list URL and index."""
    purpose, uri = entry.get("statusPurpose"), entry.get("statusListCredential")
    index = entry.get("statusListIndex")
    if not isinstance(purpose, str) or purpose.lower() not in PURPOSES:
        raise StatusError("Credential status purpose is neither revocation nor suspension")
    if isinstance(index, str) and INDEX.fullmatch(index):
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 10**10:
        raise StatusError("Credential statusListIndex is not a non-negative base-10 integer")
    if not isinstance(uri, str) or not uri:
        raise StatusError("Credential statusListCredential is missing")
    return purpose.lower(), uri, index


@dataclass(frozen=True)
class _VerifiedList:
    issuer: str
    purpose: str
    bits: bytes
    expires: float | None


def is_set(
    purpose: str, uri: str, index: int, *, issuer: ResolvedIssuer, fetcher: Fetcher, now: datetime
) -> bool:
    """Whether the credential issuer's list at ``uri`` sets bit ``index`` for ``purpose``."""
    status_list = _cached(fetcher, uri, issuer, now) or _fetch_verified(uri, issuer, fetcher, now)
    if status_list.purpose != purpose:
        raise StatusError(f"Status list is not a {purpose} list")
    if len(status_list.bits) * 8 < MIN_BITS:
        raise StatusError(
            f"Status list has {len(status_list.bits) * 8} entries, fewer than the {MIN_BITS} "
            "the specification requires"
        )
    return read_msb_first(status_list.bits, index) == 1


def _cache_key(uri: str) -> tuple[str, str]:
    return ("statuslist2021", uri)


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
    uri: str, issuer: ResolvedIssuer, fetcher: Fetcher, now: datetime
) -> _VerifiedList:
    try:
        document = parse_json(fetch_list(fetcher, uri, ACCEPT), "Status list")
    except SdJwtError as exc:
        raise StatusError("Status list is not a JSON document") from exc
    verified = read_list(document, uri, issuer, now)
    seconds = DEFAULT_CACHE_SECONDS
    if verified.expires is not None:
        seconds = min(seconds, verified.expires - now.timestamp())
    if seconds >= MIN_CACHE_SECONDS:
        fetcher.cache.set(_cache_key(uri), verified, seconds, size=len(verified.bits))
    return verified


def read_list(document: Any, uri: str, issuer: ResolvedIssuer, now: datetime) -> _VerifiedList:
    """Check a fetched list's shape and proof, then read it (see the module docstring)."""
    _check_shape(document)
    verify_list_proof(document, issuer)
    listed = document["issuer"]
    listed = listed.get("id") if isinstance(listed, dict) else listed
    if not isinstance(listed, str) or not same_did(listed, issuer.identifier):
        raise StatusError("Status list is signed by another issuer than the credential")
    if "id" in document and document["id"] != uri:
        raise StatusError("Status list credential is for another list: its id is not its URL")
    expires = _expires(document.get("expirationDate"))
    if expires is not None and now.timestamp() >= expires:
        raise StatusError("Status list credential has expired")
    subject = document["credentialSubject"]
    if subject.get("type") != LIST_TYPE:
        raise StatusError(f"Status list credential subject is not a {LIST_TYPE}")
    purpose = subject.get("statusPurpose")
    if not isinstance(purpose, str) or not purpose:
        raise StatusError("Status list credential has no statusPurpose")
    bits = decode_encoded_list(subject.get("encodedList"))
    return _VerifiedList(issuer.identifier, purpose.lower(), bits, expires)


def _check_shape(document: Any) -> None:
    if not isinstance(document, dict):
        raise StatusError("Status list is not a JSON object")
    contexts = document.get("@context")
    if not isinstance(contexts, list) or not contexts or contexts[0] != CREDENTIALS_V1:
        raise StatusError(f"Status list credential's first @context is not {CREDENTIALS_V1}")
    for context in contexts:
        if not isinstance(context, str) or context not in CONTEXTS:
            raise StatusError(
                f"Status list names a JSON-LD context this service does not ship: {context!r}"
            )
    extra = sorted(set(document) - LIST_MEMBERS)
    if extra:
        raise StatusError(f"Status list credential has members this service does not read: {extra}")
    types = document.get("type")
    if not isinstance(types, list) or LIST_CREDENTIAL_TYPE not in types:
        raise StatusError(f"Status list credential is not a {LIST_CREDENTIAL_TYPE}")
    issuer = document.get("issuer")
    if isinstance(issuer, dict) and set(issuer) == {"id"}:
        issuer = issuer["id"]
    if not isinstance(issuer, str) or not issuer:
        raise StatusError("Status list credential has no issuer")
    subject = document.get("credentialSubject")
    if not isinstance(subject, dict) or set(subject) - SUBJECT_MEMBERS:
        raise StatusError("Status list credential subject is not a status list")
    plain = [document.get(name) for name in ("id", "issuanceDate", "expirationDate")]
    plain += list(subject.values()) + list(types)
    if not all(value is None or isinstance(value, str | int) for value in plain):
        raise StatusError("Status list credential has a member of an unexpected kind")


def _expires(value: Any) -> float | None:
    """``expirationDate``: an xsd:dateTime (UTC when it names no offset), or seconds as the
    agent writes its dates."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise StatusError("Status list credential expirationDate is not a date") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def decode_encoded_list(encoded: Any, *, max_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """§5.6 Bitstring Expansion: base64-decode (RFC 4648, either alphabet), GZIP-decompress,
    never inflating more than ``max_bytes``."""
    try:
        compressed = base64_either(encoded)
    except ValueError:
        raise StatusError("Status list encodedList is not base64") from None
    return inflate(compressed, max_bytes=max_bytes, what="Status list encodedList", gzip=True)


def entry(uri: str, index: int) -> dict[str, Any]:
    """A ``credentialStatus`` entry for bit ``index`` of the revocation list at ``uri``, as the
    agent writes it (CredentialServiceImpl.scala), the index as a string as §2.1 has it."""
    return {
        "id": f"{uri}#{index}",
        "type": ENTRY_TYPE,
        "statusPurpose": "Revocation",
        "statusListIndex": str(index),
        "statusListCredential": uri,
    }


def unsigned_list(
    *,
    uri: str,
    issuer: str,
    revoked: Iterable[int],
    size: int,
    issued_at: datetime,
    expires_at: datetime | None = None,
) -> dict[str, Any]:
    """A revocation ``StatusList2021Credential`` with ``size`` entries (at least
    ``MIN_BITS``), ``revoked`` set, to be signed (``ldproof.sign_secp256k1_2019``). Shaped as
    the agent shapes its lists, with dates as the draft has them (xsd:dateTime, where the
    agent writes seconds) and the subject named ``<uri>#list`` (§2.1's example)."""
    if size < MIN_BITS or size % 8:
        raise ValueError(f"A list has a multiple of 8 entries, at least {MIN_BITS}")
    data = bytearray(size // 8)
    for index in revoked:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < size:
            raise ValueError(f"Status index {index!r} is outside a list of {size} entries")
        data[index >> 3] |= 0x80 >> (index & 7)  # index 0 is the left-most bit (§5.5)
    # base64url, padded, as the agent writes it (java.util.Base64's URL encoder).
    encoded = base64.urlsafe_b64encode(gzip.compress(bytes(data), compresslevel=9, mtime=0))
    document: dict[str, Any] = {
        "@context": [CREDENTIALS_V1, LIST_CONTEXT],
        "type": ["VerifiableCredential", LIST_CREDENTIAL_TYPE],
        "id": uri,
        "issuer": issuer,
        "issuanceDate": _xsd(issued_at),
    }
    if expires_at is not None:
        document["expirationDate"] = _xsd(expires_at)
    document["credentialSubject"] = {
        "id": f"{uri}#list",
        "type": LIST_TYPE,
        "statusPurpose": "Revocation",
        "encodedList": encoded.decode("ascii"),
    }
    return document


def _xsd(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
