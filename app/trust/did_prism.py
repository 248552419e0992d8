"""Keys of did:prism DIDs (Hyperledger Identus): an issuer's assertion key, a holder's
authentication key.

A long-form did:prism (``did:prism:<hash>:<operation>``) carries the operation that creates
it, so it resolves offline: ``app.didcomm.prism`` reads it and checks that the hash is the
SHA-256 of the operation. The short form (``did:prism:<hash>``) names a DID published on the
Cardano ledger, whose current document only a PRISM node knows. This service runs no node, so
the deployment says where short-form documents come from (``PrismResolution``):

- ``PINNED_DID_DOCUMENTS_FILE``: DID documents the operator vouches for, read at start. A DID
  document is a fact about the DID, the same for every organization, so it is pinned by the
  deployment (like ``TRUST_ANCHORS_FILE``) rather than by a new trust-source kind: trust
  sources hold certificates and chains lead to them, and an organization already says which
  issuers it trusts with ``trusted_issuers`` (where it names the short form).
- ``DID_RESOLVER_URL``: an HTTP DID resolver in the Universal Resolver's style
  (``GET <resolver>/1.0/identifiers/<did>``, answering a resolution result with
  ``didDocument``, or a bare document), fetched through the ``Fetcher`` like any other issuer
  document (https only, public addresses, a deadline and a size cap).

An organization may also pin a did:prism for itself, from a long form one of its
presentations showed (``app.presentations.issuers_seen``, passed in ``PrismResolution.pinned``
beside the file's documents); the deployment's file wins over it.

A pin wins over the resolver (nothing is fetched), and over the keys a long form carries when
its short form is pinned: a published DID may have rotated its keys since it was created, and
the pin is the operator's word on its current state. The resolver is asked about short forms
only; a long form that is not pinned is taken at its word (the Identus SDK resolves long forms
the same way), so a key rotated out after publication is still accepted under the long form.

The issuer is named by its short form: it is what organizations recognise and pin, and the
long form is the same DID with its creation operation attached.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.didcomm import prism
from app.didcomm.errors import PrismDidError
from app.sdjwt import PublicKey, SdJwtError, jwk_to_public_key
from app.trust.errors import FetchError, TrustError
from app.trust.fetch import Fetcher

PREFIX = prism.PREFIX
ASSERTION = "assertionMethod"
AUTHENTICATION = "authentication"
SHORT_FORM = re.compile(r"^did:prism:[0-9a-f]{64}$")
RESOLVER_PATH = "/1.0/identifiers/"
HOW_TO_PIN = (
    "the deployment's operator can pin its DID document (PINNED_DID_DOCUMENTS_FILE) or name a "
    "DID resolver (DID_RESOLVER_URL)"
)


def short_form(did: str) -> str:
    """The short (canonical) form of a did:prism, long or short, without checking its hash;
    any other identifier unchanged. For comparing identifiers, never for trusting a key."""
    if not did.startswith(PREFIX):
        return did
    return PREFIX + did[len(PREFIX) :].split(":", 1)[0]


@dataclass(frozen=True)
class PrismResolution:
    """Where short-form did:prism documents come from: ``pinned`` maps a short form to its
    DID document; ``resolver_url`` is a Universal Resolver-style address (empty: none)."""

    pinned: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    resolver_url: str = ""


NO_RESOLUTION = PrismResolution()


def load_pinned(text: str) -> dict[str, dict[str, Any]]:
    """Read ``PINNED_DID_DOCUMENTS_FILE``: one DID document, or a JSON array of them, each
    bare or as a resolution result (``{"didDocument": ...}``, as a resolver answers), keyed by
    short form. Raises ValueError naming what is wrong, so a bad file stops the start."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"PINNED_DID_DOCUMENTS_FILE is not JSON: {exc}") from None
    pinned: dict[str, dict[str, Any]] = {}
    for position, item in enumerate(value if isinstance(value, list) else [value]):
        document = _document_of(item)
        if document is None:
            raise ValueError(f"PINNED_DID_DOCUMENTS_FILE entry {position} is not a DID document")
        did = document["id"]
        if not did.startswith(PREFIX):
            raise ValueError(f"PINNED_DID_DOCUMENTS_FILE entry {position} is not a did:prism")
        if not SHORT_FORM.match(did):
            try:
                did = prism.parse(did).canonical
            except PrismDidError as exc:
                raise ValueError(f"PINNED_DID_DOCUMENTS_FILE entry {position}: {exc}") from None
        pinned[did] = document
    return pinned


