"""What every credential format's reader hands the decision, whatever the format.

A reader (one per format: ``app.presentations.sd_jwt`` and its siblings) checks everything the
format itself defines (signatures, the holder's binding to this request, validity) and either
refuses with a reason or returns a ``Presented``: who issued it, what type it is, its claims
keyed by the schema's attribute names, and how to read its status. What a verification then
asks (trusted issuers, the type, revocation, conditions, the requested claims) is judged once
for every format in ``app.presentations.decide``. No database and no Flask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography import x509

from app.oid4vp.formats import CredentialType
from app.presentations.reasons import untrusted_issuer
from app.statuslist import StatusResult
from app.trust import Fetcher, OwnIssuers, PrismResolution, ResolvedIssuer
from app.trust.did_prism import short_form
from app.trust.policy import PEM_MARKER, names_issuer
from app.trust.sources import SourceTrust
from app.trust.x5c import load_pem_anchors


@dataclass(frozen=True)
class Rules:
    """What the verification asks: the credential type, claims, conditions, trusted issuers,
    and the certificates its trust sources name (None when it chose no source).
    ``prism_pins`` are the did:prism documents its organization pinned by trusting an issuer
    people presented (``app.presentations.issuers_seen``), by short form."""

    credential: CredentialType
    requested_claims: list[str]
    conditions: list[dict[str, Any]]
    trusted_issuers: list[str]
    sources: SourceTrust | None = None
    prism_pins: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    # The transaction data the request sent (OpenID4VP 1.0 §5.1), as sent: the answer must
    # confirm every entry (``app.oid4vp.transaction_data``).
    transaction_data: tuple[str, ...] = ()

    def prism(self, context: Context) -> PrismResolution | None:
        """Where did:prism issuers resolve for this verification: the deployment's pins and
        resolver, then the organization's own pins. The deployment's pin wins: it is the
        operator's word on the DID's current state, where the organization's is the state the
        DID was created in."""
        if not self.prism_pins:
            return context.prism
        deployment = context.prism or PrismResolution()
        return PrismResolution(
            {**self.prism_pins, **deployment.pinned}, resolver_url=deployment.resolver_url
        )

    def anchors(self, context: Context) -> list[x509.Certificate]:
        """What chains are validated against, for every format alike: the deployment's
        anchors, the PEM certificates the verification pins in its trusted issuers, and every
        certificate the sources name, granted or not, so that a refusal can say which it was."""
        pinned = pinned_certificates(self.trusted_issuers)
        if self.sources is None:
            return [*context.anchors, *pinned]
        return [*context.anchors, *pinned, *self.sources.certificates()]


def pinned_certificates(trusted_issuers: Sequence[str]) -> list[x509.Certificate]:
    """The certificates of a verification's PEM entries: anchors it trusts itself."""
    pinned: list[x509.Certificate] = []
    for entry in trusted_issuers:
        if PEM_MARKER in entry:
            try:
                pinned.extend(load_pem_anchors(entry))
            except ValueError:
                continue  # refused when the verification was saved
    return pinned


@dataclass(frozen=True)
class Context:
    """Where and when the presentation arrived, and the deployment's trust settings.

    ``audience`` is what a JWT holder binding must name (the client ID, or ``origin:<origin>``
    in the browser's Digital Credentials API). An mdoc binds to the whole request instead
    (its SessionTranscript): the ``client_id`` and ``response_uri`` of a request a wallet
    answered by ``direct_post``, or the page's ``origin`` in the browser; ``response_jwk`` is
    the key the response was encrypted to, whose thumbprint the transcript also holds.
    ``own_issuers`` are this deployment's issuers, whose keys and status lists are read from
    its database instead of fetched (``app.trust.own``). ``prism`` is where short-form did:prism
    issuers' documents come from (``app.trust.did_prism``; None: long forms only).
    ``session_transcript`` is one a channel built itself (``org-iso-mdoc``, ISO/IEC 18013-7
    Annex C); ``asked_elements`` the (namespace, element) pairs its DeviceRequest named, when
    disclosing any other is a refusal. ``zk_verify`` checks one zero-knowledge proof
    (``app.zk.ProofCheck``) off the web worker, returning its refusal or None; None when the
    deployment cannot (no ``zk`` extra).
    """

    audience: str
    nonce: str
    now: datetime
    fetcher: Fetcher
    anchors: Sequence[x509.Certificate] = ()
    status_fail_open: bool = False
    client_id: str = ""
    response_uri: str | None = None
    origin: str | None = None
    response_jwk: dict[str, Any] | None = None
    own_issuers: OwnIssuers | None = None
    session_transcript: bytes | None = None
    asked_elements: frozenset[tuple[str, str]] | None = None
    prism: PrismResolution | None = None
    zk_verify: Callable[[Any], str | None] | None = None


class Refused(Exception):
    """A presentation its format's rules refuse; ``issuer`` when it was already known."""

    def __init__(self, reason: str, issuer: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.issuer = issuer


@dataclass(frozen=True)
class Presented:
    """A credential whose every signature and binding verified.

    ``claims`` are keyed by the schema's attribute names (dotted names nested, as SD-JWT
    claims are) with JSON values only. ``status`` reads the credential's status when called
    (raising ``StatusError`` when it cannot); None when the credential names no status.
    ``kept_reference`` is what re-checking that status later needs (``app.statuslist.kept``).
    """

    issuer: ResolvedIssuer
    type_identifier: str
    type_matches: bool
    claims: dict[str, Any]
    status: Callable[[Context], StatusResult] | None = None
    kept_reference: dict[str, Any] | None = None


Reader = Callable[[Any, Rules, Context], Presented]


StatusCheck = Callable[..., StatusResult]


def status_reader(
    check: StatusCheck,
    status: Any,
    issuer: ResolvedIssuer,
    anchors: Sequence[x509.Certificate] | None = None,
) -> Callable[[Context], StatusResult]:
    """``Presented.status`` for a format: its status list ``check`` run at the decision, with
    the context's fetcher and clock, and its anchors unless the reader gives its own."""

    def read(context: Context) -> StatusResult:
        return check(
            status,
            credential_issuer=issuer,
            fetcher=context.fetcher,
            anchors=context.anchors if anchors is None else anchors,
            now=context.now,
        )

    return read


def untrusted_by_pins(issuer_name: str | None, rules: Rules) -> str | None:
    """A pinned verification names the issuer it does not trust, even if it could not resolve
    it: the contract's untrusted-issuer sentence beats the resolution's own reason. A did:prism
    is compared in its short form (``app.trust.policy``), and named so."""
    if (
        rules.trusted_issuers
        and issuer_name
        and not names_issuer(rules.trusted_issuers, issuer_name)
    ):
        return untrusted_issuer(short_form(issuer_name))
    return None
