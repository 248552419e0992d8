"""Issuer trust: resolving who signed a credential and whether a verification accepts them.
Protocol code: no database, no Flask; every outbound fetch goes through
``Fetcher``."""

from app.trust.did_prism import PrismResolution
from app.trust.errors import FetchError, TrustError
from app.trust.fetch import Fetcher, TTLCache
from app.trust.issuers import ResolvedIssuer, resolve_issuer_key
from app.trust.own import OwnIssuers
from app.trust.policy import is_trusted, parse_pins, require_trusted
from app.trust.x5c import load_pem_anchors

__all__ = [
    "FetchError",
    "Fetcher",
    "OwnIssuers",
    "PrismResolution",
    "ResolvedIssuer",
    "TTLCache",
    "TrustError",
    "is_trusted",
    "load_pem_anchors",
    "parse_pins",
    "require_trusted",
    "resolve_issuer_key",
]
