"""Wallet-relying party registration certificates (ETSI TS 119 475, ``rc-wrp+jwt``): read,
checked against the registrars an organization trusts, and compared with what a request asks.
No database here.

A registrar registers each intended use of a relying party: the credentials and claims it
may ask for and the purpose it states. The registration certificate is that registration
signed by the registrar, a JWT whose ``x5c`` leads to the registrar's certificate. Wallets
show its purpose and refuse a request that asks for more than it permits; so a request is
checked here before any wallet sees it.

Shape read (TS 119 475 v1.2.1, as the EU wallet libraries read it): ``sub`` a string naming
the relying party of the access certificate; ``credentials`` a list of DCQL-like entries
(``format``, ``meta`` a DCQL meta object, optional ``claims`` each with a ``path`` array);
``purpose`` a list of localised texts (``{"lang", "value"}``; v1.1.1's ``content`` is read
too). v1.1.1 made ``sub`` an object and is not read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from app.sdjwt import SdJwtError, read_unverified, verify_jws
from app.trust.errors import TrustError
from app.trust.sources import SourceTrust
from app.trust.x5c import leaf_key, parse_x5c, validate_chain

# TS 119 475 §5.2.1: the media type of a registration certificate signed as a JWT.
TYP = "rc-wrp+jwt"
# TS 119 475 header: the JAdES baseline algorithms (ETSI TS 119 182-1 §5.1.2).
ALLOWED_ALGS = ("ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512")
# OpenID4VP 1.0 §5.1 ``verifier_info`` entries carry a ``format``; ETSI TS 119 472-2 names
# this one for a registration certificate, the value EU wallets look for.
VERIFIER_INFO_FORMAT = "registration_cert"
# JAdES (ETSI TS 119 182-1) header parameters a registrar may mark critical: the claimed signing
# time (informative here) and ``b64`` when true (RFC 7797: the ordinary signing input).
UNDERSTOOD_CRITICAL = frozenset({"sigT", "b64"})
MAX_LENGTH = 32 * 1024
MAX_CREDENTIALS = 50
MAX_CLAIMS = 500
LABEL = "Registration certificate"
# ISO/IEC 9594-6 organizationIdentifier (ETSI EN 319 412-1 §5.1.4): how an access
# certificate (TS 119 411-8) names its relying party, e.g. "LEIXG-...".
ORGANIZATION_IDENTIFIER = x509.ObjectIdentifier("2.5.4.97")


class RegistrationCertificateError(ValueError):
    """A registration certificate that cannot be taken; the message says why."""


@dataclass(frozen=True)
class PermittedCredential:
    """One credential a registration permits: its format, DCQL meta, and the claim paths
    (None: every claim of it)."""

    format: str
    meta: dict[str, Any]
    claims: tuple[tuple[Any, ...], ...] | None

    def describe(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "meta": self.meta,
            "claims": None if self.claims is None else [list(path) for path in self.claims],
        }


@dataclass(frozen=True)
class RegistrationCertificate:
    """What a checked registration certificate says."""

    token: str
    sub: str
    name: str
    intended_use_id: str | None
    purpose: tuple[dict[str, str], ...]
    credentials: tuple[PermittedCredential, ...]
    issued_at: datetime
    expires_at: datetime | None
    status: dict[str, Any] | None
    # The registrar's chain as validated: leaf (the signer) first, anchor last.
    registrar_path: tuple[x509.Certificate, ...]

    @property
    def registrar(self) -> str:
        return self.registrar_path[0].subject.rfc4514_string()


def check(
    token: str,
    registrars: SourceTrust,
    access_certificate: x509.Certificate,
    now: datetime,
) -> RegistrationCertificate:
    """The registration certificate, once its header, registrar signature, subject and
    validity hold (TS 119 475 §5.2; what a wallet checks before it shows the purpose).

    ``registrars`` are the anchors the organization trusts for registrars; the subject must
    name the relying party of ``access_certificate``. Status, where one is named, is for the
    caller to check (it needs the network).
    """
    token = (token or "").strip()
    if len(token) > MAX_LENGTH:
        raise RegistrationCertificateError(f"{LABEL} is longer than {MAX_LENGTH // 1024} KiB")
    try:
        header, _ = read_unverified(token, LABEL)
    except SdJwtError as exc:
        raise RegistrationCertificateError(exc.reason) from None
    if header.get("typ") != TYP:
        raise RegistrationCertificateError(
            f"{LABEL} has typ {header.get('typ')!r}; ETSI TS 119 475 requires {TYP!r}"
        )
    if header.get("alg") not in ALLOWED_ALGS:
        raise RegistrationCertificateError(
            f"{LABEL} is signed with alg {header.get('alg')!r}; ETSI TS 119 475 allows "
            f"{', '.join(ALLOWED_ALGS)}"
        )
    if header.get("b64", True) is not True:
        raise RegistrationCertificateError(
            f"{LABEL} has b64 false (an unencoded payload, RFC 7797), which is not read"
        )
    path = _registrar_path(header, registrars, now)
    try:
        _, payload = verify_jws(
            token,
            leaf_key(path[0]),
            ALLOWED_ALGS,
            typ=TYP,
            label=LABEL,
            understood=UNDERSTOOD_CRITICAL,
        )
    except (SdJwtError, TrustError) as exc:
        raise RegistrationCertificateError(exc.reason) from None
    certificate = _read_payload(token, payload, path)
    _check_times(certificate, now)
    if not subject_matches(certificate.sub, access_certificate):
        raise RegistrationCertificateError(
            f"{LABEL} is for {certificate.sub!r}, not for this organization's access "
            f"certificate ({access_certificate.subject.rfc4514_string()}): its sub must be "
            "the access certificate's organizationIdentifier or subject name"
        )
    return certificate


def _registrar_path(
    header: dict[str, Any], registrars: SourceTrust, now: datetime
) -> tuple[x509.Certificate, ...]:
    if "x5c" not in header:
        raise RegistrationCertificateError(
            f"{LABEL} carries no x5c header: ETSI TS 119 475 requires the registrar's chain"
        )
    try:
        chain = parse_x5c(header["x5c"])
    except TrustError as exc:
        raise RegistrationCertificateError(f"{LABEL}: {exc.reason}") from None
    anchors = registrars.certificates()
    if not anchors:
        raise RegistrationCertificateError(
            f"{LABEL} cannot be checked: the organization trusts no registrar (add a trust "
            "source of kind REGISTRARS, or a List of Trusted Entities of registration "
            "certificate providers)"
        )
    try:
        path = validate_chain(chain, anchors, now)
    except TrustError as exc:
        reason = exc.reason.replace("Issuer certificate", "Registrar certificate")
        if "does not lead to a trusted anchor" in reason:
            reason = f"{LABEL} is signed by a registrar this organization does not trust"
        raise RegistrationCertificateError(reason) from None
    refusal = registrars.refusal(path)
    if refusal is not None:
        raise RegistrationCertificateError(refusal)
    return path


def _read_payload(
    token: str, payload: dict[str, Any], path: tuple[x509.Certificate, ...]
) -> RegistrationCertificate:
    sub = payload.get("sub")
    if not isinstance(sub, str) or not sub.strip():
        raise RegistrationCertificateError(
            f"{LABEL} has no sub naming the relying party (TS 119 475 v1.2.1: a string)"
        )
    iat = payload.get("iat")
    if not _is_number(iat):
        raise RegistrationCertificateError(f"{LABEL} has no iat (when it was issued)")
    exp = payload.get("exp")
    if exp is not None and not _is_number(exp):
        raise RegistrationCertificateError(f"{LABEL} has an exp that is not a number")
    status = payload.get("status")
    if status is not None and not isinstance(status, dict):
        raise RegistrationCertificateError(f"{LABEL} has a status that is not an object")
    intended_use = payload.get("intended_use_id")
    if intended_use is not None and not isinstance(intended_use, str):
        raise RegistrationCertificateError(f"{LABEL} has an intended_use_id that is not a text")
    name = payload.get("name")
    return RegistrationCertificate(
        token=token,
        sub=sub.strip(),
        name=name if isinstance(name, str) else "",
        intended_use_id=intended_use,
        purpose=_purpose(payload.get("purpose")),
        credentials=_credentials(payload.get("credentials")),
        issued_at=datetime.fromtimestamp(iat, UTC),
        expires_at=datetime.fromtimestamp(exp, UTC) if exp is not None else None,
        status=status,
        registrar_path=path,
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _purpose(value: Any) -> tuple[dict[str, str], ...]:
    """``[{"lang", "value"}]``; v1.1.1's ``content`` is read as ``value``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RegistrationCertificateError(f"{LABEL} purpose must be a list of localised texts")
    texts = []
    for entry in value:
        text = entry.get("value", entry.get("content")) if isinstance(entry, dict) else None
        lang = entry.get("lang", "") if isinstance(entry, dict) else None
        if not isinstance(text, str) or not isinstance(lang, str):
            raise RegistrationCertificateError(
                f"{LABEL} purpose entries must be objects with lang and value texts"
            )
        texts.append({"lang": lang, "value": text})
    return tuple(texts)


