"""One W3C verifiable credential secured as a JWT, in either data model's shape.

VCDM 1.1 §6.3.1 ("JWT and JWS Considerations"): the credential is the ``vc`` claim, and JWT
registered claims stand for some of its properties: ``iss`` for ``issuer``, ``sub`` for
``credentialSubject.id``, ``jti`` for ``id``, ``nbf`` for ``issuanceDate``, ``exp`` for
``expirationDate``. Issuers may remove the property the claim replaces; where both are left
they must agree.

VCDM 2.0 secured with VC-JOSE-COSE §3.1.1: the credential is the JWT payload itself (``typ``
``vc+jwt``) and the ``vc`` and ``vp`` claims must not be present. ``iat``/``exp`` date the
signature, ``validFrom``/``validUntil`` the data (§3.1.3); both are checked.

Only the JSON is read: ``@context`` is checked to be the data model's, never expanded, and no
Data Integrity proof is looked at (a JWT credential has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509

from app.sdjwt import SdJwtError, verify_jws
from app.trust import Fetcher, PrismResolution, ResolvedIssuer, TrustError, resolve_issuer_key
from app.trust.own import OwnIssuers
from app.vcjwt.claims import (
    ALLOWED_ALGS,
    agreeing,
    check_context,
    check_issued,
    check_typ,
    check_window,
    date_time,
    earliest,
    identifier,
    numeric_date,
    one_or_many,
    read_jwt,
    string_claim,
    types_of,
)
from app.vcjwt.errors import IssuerUnresolved, VcJwtError, refusing

VCDM_1 = "1.1"
VCDM_2 = "2.0"
# The base context each data model's credentials start with (VCDM 1.1 §4.1, 2.0 §4.3).
CONTEXT = {
    VCDM_1: "https://www.w3.org/2018/credentials/v1",
    VCDM_2: "https://www.w3.org/ns/credentials/v2",
}
# The typ headers each shape may carry (VCDM 1.1 §6.3.1 uses plain JWTs; VC-JOSE-COSE §3.1.1
# registers vc+jwt). A presentation's typ (vp+jwt) is none of them.
CREDENTIAL_TYPS = {VCDM_1: ("JWT",), VCDM_2: ("vc+jwt", "JWT")}
CREDENTIAL_TYPE = "VerifiableCredential"
NO_ISSUER = "Credential names no issuer"
MAX_TYPES = 32


@dataclass(frozen=True)
class VerifiedCredential:
    """A credential whose issuer signature, dates and shape were checked.

    ``subject`` is ``credentialSubject`` without its ``id``; ``subject_id`` is that id (or
    VCDM 1.1's ``sub``). ``status`` is ``credentialStatus`` as the credential carries it (one
    object or a list), for a status checker to read. ``expires`` is the earliest end of
    validity any of its dates sets, as a POSIX timestamp.
    """

    issuer: ResolvedIssuer
    data_model: str
    id: str | None
    types: tuple[str, ...]
    subject_id: str | None
    subject: dict[str, Any]
    status: Any
    expires: float | None


@dataclass(frozen=True)
class _Shape:
    data_model: str
    document: dict[str, Any]  # the credential: the vc claim (1.1) or the payload (2.0)


@refusing("Credential could not be verified")
def verify_credential_jwt(
    token: Any,
    *,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    label: str = "Credential",
    audience: str | None = None,
    own: OwnIssuers | None = None,
    prism: PrismResolution | None = None,
) -> VerifiedCredential:
    """Verify a JWT credential: issuer resolved as for SD-JWT VC (did:jwk, did:web, HTTPS
    issuer metadata, x5c) or as a did:prism (``prism``: where short forms resolve) and its
    signature checked first, then its shape and dates. ``label`` names the credential in
    reasons ("Credential has expired"); ``audience`` is the verifier a presented credential
    reaches, which an ``aud`` claim, when the issuer set one, must name."""
    header, payload = read_jwt(token, label)
    shape = _shape(payload, label)
    check_typ(header, CREDENTIAL_TYPS[shape.data_model], label)
    issuer_name = _issuer_name(payload, shape, label)
    issuer = _resolve(header, issuer_name, fetcher, anchors, now, own, prism)
    try:
        verify_jws(token, issuer.key, ALLOWED_ALGS, label=label, decoded=(header, payload))
    except SdJwtError as exc:
        raise VcJwtError(exc.reason, issuer.identifier) from exc
    try:
        _check_audience(payload, audience, label)
        return _read(payload, shape, issuer, now, label)
    except VcJwtError as exc:
        raise VcJwtError(exc.reason, issuer.identifier) from exc


def _check_audience(payload: dict[str, Any], audience: str | None, label: str) -> None:
    """RFC 7519 §4.1.3: a JWT whose ``aud`` does not name the party processing it MUST be
    rejected. Credentials rarely carry one; one that does is for those audiences only."""
    if "aud" not in payload:
        return
    names = one_or_many(payload["aud"])
    if audience is None or audience not in names:
        raise VcJwtError(f"{label} is meant for another audience (aud)")


def _shape(payload: dict[str, Any], label: str) -> _Shape:
    if "vp" in payload:
        raise VcJwtError(f"{label} is a presentation, not a credential")
    if "vc" not in payload:
        return _Shape(VCDM_2, payload)
    if not isinstance(payload["vc"], dict):
        raise VcJwtError(f"{label} vc claim is not an object")
    return _Shape(VCDM_1, payload["vc"])


def _issuer_name(payload: dict[str, Any], shape: _Shape, label: str) -> str:
    """``iss`` and ``issuer`` (an id or an object with one) name the same issuer when both are
    present (VCDM 1.1 §6.3.1; VC-JOSE-COSE §6.1.2); the data model requires one."""
    name = agreeing(
        string_claim(payload, "iss", label),
        identifier(shape.document.get("issuer"), label, "issuer"),
        label,
        "iss and issuer",
    )
    if name is None:
        raise VcJwtError(NO_ISSUER if label == "Credential" else f"{label} names no issuer")
    return name


def _resolve(
    header: dict[str, Any],
    issuer_name: str,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    own: OwnIssuers | None,
    prism: PrismResolution | None,
) -> ResolvedIssuer:
    try:
        return resolve_issuer_key(
            header,
            {"iss": issuer_name},
            fetcher=fetcher,
            anchors=anchors,
            now=now,
            own=own,
            prism=prism,
        )
    except TrustError as exc:
        raise IssuerUnresolved(exc.reason, issuer_name) from exc


def _read(
    payload: dict[str, Any], shape: _Shape, issuer: ResolvedIssuer, now: datetime, label: str
) -> VerifiedCredential:
    document = shape.document
    check_context(document, CONTEXT[shape.data_model], label)
    types = types_of(document, CREDENTIAL_TYPE, label)
    if len(types) > MAX_TYPES:
        raise VcJwtError(f"{label} has more than {MAX_TYPES} types")
    subject = _subject(document, label)
    subject_id = agreeing(
        string_claim(payload, "sub", label),
        identifier(subject.get("id"), label, "credentialSubject.id"),
        label,
        "sub and credentialSubject.id",
    )
    credential_id = agreeing(
        string_claim(payload, "jti", label), _id(document, label), label, "jti and id"
    )
    expires = _check_dates(payload, shape, now, label)
    return VerifiedCredential(
        issuer=issuer,
        data_model=shape.data_model,
        id=credential_id,
        types=types,
        subject_id=subject_id,
        subject={name: value for name, value in subject.items() if name != "id"},
        status=_status(document, label),
        expires=expires,
    )


def _subject(document: dict[str, Any], label: str) -> dict[str, Any]:
    """``credentialSubject``: one object. Several subjects would leave "the holder's claims"
    undefined, so a credential about more than one subject is refused."""
    subject = document.get("credentialSubject")
    if isinstance(subject, list) and len(subject) == 1:
        subject = subject[0]
    if isinstance(subject, list):
        raise VcJwtError(f"{label} has more than one subject, which this verifier does not accept")
    if not isinstance(subject, dict):
        raise VcJwtError(f"{label} has no credentialSubject object")
    return subject


def _id(document: dict[str, Any], label: str) -> str | None:
    value = document.get("id")
    if value is not None and (not isinstance(value, str) or not value):
        raise VcJwtError(f"{label} id is not a string")
    return value


def _check_dates(payload: dict[str, Any], shape: _Shape, now: datetime, label: str) -> float | None:
    """The JWT's own dates (RFC 7519 §4.1.4, §4.1.5, §4.1.6) for both shapes, and the data
    model's: ``issuanceDate``/``expirationDate`` (VCDM 1.1 §4.7, §4.8) or
    ``validFrom``/``validUntil`` (VCDM 2.0 §4.6)."""
    exp, nbf = numeric_date(payload, "exp", label), numeric_date(payload, "nbf", label)
    check_issued(payload, label, now)
    document = shape.document
    if shape.data_model == VCDM_1:
        start = date_time(document, "issuanceDate", label)
        end = date_time(document, "expirationDate", label)
    else:
        start = date_time(document, "validFrom", label)
        end = date_time(document, "validUntil", label)
    check_window(label, now, starts=[nbf, start], ends=[exp, end])
    return earliest(exp, end)


def _status(document: dict[str, Any], label: str) -> Any:
    status = document.get("credentialStatus")
    entries = status if isinstance(status, list) else [status]
    if status is not None and not all(isinstance(entry, dict) for entry in entries):
        raise VcJwtError(f"{label} credentialStatus is not an object or a list of objects")
    return status
