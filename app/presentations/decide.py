"""From a wallet's presentation to a decision: verified, or failed with a reason.

No database and no Flask: everything the decision needs comes in as arguments, so it is tested
directly and reused by every channel (``direct_post``, the Digital Credentials API).

Each credential format has a reader (``READERS``) that checks what the format defines and
refuses with the format's own reason; what the verification asks is then judged the same way
for every format: trust (the contract's untrusted-issuer sentence), the type, revocation, the
conditions, then what was asked for. ``reasons`` gives each reason the plain words the
person's page shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.oid4vp.formats import JWT_VC_JSON, MSO_MDOC, SD_JWT_VC
from app.presentations.mdoc import read_mdoc
from app.presentations.mdoc_zk import read_mdoc_zk
from app.presentations.presented import Context, Presented, Reader, Refused, Rules
from app.presentations.reasons import NO_ISSUER_PINNED, Family, family_of, untrusted_issuer
from app.presentations.sd_jwt import read_sd_jwt
from app.presentations.vc_jwt import read_vc_jwt
from app.statuslist import StatusError
from app.trust import is_trusted
from app.verifications.conditions import MISSING, claim_value, failed_conditions

__all__ = [
    "NO_ISSUER_PINNED",
    "READERS",
    "Context",
    "Decision",
    "Presented",
    "Refused",
    "Rules",
    "decide",
]

# One reader per credential format a verification can ask for.
READERS: dict[str, Reader] = {
    SD_JWT_VC: read_sd_jwt,
    MSO_MDOC: read_mdoc,
    JWT_VC_JSON: read_vc_jwt,
}


@dataclass(frozen=True)
class Decision:
    verified: bool
    reason: str | None = None
    issuer: str | None = None
    claims: dict[str, Any] = field(default_factory=dict)
    # Where the credential's status can be read again later (``app.statuslist.kept``); only
    # for a verified credential that carried a status reference.
    status_reference: dict[str, Any] | None = None
    # Every unmet condition; ``reason`` is the first (the contract's single sentence).
    failed_conditions: list[str] = field(default_factory=list)

    @property
    def family(self) -> Family | None:
        """The reason's family: what the person's page says is chosen by it."""
        return family_of(self.reason)


def decide(presentation: str | bytes, rules: Rules, context: Context) -> Decision:
    """The decision on one presentation of the format ``rules`` asks for; never raises for a
    bad presentation. Bytes only from a channel that opened an mdoc itself (org-iso-mdoc)."""
    credential_format = rules.credential.format
    reader = read_mdoc_zk if rules.credential.zk else READERS.get(credential_format)
    if isinstance(presentation, bytes) and credential_format != MSO_MDOC:
        reader = None
    if reader is None:
        return Decision(
            False, f"Credential format {credential_format} is not one this verifier checks"
        )
    if rules.transaction_data and credential_format != SD_JWT_VC:
        # Refused when the transaction data was attached; kept here for a schema changed since.
        return Decision(
            False,
            f"Transaction data was not confirmed by the wallet: a {credential_format} "
            "presentation cannot carry it",
        )
    try:
        presented = reader(presentation, rules, context)
    except Refused as refused:
        reason = refused.reason
        if rules.sources is not None and reason in UNANCHORED:
            # The chain leads to no certificate any source names: say which sources.
            reason = rules.sources.not_listed
        return Decision(False, reason, refused.issuer)
    return _judge(presented, rules, context)


# What chain validation says when a chain leads to no anchor at all (``app.trust.x5c``).
UNANCHORED = frozenset(
    {
        "Certificate chain does not lead to a trusted anchor",
        "No trust anchors are configured, so certificate chains cannot be trusted",
    }
)


def _trust_problem(presented: Presented, rules: Rules) -> str | None:
    """Why the verification does not trust the issuer, or None.

    Without trust sources, its ``trusted_issuers`` decide (empty: any issuer). With sources,
    an issuer is trusted when a pinned entry matches it or when its validated chain ends at a
    certificate a source grants now; the refusal names the source and why.
    """
    issuer = presented.issuer
    name = issuer.identifier
    pinned = bool(rules.trusted_issuers)
    if pinned and is_trusted(issuer, rules.trusted_issuers):
        return None
    if rules.sources is None:
        return None if not pinned else untrusted_issuer(name)
    if issuer.method != "x5c" or not issuer.certificates:
        return untrusted_issuer(name)
    return rules.sources.refusal(issuer.certificates)


def _judge(presented: Presented, rules: Rules, context: Context) -> Decision:
    name = presented.issuer.identifier
    problem = _trust_problem(presented, rules)
    if problem:
        return Decision(False, problem, name)
    if not presented.type_matches:
        return Decision(
            False,
            f"Credential type {presented.type_identifier} is not the type this verification "
            "asks for",
            name,
        )
    if presented.status is not None:
        reason = _status_problem(presented, context)
        if reason:
            return Decision(False, reason, name)
    claims = presented.claims
    kept = _only_requested(claims, rules.requested_claims)
    # A condition's own message (attribute and operator) beats the generic missing-claim one.
    unmet = failed_conditions(rules.conditions, claims, context.now.date())
    if unmet:
        return Decision(False, unmet[0], name, kept, failed_conditions=unmet)
    # DCQL: the wallet is never trusted to have disclosed what was asked.
    missing = [c for c in rules.requested_claims if claim_value(claims, c) is MISSING]
    if missing:
        return Decision(False, f"Requested claim {missing[0]} was not disclosed", name, kept)
    return Decision(True, None, name, kept, presented.kept_reference)


def _status_problem(presented: Presented, context: Context) -> str | None:
    assert presented.status is not None
    try:
        result = presented.status(context)
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
