"""A W3C verifiable presentation secured as a JWT (OpenID4VP 1.0 §B.1, ``jwt_vc_json``).

The holder signs the presentation; the request's ``nonce`` and the verifier's ``aud`` (the
client_id, or ``origin:<origin>`` over the Digital Credentials API) bind it to this one request
(OpenID4VP 1.0 §B.1.3.1.3 and §14.1). Two shapes, as for credentials:

- VCDM 1.1 §6.3.1: the presentation is the ``vp`` claim, ``iss`` is the holder, and
  ``vp.verifiableCredential`` holds the credential as a JWT string. This is the shape
  Hyperledger Identus wallets send (ES256K, signed by a long-form did:prism holder, no ``exp``,
  ``aud`` the request's domain).
- VCDM 2.0 with VC-JOSE-COSE §3.1.2: the payload is the presentation (``typ`` ``vp+jwt``),
  ``holder`` names the holder, and each credential is an ``EnvelopedVerifiableCredential``
  whose ``id`` is a ``data:application/vc+jwt,`` URL (VCDM 2.0 §5.13).

The holder is a DID that resolves without a fetch (did:jwk, did:key, long-form did:prism:
``app.vcjwt.holder``). Exactly one credential, and its subject must be the holder that signed
(compared as the same string: a long-form did:prism and its short form are not taken for each
other here, since a published DID may have rotated the keys its long form carries): a
presentation of someone else's credential proves nothing about the person presenting it. A
credential embedded as plain JSON carries no proof and is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509

from app.sdjwt import SdJwtError, verify_jws
from app.trust import Fetcher, PrismResolution, ResolvedIssuer
from app.trust.own import OwnIssuers
from app.vcjwt.claims import (
    ALLOWED_ALGS,
    agreeing,
    check_context,
    check_issued,
    check_typ,
    check_window,
    identifier,
    numeric_date,
    one_or_many,
    read_jwt,
    string_claim,
    types_of,
)
from app.vcjwt.credential import (
    CONTEXT,
    VCDM_1,
    VCDM_2,
    VerifiedCredential,
    verify_credential_jwt,
)
from app.vcjwt.errors import VcJwtError, refusing
from app.vcjwt.holder import holder_key

LABEL = "Presentation"
PRESENTATION_TYPS = {VCDM_1: ("JWT",), VCDM_2: ("vp+jwt", "JWT")}
# VCDM 1.1 §4.1 asks presentations, like credentials, to start with the credentials context.
# Hyperledger Identus wallets (SDK 7) start theirs with https://www.w3.org/2018/presentations/v1
# instead, a context W3C never published. Both are accepted for the presentation: its JSON-LD
# is never expanded here, only ``type`` and ``verifiableCredential`` are read, and what is
# proved (the credential inside, signed by its issuer) must still start with the credentials
# context.
IDENTUS_PRESENTATION_CONTEXT = "https://www.w3.org/2018/presentations/v1"
PRESENTATION_CONTEXTS = {
    VCDM_1: (CONTEXT[VCDM_1], IDENTUS_PRESENTATION_CONTEXT),
    VCDM_2: (CONTEXT[VCDM_2],),
}
PRESENTATION_TYPE = "VerifiablePresentation"
ENVELOPED = "EnvelopedVerifiableCredential"
ENVELOPED_PREFIX = "data:application/vc+jwt,"


@dataclass(frozen=True)
class VerifiedVc:
    """What a verified presentation of one credential says.

    ``subject`` is the credential's ``credentialSubject`` without its ``id`` (which is
    ``holder``); ``status`` is its ``credentialStatus`` as carried (one object, a list, or
    None), for ``app.statuslist`` to check.
    """

    issuer: ResolvedIssuer
    types: tuple[str, ...]
    subject: dict[str, Any]
    holder: str
    status: Any
    data_model: str


@refusing("Presentation could not be verified")
def verify_vp_jwt(
    token: Any,
    *,
    audience: str,
    nonce: str,
    now: datetime,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    own: OwnIssuers | None = None,
    prism: PrismResolution | None = None,
) -> VerifiedVc:
    """Verify the presentation and the one credential in it, or raise ``VcJwtError``. An
    issuer of this deployment (``own``) is read from its database, not fetched; ``prism``
    says where a short-form did:prism issuer's document comes from."""
    if not (isinstance(audience, str) and audience and isinstance(nonce, str) and nonce):
        # An empty expectation would match a presentation made for nobody in particular.
        raise VcJwtError("Presentation cannot be checked without an audience and a nonce")
    holder, token_in_it = _verify_presentation(token, audience, nonce, now)
    credential = verify_credential_jwt(
        token_in_it,
        fetcher=fetcher,
        anchors=anchors,
        now=now,
        audience=audience,
        own=own,
        prism=prism,
    )
    _check_subject(credential, holder)
    return VerifiedVc(
        issuer=credential.issuer,
        types=credential.types,
        subject=credential.subject,
        holder=holder,
        status=credential.status,
        data_model=credential.data_model,
    )


