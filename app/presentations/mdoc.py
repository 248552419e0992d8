"""The ISO mdoc reader (``mso_mdoc``, ISO/IEC 18013-5 and OpenID4VP 1.0 Appendix B.2).

An mdoc binds its holder to the whole request rather than to an audience: the device signs a
SessionTranscript built from the request actually answered, the ``OpenID4VPHandover`` (client
ID, nonce, the response-encryption key's thumbprint, response URI) when a wallet answered by
``direct_post``, the ``OpenID4VPDCAPIHandover`` (origin, nonce, thumbprint) in the browser.
Issuers are trusted by certificate: the document signer's chain must lead to an IACA root the
deployment trusts or the verification pins as PEM.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from app.mdoc import (
    MdocError,
    dc_api_session_transcript,
    openid4vp_session_transcript,
    verify_device_response,
)
from app.oid4vp.encryption import thumbprint
from app.presentations.presented import Context, Presented, Refused, Rules, status_reader
from app.sdjwt.encoding import b64url_decode
from app.statuslist.cwt import check_cwt_status
from app.statuslist.kept import cwt_reference_to_keep


def read_mdoc(presentation: str | bytes, rules: Rules, context: Context) -> Presented:
    anchors = rules.anchors(context)
    try:
        document = verify_device_response(
            presentation,
            doctype=rules.credential.doctype,
            transcript=session_transcript(context),
            anchors=anchors,
            now=context.now,
        )
    except MdocError as exc:
        raise Refused(exc.reason) from None
    issuer = document.issuer
    if context.asked_elements is not None and any(
        (namespace, name) not in context.asked_elements
        for namespace, elements in document.namespaces.items()
        for name in elements
    ):
        # ISO 18013-5 8.3.2.1.2.2: a wallet returns only what the DeviceRequest asked for.
        raise Refused("Credential discloses an element that was not asked for", issuer.identifier)
    status = document.status
    return Presented(
        issuer=issuer,
        type_identifier=document.doctype,
        type_matches=document.doctype == rules.credential.doctype,
        claims=_claims_by_name(document.namespaces, rules),
        status=None
        if status is None
        else status_reader(
            partial(check_cwt_status, own=context.own_issuers), status, issuer, anchors
        ),
        kept_reference=None if status is None else cwt_reference_to_keep(status, issuer),
    )


def session_transcript(context: Context) -> bytes:
    """The transcript of the flow the response came through (Appendix B.2.6), or the one the
    channel built itself."""
    if context.session_transcript is not None:
        return context.session_transcript
    jwk = context.response_jwk
    jwk_thumbprint = b64url_decode(thumbprint(jwk), "thumbprint") if jwk else None
    if context.origin is not None:
        return dc_api_session_transcript(context.origin, context.nonce, jwk_thumbprint)
    return openid4vp_session_transcript(
        context.client_id, context.nonce, jwk_thumbprint, context.response_uri or ""
    )


def _claims_by_name(namespaces: dict[str, dict[str, Any]], rules: Rules) -> dict[str, Any]:
    """The disclosed elements under the schema's attribute names, each read from its own
    namespace: the decision compares and keeps claims by attribute name for every format."""
    names = {*rules.requested_claims, *(c["name"] for c in rules.conditions)}
    claims: dict[str, Any] = {}
    for name in names:
        elements = namespaces.get(rules.credential.namespace_of(name), {})
        if name in elements:
            claims[name] = elements[name]
    return claims
