"""Checking a credential's status again after the decision, without keeping the credential.

At the decision the service keeps only what reading the status list entry needs: its ``uri``
and ``idx`` and the issuer that must have signed the list (identifier, how it was resolved, and
its public key, which an x5c issuer may sign its list with without naming itself again; Token
Status List 11.3). A later check reads the list as at the decision (``check_status``), with the
same signer rules, so a list from anyone else is refused the same way.

A list of this deployment's own issuer is read from the database at the re-check as at the
decision (``app.statuslist.own``). The reference then says so (``"own": true``): it was written
by this service, and the re-check job may run where no base URL is configured (a local run
issues under the address its requests came in on), so the mark, not the URL, decides.

A W3C credential's Bitstring Status List and StatusList2021 entries are kept the same way
(``kind`` "bitstring": each entry's type, purpose, list URL, index and size) and read again
with ``check_bitstring_status``, which routes each entry by its type.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

from app.statuslist.bitstring import ENTRY_TYPE, check_bitstring_status, parse_entries
from app.statuslist.check import StatusResult, check_status, parse_reference
from app.statuslist.cwt import anchor_of, check_cwt_status
from app.statuslist.errors import StatusError
from app.statuslist.own import OWN_METHODS
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer
from app.trust.own import OwnIssuers, base_of

_KEY_TYPES = (
    ec.EllipticCurvePublicKey,
    rsa.RSAPublicKey,
    ed25519.Ed25519PublicKey,
    ed448.Ed448PublicKey,
)
_METHODS = ("did:jwk", "did:web", "did:prism", "jwt-vc-issuer", "x5c")
BITSTRING = "bitstring"
CWT = "cwt"


def reference_to_keep(
    status_claim: Any, issuer: ResolvedIssuer, own: OwnIssuers | None = None
) -> dict[str, Any] | None:
    """What checking this credential's status again needs, as JSON; None without a reference.
    ``own``: this deployment's issuers, whose lists are marked to be read from the database."""
    try:
        reference = parse_reference(status_claim)
    except StatusError:
        return None
    key = issuer.key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    kept: dict[str, Any] = {
        "uri": reference.uri,
        "idx": reference.idx,
        "issuer": issuer.identifier,
        "method": issuer.method,
        "key": key.decode("ascii"),
    }
    if own is not None and issuer.method in OWN_METHODS and own.names(issuer.identifier):
        kept["own"] = True
    return kept


def cwt_reference_to_keep(status_claim: Any, issuer: ResolvedIssuer) -> dict[str, Any] | None:
    """The same for an mdoc's MSO ``status``, read from a list in CWT form: with the
    fingerprint of the trust anchor, under which another certificate may sign the list."""
    kept = reference_to_keep(status_claim, issuer)
    if kept is None:
        return None
    return {**kept, "kind": CWT, "anchor": anchor_of(issuer)}


def bitstring_reference_to_keep(
    credential_status: Any, issuer: ResolvedIssuer
) -> dict[str, Any] | None:
    """The same for a W3C ``credentialStatus`` (Bitstring Status List or StatusList2021
    entries)."""
    try:
        entries = parse_entries(credential_status)
    except StatusError:
        return None
    kept = [
        {
            "type": entry.type,
            "statusPurpose": entry.purpose,
            "statusListCredential": entry.uri,
            "statusListIndex": str(entry.index),
            # StatusList2021 entries have one bit each and no statusSize.
            **({"statusSize": entry.size} if entry.type == ENTRY_TYPE else {}),
        }
        for entry in entries
    ]
    key = issuer.key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "kind": BITSTRING,
        "entries": kept,
        "issuer": issuer.identifier,
        "method": issuer.method,
        "key": key.decode("ascii"),
    }


def check_kept(
    kept: Any,
    *,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    own: OwnIssuers | None = None,
) -> StatusResult:
    """The status now of the credential ``kept`` was made from; StatusError when no statement
    can be made (the list cannot be fetched or verified, or ``kept`` is not one of ours).
    ``own`` reads the lists of this deployment's issuers (see the module docstring)."""
    if isinstance(kept, dict) and kept.get("kind") == BITSTRING:
        return check_bitstring_status(
            _field(kept, "entries"),
            credential_issuer=_issuer(kept),
            fetcher=fetcher,
            anchors=anchors,
            now=now,
        )
    if isinstance(kept, dict) and kept.get("kind") == CWT:
        return check_cwt_status(
            {"status_list": {"uri": _field(kept, "uri"), "idx": _field(kept, "idx")}},
            credential_issuer=_issuer(kept),
            fetcher=fetcher,
            anchors=anchors,
            now=now,
            anchor=kept.get("anchor"),
        )
    reference = {"status_list": {"uri": _field(kept, "uri"), "idx": _field(kept, "idx")}}
    issuer = _issuer(kept)
    if own is not None and kept.get("own") is True:
        own = own.at(base_of(issuer.identifier))
    return check_status(
        reference,
        credential_issuer=issuer,
        fetcher=fetcher,
        anchors=anchors,
        now=now,
        own=own,
    )


def _field(kept: Any, name: str) -> Any:
    if not isinstance(kept, dict) or name not in kept:
        raise StatusError(f"Kept status reference has no {name}")
    return kept[name]


def _issuer(kept: Any) -> ResolvedIssuer:
    identifier, method, pem = _field(kept, "issuer"), _field(kept, "method"), _field(kept, "key")
    if not isinstance(identifier, str) or method not in _METHODS or not isinstance(pem, str):
        raise StatusError("Kept status reference names no issuer")
    try:
        key = serialization.load_pem_public_key(pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise StatusError("Kept status reference has no readable issuer key") from exc
    if not isinstance(key, _KEY_TYPES):
        raise StatusError("Kept status reference has an issuer key of an unsupported type")
    return ResolvedIssuer(identifier, key, method)