def _verify_presentation(token: Any, audience: str, nonce: str, now: datetime) -> tuple[str, str]:
    """The holder's signature, binding to this request and dates; the holder and the one
    credential JWT the presentation holds."""
    header, payload = read_jwt(token, LABEL)
    data_model, document = _shape(payload)
    check_typ(header, PRESENTATION_TYPS[data_model], LABEL)
    holder = _holder(payload, document)
    try:
        key = holder_key(holder, header)
        verify_jws(token, key, ALLOWED_ALGS, label=LABEL, decoded=(header, payload))
    except SdJwtError as exc:
        raise VcJwtError(exc.reason) from exc
    _check_binding(payload, audience, nonce)
    check_issued(payload, LABEL, now)
    starts, ends = [numeric_date(payload, "nbf", LABEL)], [numeric_date(payload, "exp", LABEL)]
    check_window(LABEL, now, starts=starts, ends=ends)
    check_context(document, PRESENTATION_CONTEXTS[data_model], LABEL)
    types_of(document, PRESENTATION_TYPE, LABEL)
    return holder, _only_credential(document, data_model)


def _check_subject(credential: VerifiedCredential, holder: str) -> None:
    """The credential is about the holder who signed: someone else's credential, presented
    by a wallet that holds it, proves nothing about the person presenting it."""
    issuer = credential.issuer.identifier
    if credential.subject_id is None:
        raise VcJwtError("Credential is not bound to a holder (no credentialSubject.id)", issuer)
    if credential.subject_id != holder:
        raise VcJwtError("Credential subject is not the holder who signed the presentation", issuer)


def _shape(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if "vc" in payload:
        raise VcJwtError("Presentation is a credential, not a presentation")
    if "vp" not in payload:
        return VCDM_2, payload
    if not isinstance(payload["vp"], dict):
        raise VcJwtError("Presentation vp claim is not an object")
    return VCDM_1, payload["vp"]


def _holder(payload: dict[str, Any], document: dict[str, Any]) -> str:
    """VCDM 1.1 §6.3.1: ``iss`` is the holder; VCDM 2.0 §4.12: ``holder``. Both, when present,
    name the same holder."""
    holder = agreeing(
        string_claim(payload, "iss", LABEL),
        identifier(document.get("holder"), LABEL, "holder"),
        LABEL,
        "iss and holder",
    )
    if holder is None:
        raise VcJwtError("Presentation names no holder (neither iss nor holder)")
    return holder


def _check_binding(payload: dict[str, Any], audience: str, nonce: str) -> None:
    """OpenID4VP 1.0 §B.1.3.1.3: ``aud`` names this verifier, ``nonce`` is the request's."""
    aud = payload.get("aud")
    names = one_or_many(aud)
    if aud is None or not all(isinstance(name, str) for name in names) or audience not in names:
        raise VcJwtError("Presentation audience does not match this verifier")
    if payload.get("nonce") != nonce:
        raise VcJwtError("Presentation nonce does not match the request")


def _only_credential(document: dict[str, Any], data_model: str) -> str:
    if "verifiableCredential" not in document:
        raise VcJwtError("Presentation holds no credential")
    credentials = one_or_many(document["verifiableCredential"])
    if len(credentials) != 1:
        raise VcJwtError("Presentation must hold exactly one credential")
    credential = credentials[0]
    if data_model == VCDM_1 and isinstance(credential, str):
        return credential
    if data_model == VCDM_2 and isinstance(credential, dict) and _is_enveloped(credential):
        token = credential.get("id")
        if isinstance(token, str) and token.startswith(ENVELOPED_PREFIX):
            return token[len(ENVELOPED_PREFIX) :]
        raise VcJwtError(f"Presentation's enveloped credential id is not a {ENVELOPED_PREFIX} URL")
    if isinstance(credential, dict):
        raise VcJwtError(
            "Presentation holds a credential without a proof of its own (embedded JSON), "
            "which is never accepted"
        )
    expected = "a JWT string" if data_model == VCDM_1 else f"an {ENVELOPED}"
    raise VcJwtError(f"Presentation's credential is not {expected}")


def _is_enveloped(credential: dict[str, Any]) -> bool:
    return ENVELOPED in one_or_many(credential.get("type"))
