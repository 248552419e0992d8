"""Who signed a credential, and with which key.

``resolve_issuer_key`` reads the (not yet verified) header and payload of an issuer-signed JWT
and returns the key that must verify it, bound to an issuer identifier by one of the
mechanisms SD-JWT VC 3.5 allows, plus three DID methods (did:jwk, did:web and did:prism,
``app.trust.did_prism``). The caller verifies the signature
with that key; policy (which issuers a verification accepts) is ``app.trust.policy``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from cryptography import x509

from app.sdjwt import PublicKey
from app.trust import did, did_prism, metadata, x5c
from app.trust.errors import TrustError
from app.trust.fetch import Fetcher
from app.trust.own import OwnIssuers

Method = Literal["did:jwk", "did:web", "did:prism", "jwt-vc-issuer", "x5c"]


@dataclass(frozen=True)
class ResolvedIssuer:
    """An issuer identifier and the key it signs with.

    ``identifier`` is the ``iss`` URL, the DID (a did:prism by its short form), or for an x5c
    chain without ``iss`` the leaf certificate's identity. ``certificates`` is the validated x5c path, leaf first and trust
    anchor last (empty for other methods), so policy can pin anchors and intermediates.
    """

    identifier: str
    key: PublicKey
    method: Method
    certificates: tuple[x509.Certificate, ...] = field(default=(), repr=False)


def resolve_issuer_key(
    header: dict[str, Any],
    payload: dict[str, Any],
    *,
    fetcher: Fetcher,
    anchors: Sequence[x509.Certificate],
    now: datetime,
    own: OwnIssuers | None = None,
    prism: did_prism.PrismResolution | None = None,
) -> ResolvedIssuer:
    """Find and bind the issuer's key. An ``x5c`` header wins over ``iss`` (SD-JWT VC 3.5).

    An ``iss`` of this deployment (``own``) gets the keys its jwt-vc-issuer metadata would
    publish, read without a fetch (``app.trust.own``), and with ``x5c`` its chain is validated
    against its organization's roots from the database. ``prism`` says where short-form
    did:prism documents come from (pinned, or a resolver); long forms need nothing."""
    iss = payload.get("iss")
    if iss is not None and (not isinstance(iss, str) or not iss):
        raise TrustError("Credential iss is not a string")
    if "x5c" in header:
        if own is not None and iss is not None and own.names(iss):
            # This deployment's own issuer: its chain leads to the organization's own root,
            # read from the database (a configured anchor cannot speak for it).
            return _from_x5c(header["x5c"], iss, own.roots(iss), now)
        return _from_x5c(header["x5c"], iss, anchors, now)
    if iss is None:
        raise TrustError("Presented credential carries no issuer: neither iss nor an x5c chain")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise TrustError("Credential kid is not a string")
    if own is not None and own.names(iss):
        return ResolvedIssuer(iss, own.key(iss, kid), "jwt-vc-issuer")
    if iss.startswith(did.DID_JWK):
        return ResolvedIssuer(iss, did.resolve_did_jwk(iss, kid), "did:jwk")
    if iss.startswith(did.DID_WEB):
        return ResolvedIssuer(iss, did.resolve_did_web(iss, kid, fetcher), "did:web")
    if iss.startswith(did_prism.PREFIX):
        identifier, key = did_prism.resolve_issuer(iss, kid, fetcher, prism)
        return ResolvedIssuer(identifier, key, "did:prism")
    if metadata.is_web_issuer(iss, fetcher):
        return ResolvedIssuer(
            iss, metadata.resolve_metadata_key(iss, kid, fetcher), "jwt-vc-issuer"
        )
    raise TrustError(
        f"Issuer {iss} is neither an HTTPS URL nor a did:jwk, did:web or did:prism DID, and the "
        "credential has no x5c chain"
    )


def _from_x5c(
    value: Any, iss: str | None, anchors: Sequence[x509.Certificate], now: datetime
) -> ResolvedIssuer:
    chain = x5c.parse_x5c(value)
    path = x5c.validate_chain(chain, anchors, now)
    identifier = x5c.bind_identity(path[0], iss)
    return ResolvedIssuer(identifier, x5c.leaf_key(path[0]), "x5c", path)
