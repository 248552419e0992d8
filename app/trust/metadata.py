"""Issuer keys from JWT VC Issuer Metadata (SD-JWT VC 5, ``/.well-known/jwt-vc-issuer``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from app.sdjwt import PublicKey, SdJwtError, jwk_to_public_key
from app.trust.errors import FetchError, TrustError
from app.trust.fetch import Fetcher

WELL_KNOWN = "/.well-known/jwt-vc-issuer"


def is_web_issuer(iss: str, fetcher: Fetcher) -> bool:
    """An HTTPS ``iss`` (SD-JWT VC 5); plain http only where the Fetcher is in development
    mode, so a local issuer can be exercised end to end."""
    return iss.startswith("https://") or (fetcher.allow_private and iss.startswith("http://"))


def metadata_url(iss: str) -> str:
    """SD-JWT VC 5 and 5.1: insert the well-known segment between host and path, after
    removing a terminating slash from the path. ``iss`` has no query or fragment."""
    parts = urlsplit(iss)
    if not parts.hostname or parts.query or parts.fragment or "#" in iss:
        raise TrustError(f"Issuer {iss} is not a URL with a host and without query or fragment")
    if parts.username is not None or parts.password is not None:
        raise TrustError(f"Issuer {iss} carries credentials")
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path.rstrip('/')}"


def resolve_metadata_key(iss: str, kid: Any, fetcher: Fetcher) -> PublicKey:
    """Fetch the issuer's metadata and take the key ``kid`` names from its JWK set."""
    url = metadata_url(iss)
    metadata = _fetch(fetcher, url, "issuer metadata")
    # SD-JWT VC 5.3: the issuer value must be identical to iss, or the response is unused.
    if metadata.get("issuer") != iss:
        raise TrustError("Issuer metadata names another issuer")
    jwks = _key_set(metadata, fetcher)
    return select_key(jwks, kid)


def _fetch(fetcher: Fetcher, url: str, what: str) -> dict[str, Any]:
    try:
        return fetcher.get_json(url)
    except FetchError as exc:
        raise TrustError(f"Could not fetch {what}: {exc.reason}") from exc


def _key_set(metadata: dict[str, Any], fetcher: Fetcher) -> dict[str, Any]:
    """SD-JWT VC 5.2: the metadata carries ``jwks`` or ``jwks_uri``, not both."""
    has_jwks, has_uri = "jwks" in metadata, "jwks_uri" in metadata
    if has_jwks == has_uri:
        raise TrustError("Issuer metadata must carry exactly one of jwks and jwks_uri")
    if has_jwks:
        jwks = metadata["jwks"]
    else:
        if not isinstance(metadata["jwks_uri"], str):
            raise TrustError("Issuer metadata jwks_uri is not a URL")
        jwks = _fetch(fetcher, metadata["jwks_uri"], "the issuer's key set")
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
        raise TrustError("Issuer key set is not a JWK Set")
    return jwks


def select_key(jwks: dict[str, Any], kid: Any) -> PublicKey:
    """The signing key ``kid`` names in a JWK Set (the only one when there is no ``kid``)."""
    # RFC 7517 4.2: a key marked for encryption is not a signing key.
    keys = [k for k in jwks["keys"] if isinstance(k, dict) and k.get("use") in (None, "sig")]
    if kid is not None:
        keys = [k for k in keys if k.get("kid") == kid]
        if not keys:
            raise TrustError(f"Issuer key set has no signing key with kid {kid!r}")
        if len(keys) > 1:
            raise TrustError(f"Issuer key set has several keys with kid {kid!r}")
    elif not keys:
        raise TrustError("Issuer key set holds no signing key")
    elif len(keys) > 1:
        raise TrustError("Credential header has no kid and the issuer publishes several keys")
    try:
        return jwk_to_public_key(keys[0])
    except SdJwtError as exc:
        raise TrustError(f"Issuer key is unusable: {exc.reason}") from exc
