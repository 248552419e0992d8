"""Issuer keys from ``did:jwk`` and ``did:web`` identifiers.

did:jwk (https://github.com/quartzjer/did-jwk/blob/main/spec.md): the DID is the key, so
resolution is decoding. did:web (https://w3c-ccg.github.io/did-method-web/, 2.5.2 "Read
(Resolve)"): the DID names an HTTPS URL holding the DID document, fetched through the Fetcher.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from app.sdjwt import PublicKey, SdJwtError, jwk_to_public_key
from app.sdjwt.encoding import decode_json_object
from app.trust.errors import FetchError, TrustError
from app.trust.fetch import Fetcher

DID_JWK = "did:jwk:"
DID_WEB = "did:web:"


def _check_did(did: str) -> None:
    # The issuer is the DID itself; a DID URL (path, query, fragment) names something else.
    if any(mark in did for mark in "#?/"):
        raise TrustError(f"Issuer {did} is a DID URL, not a DID")


def resolve_did_jwk(did: str, kid: Any) -> PublicKey:
    """did:jwk Read: base64url-decode the method-specific id into a JWK. Its one
    verification method is ``#0``; a ``kid`` naming anything else names another key."""
    _check_did(did)
    if kid is not None and kid not in ("#0", f"{did}#0"):
        raise TrustError(f"Key id {kid!r} does not name the did:jwk key ({did}#0)")
    try:
        jwk = decode_json_object(did[len(DID_JWK) :], "did:jwk")
    except SdJwtError as exc:
        raise TrustError("Issuer did:jwk does not hold a JSON Web Key") from exc
    try:
        # did:jwk Security: a JWK with private key material must be rejected.
        return jwk_to_public_key(jwk)
    except SdJwtError as exc:
        raise TrustError(f"Issuer did:jwk holds an unusable key: {exc.reason}") from exc


def did_web_url(did: str) -> str:
    """did:web 2.5.2 steps 1-5: colons become slashes, a percent-encoded port colon is
    decoded, and the document is ``did.json`` under the path or ``/.well-known``."""
    _check_did(did)
    host, *path = did[len(DID_WEB) :].split(":")
    host = unquote(host)
    if not host or any(c in host for c in "/@\\?#") or host.startswith("["):
        raise TrustError(f"Issuer {did} does not name a host")
    segments = [unquote(segment) for segment in path]
    if any(s in ("", ".", "..") or "/" in s or "\\" in s for s in segments):
        raise TrustError(f"Issuer {did} has an invalid path")
    location = "/".join(segments) if segments else ".well-known"
    return f"https://{host}/{location}/did.json"


def resolve_did_web(did: str, kid: Any, fetcher: Fetcher) -> PublicKey:
    """Fetch the DID document and take the assertion key ``kid`` names."""
    url = did_web_url(did)
    try:
        document = fetcher.get_json(url)
    except FetchError as exc:
        raise TrustError(f"Could not fetch the DID document of {did}: {exc.reason}") from exc
    # did:web 2.5.2 step 7: the document must be the one for this DID.
    if document.get("id") != did:
        raise TrustError(f"DID document at {url} is not the document of {did}")
    method = _select_method(did, document, kid)
    jwk = method.get("publicKeyJwk")
    if not isinstance(jwk, dict):
        raise TrustError(f"Verification method {method.get('id')} has no publicKeyJwk")
    try:
        return jwk_to_public_key(jwk)
    except SdJwtError as exc:
        raise TrustError(f"Verification method {method.get('id')}: {exc.reason}") from exc


def _absolute(did: str, ref: Any) -> str | None:
    if not isinstance(ref, str) or not ref:
        return None
    if ref.startswith("#"):
        return did + ref
    if ":" not in ref:  # a bare fragment, as some issuers write their kid
        return f"{did}#{ref}"
    return ref


def _methods(did: str, document: dict[str, Any]) -> tuple[dict[str, dict], set[str]]:
    """Verification methods by absolute id, and the ids usable for assertions.

    DID Core 5.3.2: ``assertionMethod`` lists the keys that may issue credentials, either by
    reference or embedded.
    """
    methods: dict[str, dict] = {}
    for method in _list(document.get("verificationMethod")):
        if isinstance(method, dict) and (ref := _absolute(did, method.get("id"))):
            methods[ref] = method
    assertion: set[str] = set()
    for entry in _list(document.get("assertionMethod")):
        if isinstance(entry, dict):
            ref = _absolute(did, entry.get("id"))
            if ref:
                methods[ref] = entry
        else:
            ref = _absolute(did, entry)
        if ref and ref.startswith(f"{did}#"):
            assertion.add(ref)
    return methods, assertion


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _select_method(did: str, document: dict[str, Any], kid: Any) -> dict[str, Any]:
    methods, assertion = _methods(did, document)
    if kid is None:
        usable = [ref for ref in assertion if ref in methods]
        if len(usable) != 1:
            raise TrustError(
                "Credential header has no kid and the DID document does not list exactly one "
                "assertion key"
            )
        return methods[usable[0]]
    ref = _absolute(did, kid)
    if ref is None or not ref.startswith(f"{did}#"):
        raise TrustError(f"Key id {kid!r} does not belong to {did}")
    if ref not in methods:
        raise TrustError(f"DID document of {did} has no key {ref}")
    if ref not in assertion:
        raise TrustError(
            f"Key {ref} is not listed for issuing (assertionMethod) in the DID document"
        )
    return methods[ref]
