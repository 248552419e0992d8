"""The W3C VC-JWT reader (``jwt_vc_json``): the holder's presentation bound to this request,
the issuer's signature on the one credential in it, its subject bound to the holder, its dates
(``app.vcjwt``); status from its Bitstring Status List or StatusList2021 entries
(``app.statuslist``).

As for SD-JWT VC: a verification that pins its issuers says so when the credential names none
(``NO_ISSUER_PINNED``), and names the issuer it does not trust even when that issuer could not
be resolved. A did:prism issuer is named and pinned by its short form (``app.trust.did_prism``).
"""

from __future__ import annotations

from functools import partial

from app.presentations.presented import (
    Context,
    Presented,
    Refused,
    Rules,
    status_reader,
    untrusted_by_pins,
)
from app.presentations.reasons import NO_ISSUER_PINNED
from app.statuslist import bitstring_reference_to_keep, check_bitstring_status
from app.trust.did_prism import short_form
from app.vcjwt import NO_ISSUER, IssuerUnresolved, VcJwtError, verify_vp_jwt


def _named(issuer: str | None) -> str | None:
    """How a refusal names the issuer: a did:prism by its short form, the DID people know
    (a long form is that DID with its creation operation appended)."""
    return None if issuer is None else short_form(issuer)


def read_vc_jwt(presentation: str, rules: Rules, context: Context) -> Presented:
    try:
        verified = verify_vp_jwt(
            presentation,
            audience=context.audience,
            nonce=context.nonce,
            now=context.now,
            fetcher=context.fetcher,
            anchors=rules.anchors(context),
            own=context.own_issuers,
            prism=rules.prism(context),
        )
    except IssuerUnresolved as exc:
        issuer = _named(exc.issuer)
        raise Refused(untrusted_by_pins(exc.issuer, rules) or exc.reason, issuer) from None
    except VcJwtError as exc:
        if rules.trusted_issuers and exc.reason == NO_ISSUER:
            raise Refused(NO_ISSUER_PINNED) from None
        raise Refused(exc.reason, _named(exc.issuer)) from None
    wanted = rules.credential.types
    status = verified.status
    return Presented(
        issuer=verified.issuer,
        type_identifier=", ".join(verified.types),
        # OpenID4VP 1.0 §B.1.1 type_values: every type asked for, in any order, among others.
        type_matches=bool(wanted) and all(t in verified.types for t in wanted),
        # credentialSubject without its id: a schema's dotted attribute names are paths in it.
        claims=verified.subject,
        status=None
        if status is None
        else status_reader(
            partial(check_bitstring_status, own=context.own_issuers), status, verified.issuer
        ),
        kept_reference=None
        if status is None
        else bitstring_reference_to_keep(status, verified.issuer),
    )
