"""The two canonical forms a StatusList2021 list's proof is computed over: URDNA2015 N-Quads
(PyLD) for ``EcdsaSecp256k1Signature2019``, and RFC 8785 JCS for ``eddsa-jcs-2022``.

JSON-LD is only ever expanded against the contexts shipped in ``contexts/`` (their origins are
in its README): the document loader serves those and refuses any other URL, so canonicalizing
a list never touches the network, and a list cannot make the service fetch a context of its
choosing. The resolved contexts are cached in a cache of this module's own, not PyLD's shared
one, so no other loader's result is ever used here.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from cachetools import LRUCache
from pyld import jsonld
from pyld.context_resolver import ContextResolver

from app.statuslist.errors import StatusError

CONTEXTS = {
    "https://www.w3.org/2018/credentials/v1": "credentials-v1.jsonld",
    "https://w3id.org/vc/status-list/2021/v1": "status-list-2021-v1.jsonld",
    "https://w3c.github.io/vc-bitstring-status-list/contexts/2021/v1.jsonld": (
        "vc-bitstring-status-list-2021-v1.jsonld"
    ),
}
_RESOLVED: LRUCache = LRUCache(maxsize=len(CONTEXTS) * 4)


class UnknownContext(StatusError):
    pass


@cache
def _context_text(url: str) -> str:
    return resources.files("app.statuslist").joinpath("contexts", CONTEXTS[url]).read_text("utf-8")


def load_document(url: str, options: Any = None) -> dict[str, Any]:
    """PyLD's document loader: a shipped context, or a refusal (never a fetch)."""
    if url not in CONTEXTS:
        raise UnknownContext(
            f"Status list names a JSON-LD context this service does not ship: {url}"
        )
    # A fresh object each time: PyLD may keep or change what it is given.
    return {"contextUrl": None, "documentUrl": url, "document": json.loads(_context_text(url))}


def canonize(document: dict[str, Any]) -> str:
    """URDNA2015 canonical N-Quads of ``document``. StatusError when it cannot be expanded
    (an unknown context among them)."""
    options = {
        "algorithm": "URDNA2015",
        "format": "application/n-quads",
        "documentLoader": load_document,
        "contextResolver": ContextResolver(_RESOLVED, load_document),
    }
    try:
        return jsonld.normalize(document, options)
    except jsonld.JsonLdError as exc:
        unknown = _cause(exc, UnknownContext)
        if unknown is not None:
            raise unknown from None
        raise StatusError(f"Status list is not valid JSON-LD: {exc.args[0]}") from exc
    except (TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        # Fail closed on whatever else the processor trips over in a hostile document.
        raise StatusError("Status list is not valid JSON-LD") from exc


def _cause(exc: BaseException, kind: type[StatusError]) -> StatusError | None:
    """PyLD wraps a loader's error, sometimes several times over."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return seen
        details = getattr(seen, "details", None)
        inner = details.get("cause") if isinstance(details, dict) else None
        seen = inner if isinstance(inner, BaseException) else seen.__cause__
    return None


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value``: members sorted by their UTF-16 code units (§3.2.3),
    no whitespace, strings as ECMAScript writes them. Numbers other than integers below 2**53
    are refused: no status list carries one, and ECMAScript's double formatting is not
    Python's."""
    try:
        return _jcs(value).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, which RFC 8785 §3.2.2.2 does not allow
        raise StatusError("Status list holds a string that is not Unicode text") from None


def _jcs(value: Any) -> str:
    if isinstance(value, dict):
        names = sorted(value, key=lambda name: name.encode("utf-16-be"))
        members = (f"{_jcs(name)}:{_jcs(value[name])}" for name in names)
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_jcs(item) for item in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int) and abs(value) < 2**53:
        return str(value)
    raise StatusError("Status list holds a number that cannot be canonicalized (RFC 8785)")
