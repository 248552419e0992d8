"""From a wallet's presentation to a decision: verified, or failed with a reason.

No database and no Flask: everything the decision needs comes in as arguments, so it is tested
directly and reused by every channel (``direct_post``, the Digital Credentials API).

Order matters for the messages organizations read: a verification that pins its issuers and
gets a credential naming none says exactly that (``NO_ISSUER_PINNED``), whatever else is wrong
with it; otherwise the credential is verified first (a forged credential says so, not
"condition failed"), then trust (the contract's untrusted-issuer sentence), then revocation,
then the conditions, then what was asked for. ``reasons`` gives each reason the plain words
the person's page shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography import x509

from app.presentations.reasons import NO_ISSUER_PINNED, Family, family_of, untrusted_issuer
from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation
from app.sdjwt.jws import read_unverified
from app.statuslist import StatusError, check_status, reference_to_keep
from app.trust import Fetcher, ResolvedIssuer, TrustError, is_trusted, resolve_issuer_key
from app.verifications.conditions import MISSING, claim_value, failed_condition

__all__ = ["NO_ISSUER_PINNED", "Context", "Decision", "Rules", "decide"]


# parse_presentation's own limit: nothing larger is looked into.
MAX_PRESENTATION = 64 * 1024


@dataclass(frozen=True)
class Rules:
    """What the verification asks: the credential type, claims, conditions, trusted issuers."""

    vct: str
    requested_claims: list[str]
    conditions: list[dict[str, Any]]
    trusted_issuers: list[str]


@dataclass(frozen=True)
class Context:
    """Where and when the presentation arrived, and the deployment's trust settings."""

    audience: str
    nonce: str
    now: datetime
    fetcher: Fetcher
    anchors: Sequence[x509.Certificate] = ()
    status_fail_open: bool = False


@dataclass(frozen=True)
class Decision:
    verified: bool
    reason: str | None = None
    issuer: str | None = None
    claims: dict[str, Any] = field(default_factory=dict)
    # Where the credential's status can be read again later (``app.statuslist.kept``); only
    # for a verified credential that carried a status list reference.
    status_reference: dict[str, Any] | None = None

    @property
    def family(self) -> Family | None:
        """The reason's family: what the person's page says is chosen by it."""
        return family_of(self.reason)


def decide(presentation: str, rules: Rules, context: Context) -> Decision:
    """The decision on one SD-JWT VC presentation; never raises for a bad presentation."""
    try:
        parsed = parse_presentation(presentation)
    except SdJwtError as exc:
        if rules.trusted_issuers and _credential_names_no_issuer(presentation):
            return Decision(False, NO_ISSUER_PINNED)
        return Decision(False, exc.reason)
    issuer_name = _issuer_name(parsed.issuer_payload)
    if rules.trusted_issuers and not _names_an_issuer(parsed.issuer_header, issuer_name):
        # The contract's sentence, whatever else is wrong or missing with the credential.
        return Decision(False, NO_ISSUER_PINNED)
    try:
        issuer = resolve_issuer_key(
            parsed.issuer_header,
            parsed.issuer_payload,
            fetcher=context.fetcher,
            anchors=context.anchors,
            now=context.now,
        )
    except TrustError as exc:
        return Decision(False, _untrusted(issuer_name, rules) or exc.reason, issuer_name)
    try:
        credential = verify_presentation(
            parsed,
            issuer.key,
            KeyBindingCheck(
                audience=context.audience, nonce=context.nonce, now=int(context.now.timestamp())
            ),
        )
    except SdJwtError as exc:
        return Decision(False, exc.reason, issuer.identifier)
    return _judge(credential.claims, credential.status, credential.vct, issuer, rules, context)


def _issuer_name(payload: dict[str, Any]) -> str | None:
    iss = payload.get("iss")
    return iss if isinstance(iss, str) and iss.strip() else None


def _names_an_issuer(header: dict[str, Any], issuer_name: str | None) -> bool:
    """An issuer is named by ``iss``, or by an ``x5c`` chain (its certificate names it)."""
    x5c = header.get("x5c")
    return issuer_name is not None or (isinstance(x5c, list) and bool(x5c))


def _credential_names_no_issuer(presentation: Any) -> bool:
    """For a presentation too broken to parse: whether its credential (the part before the
    first ``~``) can be read at all and names no issuer."""
    if not isinstance(presentation, str) or len(presentation) > MAX_PRESENTATION:
        return False
    try:
        header, payload = read_unverified(presentation.split("~", 1)[0], "Credential")
    except (SdJwtError, ValueError, TypeError, RecursionError):
        return False
    return not _names_an_issuer(header, _issuer_name(payload))


def _untrusted(issuer_name: str | None, rules: Rules) -> str | None:
    """A pinned verification names the issuer it does not trust, even if it could not resolve it."""
    if rules.trusted_issuers and issuer_name and issuer_name not in rules.trusted_issuers:
        return untrusted_issuer(issuer_name)
    return None


def _judge(
    claims: dict[str, Any],
    status: dict[str, Any] | None,
    vct: str,
    issuer: ResolvedIssuer,
    rules: Rules,
    context: Context,
) -> Decision:
    name = issuer.identifier
    if not is_trusted(issuer, rules.trusted_issuers):
        return Decision(False, untrusted_issuer(name), name)
    if vct != rules.vct:
        return Decision(
            False, f"Credential type {vct} is not the type this verification asks for", name
        )
    if status is not None:
        reason = _status_problem(status, issuer, context)
        if reason:
            return Decision(False, reason, name)
    kept = _only_requested(claims, rules.requested_claims)
    # A condition's own message (attribute and operator) beats the generic missing-claim one.
    unmet = failed_condition(rules.conditions, claims, context.now.date())
    if unmet:
        return Decision(False, unmet, name, kept)
    # DCQL: the wallet is never trusted to have disclosed what was asked.
    missing = [c for c in rules.requested_claims if claim_value(claims, c) is MISSING]
    if missing:
        return Decision(False, f"Requested claim {missing[0]} was not disclosed", name, kept)
    reference = reference_to_keep(status, issuer) if status is not None else None
    return Decision(True, None, name, kept, reference)


def _status_problem(status: dict[str, Any], issuer: ResolvedIssuer, context: Context) -> str | None:
    try:
        result = check_status(
            status,
            credential_issuer=issuer,
            fetcher=context.fetcher,
            anchors=context.anchors,
            now=context.now,
        )
    except StatusError as exc:
        if context.status_fail_open:
            return None
        return f"Credential status could not be checked: {exc.reason}"
    return result.reason


def _only_requested(claims: dict[str, Any], requested: list[str]) -> dict[str, Any]:
    """Keep the requested claims only (never the raw credential), nested as given."""
    kept: dict[str, Any] = {}
    for name in requested:
        value = claim_value(claims, name)
        if value is MISSING:
            continue
        target = kept
        *parents, leaf = name.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return kept