def _credentials(value: Any) -> tuple[PermittedCredential, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_CREDENTIALS:
        raise RegistrationCertificateError(
            f"{LABEL} credentials must be a list of at most {MAX_CREDENTIALS} entries"
        )
    return tuple(_credential(entry, position) for position, entry in enumerate(value, 1))


def _credential(entry: Any, position: int) -> PermittedCredential:
    where = f"{LABEL} credentials[{position - 1}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("format"), str):
        raise RegistrationCertificateError(f"{where} must be an object with a format")
    meta = entry.get("meta", {})
    if not isinstance(meta, dict):
        raise RegistrationCertificateError(
            f"{where}.meta must be a DCQL meta object (TS 119 475 v1.2.1)"
        )
    claims = entry.get("claims")
    if claims is None:
        return PermittedCredential(entry["format"], meta, None)
    if not isinstance(claims, list) or not claims or len(claims) > MAX_CLAIMS:
        raise RegistrationCertificateError(
            f"{where}.claims must be a non-empty list of at most {MAX_CLAIMS} claims"
        )
    paths = []
    for claim in claims:
        path = claim.get("path") if isinstance(claim, dict) else None
        if (
            not isinstance(path, list)
            or not path
            or not all(
                p is None or (isinstance(p, str) and p) or (type(p) is int and p >= 0) for p in path
            )
        ):
            raise RegistrationCertificateError(
                f"{where}.claims entries need a path: a non-empty array of texts, nulls and "
                "non-negative integers (DCQL claims path pointer)"
            )
        paths.append(tuple(path))
    return PermittedCredential(entry["format"], meta, tuple(paths))


def _check_times(certificate: RegistrationCertificate, now: datetime) -> None:
    if certificate.issued_at > now:
        raise RegistrationCertificateError(
            f"{LABEL} is issued in the future ({certificate.issued_at:%Y-%m-%d %H:%M} UTC)"
        )
    if certificate.expires_at is not None and certificate.expires_at <= now:
        raise RegistrationCertificateError(
            f"{LABEL} expired on {certificate.expires_at:%Y-%m-%d %H:%M} UTC"
        )


def subject_matches(sub: str, access_certificate: x509.Certificate) -> bool:
    """Whether ``sub`` names the relying party of the access certificate: its
    organizationIdentifier (what TS 119 411-8 access certificates carry), or its whole
    subject name (RFC 4514, compared as names, not as texts)."""
    subject = access_certificate.subject
    identifiers = [
        a.value for a in subject.get_attributes_for_oid(ORGANIZATION_IDENTIFIER) if a.value
    ]
    if sub in identifiers:
        return True
    try:
        return x509.Name.from_rfc4514_string(sub) == subject
    except ValueError:
        return False


def common_name(cert: x509.Certificate) -> str:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else cert.subject.rfc4514_string()


# -- what a request may ask ----------------------------------------------------------------


def outside(
    permitted: Sequence[PermittedCredential], credential_query: dict[str, Any]
) -> list[str]:
    """What of one DCQL Credential Query (OpenID4VP 1.0 §6.1) the registration does not
    permit: the credential type itself (``["vct ..."]``), or each claim path outside it
    (dotted, ``address.country``). Empty: the query stays within the registration.

    A permitted entry of the same format and type permits the query's claims when it lists
    no claims, or when each claim's path equals one it lists or lies under one (a registered
    ``address`` permits ``address.country``); a null in a registered path matches any array
    element. The comparison is Credo's (the request's query against the certificate's),
    made before the request exists.
    """
    entries = [p for p in permitted if _same_type(p, credential_query)]
    if not entries:
        return [_type_name(credential_query)]
    asked = [tuple(c.get("path") or ()) for c in credential_query.get("claims") or []]
    best: list[str] | None = None
    for entry in entries:
        if entry.claims is None:
            return []
        missing = [_dotted(p) for p in asked if not any(_under(p, r) for r in entry.claims)]
        if not missing:
            return []
        if best is None or len(missing) < len(best):
            best = missing
    return best or []


def _same_type(entry: PermittedCredential, query: dict[str, Any]) -> bool:
    if entry.format != query.get("format"):
        return False
    meta = query.get("meta") or {}
    if "doctype_value" in meta:
        return entry.meta.get("doctype_value") == meta["doctype_value"]
    if "vct_values" in meta:
        registered = entry.meta.get("vct_values")
        return isinstance(registered, list) and set(meta["vct_values"]) <= set(registered)
    if "type_values" in meta:
        registered = entry.meta.get("type_values")
        return isinstance(registered, list) and all(
            any(set(r) <= set(t) for r in registered if isinstance(r, list))
            for t in meta["type_values"]
        )
    return True


def _under(asked: tuple[Any, ...], registered: tuple[Any, ...]) -> bool:
    if len(registered) > len(asked):
        return False
    return all(r is None or r == a for r, a in zip(registered, asked, strict=False))


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join("*" if p is None else str(p) for p in path)


def _type_name(query: dict[str, Any]) -> str:
    meta = query.get("meta") or {}
    if "doctype_value" in meta:
        return f"doctype {meta['doctype_value']}"
    if "vct_values" in meta:
        return f"vct {' '.join(meta['vct_values'])}"
    if "type_values" in meta:
        return f"type {' '.join(' '.join(t) for t in meta['type_values'])}"
    return f"format {query.get('format')}"


def verifier_info(token: str | None, credential_ids: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """OpenID4VP 1.0 §5.1 ``verifier_info``: one attestation, the registration certificate,
    bound to the Credential Queries it covers (``credential_ids``)."""
    if not token:
        return ()
    entry: dict[str, Any] = {"format": VERIFIER_INFO_FORMAT, "data": token}
    if credential_ids:
        entry["credential_ids"] = list(credential_ids)
    return (entry,)
