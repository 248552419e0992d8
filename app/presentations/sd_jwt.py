"""The SD-JWT VC reader (``dc+sd-jwt``): the issuer's signature, the disclosures and the key
binding to this request (SD-JWT VC, RFC 9901).

A verification that pins its issuers and gets a credential naming none says exactly that
(``NO_ISSUER_PINNED``), whatever else is wrong with it, and so it does for a credential with
no ``iss`` whose ``x5c`` chain does not validate; otherwise the credential is verified
first, so that a forged credential says so rather than "condition failed".
"""

from __future__ import annotations

from functools import partial
from typing import Any

from app.oid4vp.transaction_data import Unconfirmed, check_confirmed
from app.presentations.presented import (
    Context,
    Presented,
    Refused,
    Rules,
    status_reader,
    untrusted_by_pins,
)
from app.presentations.reasons import NO_ISSUER_PINNED
from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation
from app.sdjwt.jws import read_unverified
from app.statuslist import check_status, reference_to_keep
from app.trust import TrustError, resolve_issuer_key

# parse_presentation's own limit: nothing larger is looked into.
MAX_PRESENTATION = 64 * 1024


def read_sd_jwt(presentation: str, rules: Rules, context: Context) -> Presented:
    try:
        parsed = parse_presentation(presentation)
    except SdJwtError as exc:
        if rules.trusted_issuers and _credential_names_no_issuer(presentation):
            raise Refused(NO_ISSUER_PINNED) from None
        raise Refused(exc.reason) from None
    issuer_name = _issuer_name(parsed.issuer_payload)
    if rules.trusted_issuers and not _names_an_issuer(parsed.issuer_header, issuer_name):
        # The contract's sentence, whatever else is wrong or missing with the credential.
        raise Refused(NO_ISSUER_PINNED)
    try:
        issuer = resolve_issuer_key(
            parsed.issuer_header,
            parsed.issuer_payload,
            fetcher=context.fetcher,
            anchors=rules.anchors(context),
            now=context.now,
            own=context.own_issuers,
        )
    except TrustError as exc:
        if rules.trusted_issuers and issuer_name is None:
            # No iss, and an x5c chain that does not validate: the certificate's name is
            # nobody's, so the issuer could not be identified (the contract's sentence).
            raise Refused(NO_ISSUER_PINNED) from None
        raise Refused(untrusted_by_pins(issuer_name, rules) or exc.reason, issuer_name) from None
    try:
        credential = verify_presentation(
            parsed,
            issuer.key,
            KeyBindingCheck(
                audience=context.audience, nonce=context.nonce, now=int(context.now.timestamp())
            ),
        )
    except SdJwtError as exc:
        raise Refused(exc.reason, issuer.identifier) from None
    try:
        check_confirmed(credential.key_binding, rules.transaction_data)
    except Unconfirmed as exc:
        raise Refused(exc.reason, issuer.identifier) from None
    status = credential.status
    return Presented(
        issuer=issuer,
        type_identifier=credential.vct,
        type_matches=credential.vct == rules.credential.vct,
        claims=credential.claims,
        status=(
            None
            if status is None
            else status_reader(
                partial(check_status, own=context.own_issuers),
                status,
                issuer,
                rules.anchors(context),
            )
        ),
        kept_reference=None
        if status is None
        else reference_to_keep(status, issuer, context.own_issuers),
    )


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
