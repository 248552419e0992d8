"""The reader of an mdoc answered by a zero-knowledge proof (``mso_mdoc_zk``, ``app.zk``).

What the proof shows is all that is presented: the one claim, with the value the verification
set (never read from the answer), the document type, and the document signer whose chain led to
a trusted IACA. The transcript is the one this channel's request fixes (the Digital Credentials
API's ``OpenID4VPDCAPIHandover``: origin, nonce, response key), rebuilt here as for any mdoc.
The proof itself is checked by ``context.zk_verify``, the deployment's bounded pool, whose
``ZkBusy`` is not a refusal and goes up to the channel (429). The decision after this is the
one every format gets (``app.presentations.decide``): trust sources and pins, the type, the
conditions, the requested claims.
"""

from __future__ import annotations

from typing import Any

from app.errors import ApiError
from app.presentations.mdoc import session_transcript
from app.presentations.presented import Context, Presented, Refused, Rules
from app.verifications.zk import zk_claim
from app.zk import ZkError, ZkRequest, check_answer


def read_mdoc_zk(presentation: Any, rules: Rules, context: Context) -> Presented:
    if context.zk_verify is None:
        raise Refused("Zero-knowledge proofs are not configured on this deployment")
    credential = rules.credential
    try:
        element, expected = zk_claim(rules.requested_claims, rules.conditions)
    except ApiError as exc:  # saved before the rules were what they are now
        raise Refused(exc.message) from None
    request = ZkRequest(
        doctype=credential.doctype,
        namespace=credential.namespace_of(element),
        element=element,
        expected=expected,
        offered=tuple(str(entry["id"]) for entry in credential.zk_system_types),
    )
    if not isinstance(presentation, str | bytes):
        raise Refused("Zero-knowledge device response is not base64url")
    try:
        verified = check_answer(
            presentation,
            request,
            transcript=session_transcript(context),
            anchors=rules.anchors(context),
            now=context.now,
            verify=context.zk_verify,
        )
    except ZkError as exc:
        raise Refused(exc.reason) from None
    return Presented(
        issuer=verified.issuer,
        type_identifier=verified.doctype,
        type_matches=verified.doctype == credential.doctype,
        claims=verified.claims,
    )
