"""Apply presented Disclosures to a verified Issuer-signed JWT payload (RFC 9901 §7.1 step 3).

The payload must already be authenticated; this module decides which claims the holder has
shown and refuses every structure the RFC says to reject, so a holder can neither invent a
claim nor smuggle one into a place the issuer did not put it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from app.sdjwt.encoding import b64url_decode, b64url_encode, parse_json
from app.sdjwt.errors import SdJwtError

SD = "_sd"
ARRAY_DIGEST = "..."

# Deep enough for any real credential; bounds the recursion below on hostile input.
MAX_DEPTH = 32


@dataclass(frozen=True)
class Disclosure:
    """One decoded Disclosure; ``name`` is None for an array element (RFC 9901 §4.2.2)."""

    digest: str
    name: str | None
    value: Any


def sha256_b64url(text: str) -> str:
    """RFC 9901 §4.2.3: the hash over the US-ASCII bytes of the string, base64url encoded."""
    return b64url_encode(hashlib.sha256(text.encode("ascii")).digest())


def decode_disclosures(encoded: list[str]) -> dict[str, Disclosure]:
    """Decode every presented Disclosure and index it by its digest."""
    by_digest: dict[str, Disclosure] = {}
    for text in encoded:
        disclosure = _decode(text)
        if disclosure.digest in by_digest:
            # RFC 9901 §4: the Holder MUST NOT send a Disclosure more than once.
            raise SdJwtError("Presentation contains the same disclosure twice")
        by_digest[disclosure.digest] = disclosure
    return by_digest


def _decode(text: str) -> Disclosure:
    item = parse_json(b64url_decode(text, "A disclosure"), "A disclosure")
    # RFC 9901 §4.2.1 and §4.2.2: [salt, name, value] or [salt, value]; the salt is a string.
    if not isinstance(item, list) or len(item) not in (2, 3):
        raise SdJwtError("A disclosure is not an array of two or three elements")
    if not isinstance(item[0], str):
        raise SdJwtError("A disclosure salt is not a string")
    if len(item) == 2:
        return Disclosure(sha256_b64url(text), None, item[1])
    name = item[1]
    if not isinstance(name, str):
        raise SdJwtError("A disclosure claim name is not a string")
    if name in (SD, ARRAY_DIGEST):
        raise SdJwtError("A disclosure uses the reserved claim name _sd or ...")
    return Disclosure(sha256_b64url(text), name, item[2])


class Unpacker:
    """Walk the payload once, replacing digests with the disclosed claims (RFC 9901 §7.1).

    ``protected`` names top-level claims that must not be disclosed selectively, neither
    themselves nor anything inside them.
    """

    def __init__(self, disclosures: dict[str, Disclosure], protected: frozenset[str]) -> None:
        self._disclosures = disclosures
        self._protected = protected
        self._seen: set[str] = set()

    def unpack(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Return the processed payload, refusing it as the RFC requires."""
        claims = self._object(payload, (), 0)
        if set(self._disclosures) - self._seen:
            # RFC 9901 §7.1 step 5: every Disclosure must be referenced, directly or through
            # another Disclosure.
            raise SdJwtError("Presentation contains a disclosure the credential does not reference")
        return claims

    def _value(self, value: Any, path: tuple[Any, ...], depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise SdJwtError("Credential nests its claims too deeply")
        if isinstance(value, dict):
            return self._object(value, path, depth)
        if isinstance(value, list):
            return self._array(value, path, depth)
        return value

    def _object(self, obj: dict[str, Any], path: tuple[Any, ...], depth: int) -> dict[str, Any]:
        if ARRAY_DIGEST in obj:
            # RFC 9901 §4.1: "..." only ever appears as the single key of an array element.
            raise SdJwtError("Credential uses the reserved claim name ... outside an array")
        if path and "_sd_alg" in obj:
            # RFC 9901 §4.1.1: _sd_alg MUST NOT be used in any nested object.
            raise SdJwtError("Credential declares _sd_alg below the top level")
        result = {
            name: self._value(value, (*path, name), depth + 1)
            for name, value in obj.items()
            if name != SD
        }
        for digest in _digest_list(obj.get(SD, [])):
            disclosure = self._take(digest)
            if disclosure is None:
                continue  # a decoy, or a claim the holder chose not to show (§4.2.5)
            self._insert(result, disclosure, path, depth)
        return result

    def _insert(
        self, result: dict[str, Any], disclosure: Disclosure, path: tuple[Any, ...], depth: int
    ) -> None:
        name = disclosure.name
        if name is None:
            raise SdJwtError("An array element disclosure is referenced as an object property")
        if name in result:
            # RFC 9901 §7.1 step 3.3.2.3: the name must not already exist at that level.
            raise SdJwtError("A disclosed claim clashes with a claim of the same name")
        self._refuse_if_protected((*path, name))
        result[name] = self._value(disclosure.value, (*path, name), depth + 1)

    def _array(self, array: list[Any], path: tuple[Any, ...], depth: int) -> list[Any]:
        result = []
        for index, element in enumerate(array):
            if not (isinstance(element, dict) and ARRAY_DIGEST in element):
                result.append(self._value(element, (*path, index), depth + 1))
                continue
            disclosure = self._take(_element_digest(element))
            if disclosure is None:
                continue  # RFC 9901 §7.1 step 3.4: undisclosed elements are removed
            if disclosure.name is not None:
                raise SdJwtError("An object property disclosure is referenced as an array element")
            self._refuse_if_protected((*path, index))
            result.append(self._value(disclosure.value, (*path, index), depth + 1))
        return result

    def _take(self, digest: str) -> Disclosure | None:
        if digest in self._seen:
            # RFC 9901 §4.1 and §7.1 step 4: a digest (decoys included) appears at most once.
            raise SdJwtError("The same digest appears more than once in the credential")
        self._seen.add(digest)
        return self._disclosures.get(digest)

    def _refuse_if_protected(self, path: tuple[Any, ...]) -> None:
        if path[0] in self._protected:
            raise SdJwtError(f"Credential discloses {path[0]} selectively, which SD-JWT VC forbids")


def _digest_list(value: Any) -> list[str]:
    # RFC 9901 §4.2.4.1: "_sd" MUST refer to an array of strings.
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SdJwtError("Credential has an _sd claim that is not a list of digests")
    return value


def _element_digest(element: dict[str, Any]) -> str:
    # RFC 9901 §4.2.4.2: {"...": "<digest>"} and no other keys.
    if len(element) != 1 or not isinstance(element[ARRAY_DIGEST], str):
        raise SdJwtError("Credential has a malformed array element digest")
    return element[ARRAY_DIGEST]