def _document_of(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and "didDocument" in value:
        value = value["didDocument"]
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return value
    return None


# --- issuers -------------------------------------------------------------------------------


def resolve_issuer(
    did: str, kid: Any, fetcher: Fetcher, resolution: PrismResolution | None
) -> tuple[str, PublicKey]:
    """The issuer's short form and the assertion key ``kid`` names (or its only one when the
    credential names none)."""
    resolution = resolution or NO_RESOLUTION
    if any(mark in did for mark in "#?/"):
        raise TrustError(f"Issuer {did} is a DID URL, not a DID")
    if SHORT_FORM.match(did):
        document = resolution.pinned.get(did) or _resolved(did, fetcher, resolution)
        return did, key_of(document, {did, document["id"]}, kid, ASSERTION, did)
    try:
        parsed = prism.parse(did)
    except PrismDidError as exc:
        raise TrustError(f"Issuer {did} is not a usable did:prism: {exc}") from None
    document = resolution.pinned.get(parsed.canonical) or _document(parsed)
    forms = {did, parsed.canonical, document["id"]}
    return parsed.canonical, key_of(document, forms, kid, ASSERTION, parsed.canonical)


def _document(parsed: prism.PrismDid) -> dict[str, Any]:
    try:
        return parsed.document()
    except PrismDidError as exc:
        raise TrustError(f"DID {parsed.canonical} has an unusable key: {exc}") from None


def _resolved(did: str, fetcher: Fetcher, resolution: PrismResolution) -> dict[str, Any]:
    """The document a Universal Resolver-style resolver gives for a short form; it must be
    the document of this DID (its ``id`` the DID, or a long form of it)."""
    if not resolution.resolver_url:
        raise TrustError(
            f"Issuer {did} is a short-form did:prism, which only a PRISM node can resolve: "
            + HOW_TO_PIN
        )
    url = resolution.resolver_url.rstrip("/") + RESOLVER_PATH + did
    try:
        answer = fetcher.get_json(url)
    except FetchError as exc:
        raise TrustError(f"Could not resolve {did}: {exc.reason}") from exc
    metadata = answer.get("didDocumentMetadata")
    if isinstance(metadata, dict) and metadata.get("deactivated") is True:
        raise TrustError(f"DID {did} is deactivated")
    document = _document_of(answer)
    if document is None:
        raise TrustError(f"The DID resolver did not answer with a DID document for {did}")
    if document["id"] != did and not _long_form_of(document["id"], did):
        raise TrustError(f"The DID resolver answered with the document of another DID than {did}")
    return document


def _long_form_of(candidate: str, did: str) -> bool:
    try:
        return prism.parse(candidate).canonical == did
    except PrismDidError:
        return False


# --- key selection (issuers and holders) ---------------------------------------------------


def key_of(
    document: dict[str, Any], forms: Iterable[str], kid: Any, relationship: str, name: str
) -> PublicKey:
    """The public key of the method ``kid`` names in ``document``, which must be listed under
    ``relationship`` (DID Core 5.3: ``assertionMethod`` to issue, ``authentication`` to sign a
    presentation). ``kid`` may be absolute under any of ``forms`` (the short and long forms of
    one DID), relative (``#issuing-0``) or a bare key id; without one, the relationship must
    list exactly one key. ``name`` is how reasons call the DID."""
    forms = set(forms)
    methods, listed = _methods(document, forms, relationship)
    if kid is None:
        if len(listed) != 1:
            raise TrustError(
                f"The JWS names no key (kid) and DID {name} does not list exactly one "
                f"{relationship} key"
            )
        fragment = next(iter(listed))
    else:
        fragment = _fragment(kid, forms)
        if fragment is None:
            raise TrustError(f"Key id {kid!r} does not belong to {name}")
        if fragment not in methods:
            raise TrustError(f"DID {name} has no key #{fragment}")
        if fragment not in listed:
            raise TrustError(f"Key #{fragment} of {name} is not listed for {relationship}")
    jwk = methods[fragment].get("publicKeyJwk")
    if not isinstance(jwk, dict):
        raise TrustError(f"Key #{fragment} of {name} has no publicKeyJwk")
    try:
        return jwk_to_public_key(jwk)
    except SdJwtError as exc:
        raise TrustError(f"Key #{fragment} of {name}: {exc.reason}") from exc


def _fragment(ref: Any, forms: set[str]) -> str | None:
    """The key id a reference names within the DID (one of ``forms``), or None."""
    if not isinstance(ref, str) or not ref:
        return None
    if ref.startswith("#"):
        return ref[1:] or None
    did, sep, fragment = ref.partition("#")
    if sep:
        return fragment if did in forms and fragment else None
    return ref if ":" not in ref else None  # a bare key id, as some signers write kid


def _methods(
    document: dict[str, Any], forms: set[str], relationship: str
) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Verification methods by key id, and the key ids ``relationship`` lists (by reference
    or embedded)."""
    methods: dict[str, dict[str, Any]] = {}
    for method in _list(document.get("verificationMethod")):
        if isinstance(method, dict) and (fragment := _fragment(method.get("id"), forms)):
            methods[fragment] = method
    listed: set[str] = set()
    for entry in _list(document.get(relationship)):
        if isinstance(entry, dict):
            fragment = _fragment(entry.get("id"), forms)
            if fragment:
                methods[fragment] = entry
        else:
            fragment = _fragment(entry, forms)
        if fragment:
            listed.add(fragment)
    return methods, listed


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
