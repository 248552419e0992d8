"""Why a presentation failed, in two voices.

The integrator reads the technical reason (``validation_error``: "Key binding nonce does not
match the request") and branches on the contract's shapes. The person in front of the page
reads a short sentence in plain words, one per family of reasons, with no protocol terms.

A subject stores only the technical reason, so the family is read back from it here. Every
reason is written by this service (``decide`` and the protocol packages it calls), so the
patterns below are ours; one that matches none of them is shown as the generic family,
never as its technical text.
"""

from __future__ import annotations

import enum
import re

# The contract's shapes for the two issuer failures (the integrator's branch points).
NO_ISSUER_PINNED = "Presented credential carries no issuer, and this verification pins its issuers"


def untrusted_issuer(issuer: str) -> str:
    return f"Credential issuer {issuer} is not trusted by this verification"


class Family(enum.StrEnum):
    CONDITION = "CONDITION"
    MISSING_CLAIM = "MISSING_CLAIM"
    UNTRUSTED_ISSUER = "UNTRUSTED_ISSUER"
    NO_ISSUER = "NO_ISSUER"
    WRONG_TYPE = "WRONG_TYPE"
    REVOKED = "REVOKED"
    SUSPENDED = "SUSPENDED"
    STATUS_UNCHECKED = "STATUS_UNCHECKED"
    EXPIRED = "EXPIRED"
    NOT_YET_VALID = "NOT_YET_VALID"
    LATE = "LATE"
    INVALID = "INVALID"


# First match wins; the patterns are the reasons' own openings.
_PATTERNS: tuple[tuple[Family, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern))
    for family, pattern in (
        (Family.NO_ISSUER, re.escape(NO_ISSUER_PINNED) + "$"),
        (Family.UNTRUSTED_ISSUER, r"Credential issuer .+ is not trusted by this verification$"),
        # A certificate chain (an x5c issuer, an mdoc's IACA) that leads to no trusted root.
        (Family.UNTRUSTED_ISSUER, r"Certificate chain does not lead to a trusted anchor$"),
        # Refusals by a verification's trust sources (app.trust_sources.use).
        (Family.UNTRUSTED_ISSUER, r"Issuer certificate is not in "),
        (
            Family.UNTRUSTED_ISSUER,
            r"(Trusted list|List of Trusted Lists|List of trusted entities|VICAL) .* is past its next update ",
        ),
        (Family.CONDITION, r"Attribute \S+ (does not satisfy|is missing, so) "),
        (Family.MISSING_CLAIM, r"Requested claim \S+ was not disclosed$"),
        (Family.WRONG_TYPE, r"Credential type .* is not the type this verification asks for$"),
        (Family.REVOKED, r"Credential (has been revoked by its issuer|status is 0x)"),
        (Family.SUSPENDED, r"Credential is suspended"),
        (Family.STATUS_UNCHECKED, r"Credential status could not be checked"),
        (Family.EXPIRED, r"Credential has expired$"),
        (Family.NOT_YET_VALID, r"Credential (is not valid yet|was issued in the future)$"),
        (Family.LATE, r"Key binding was signed too long ago$"),
    )
)


# The sentences below are English message IDs of the person's pages' catalogs (extracted by
# their ``N_`` mark, translated where they are shown); this module stays free of Flask.
def N_(text: str) -> str:
    return text


FOR_PERSON: dict[Family, str] = {
    Family.CONDITION: N_(
        "Your credential does not show what this check needs, for example an age or a "
        "place it asks for."
    ),
    Family.MISSING_CLAIM: N_(
        "Your wallet did not share everything this verification asks for. Please try again "
        "and share all the information requested."
    ),
    Family.UNTRUSTED_ISSUER: N_(
        "This credential comes from an issuer this organization does not accept. Please use "
        "a credential from another issuer."
    ),
    Family.NO_ISSUER: N_(
        "This credential does not say who issued it, and this organization only accepts "
        "credentials from issuers it names."
    ),
    Family.WRONG_TYPE: N_("This is not the kind of credential this verification asks for."),
    Family.REVOKED: N_("This credential has been revoked by its issuer."),
    Family.SUSPENDED: N_("This credential is suspended by its issuer for now."),
    Family.STATUS_UNCHECKED: N_(
        "We could not confirm with its issuer that this credential is still valid. Please try "
        "again in a moment."
    ),
    Family.EXPIRED: N_("This credential has expired. Please use a current one."),
    Family.NOT_YET_VALID: N_("This credential is not valid yet."),
    Family.LATE: N_("Your wallet's answer came too late, please try again."),
    Family.INVALID: N_(
        "This credential could not be checked, so it was not accepted. Please try again, or "
        "use another wallet."
    ),
}


# Where presenting the same credential again cannot succeed, the person is told so, and what
# can: "Try again" alone would send them round the same refusal.
NOT_AGAIN: dict[Family, str] = {
    Family.REVOKED: N_(
        "Presenting this credential again will not work. You can use another valid credential "
        "of the same kind, or ask its issuer for a new one."
    ),
}


def family_of(reason: str | None) -> Family | None:
    """The family of a technical reason; None when there is no reason (not failed)."""
    if not reason:
        return None
    return next((family for family, pattern in _PATTERNS if pattern.match(reason)), Family.INVALID)


def for_person(reason: str | None) -> str | None:
    """What the person's page says for a technical reason; None when there is none."""
    family = family_of(reason)
    return FOR_PERSON[family] if family is not None else None


def not_again_for_person(reason: str | None) -> str | None:
    """What will not work and what will, when trying again with the same credential cannot
    succeed; None otherwise."""
    family = family_of(reason)
    return NOT_AGAIN.get(family) if family is not None else None
