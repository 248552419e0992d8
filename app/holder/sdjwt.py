"""Reading an SD-JWT (RFC 9901) as a holder: the issuer-signed JWT, its disclosures and which
claim each one discloses, so that a presentation can carry exactly the requested ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.holder.jose import JoseError, b64url_decode, decode_segment, sha256_b64url


@dataclass(frozen=True)
class Disclosure:
    encoded: str
    name: str | None  # None for an array element disclosure
    value: Any

    @property
    def digest(self) -> str:
        """RFC 9901 §4.2.3: sha-256 over the disclosure's base64url text as received."""
        return sha256_b64url(self.encoded)


@dataclass(frozen=True)
class SdJwt:
    issuer_jwt: str
    header: dict[str, Any]
    payload: dict[str, Any]
    disclosures: tuple[Disclosure, ...]

    def by_digest(self) -> dict[str, Disclosure]:
        return {disclosure.digest: disclosure for disclosure in self.disclosures}

    def claims(self) -> dict[str, Any]:
        """The payload with every disclosure applied: what the holder could show."""
        return _resolve(self.payload, self.by_digest())

    def presentation(self, chosen: list[Disclosure]) -> str:
        """``<issuer-jwt>~<disclosure>~...~``, the form a key binding JWT's ``sd_hash`` covers."""
        return "".join([self.issuer_jwt, "~", *(d.encoded + "~" for d in chosen)])


def parse(compact: str) -> SdJwt:
    if not isinstance(compact, str) or "~" not in compact:
        raise JoseError("the credential is not an SD-JWT")
    parts = compact.split("~")
    issuer_jwt, encoded = parts[0], [part for part in parts[1:-1] if part]
    if parts[-1]:
        raise JoseError("the credential ends in a key binding JWT: a holder keeps it without one")
    segments = issuer_jwt.split(".")
    if len(segments) != 3:
        raise JoseError("the issuer-signed part is not a compact JWS")
    header, payload = decode_segment(segments[0]), decode_segment(segments[1])
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise JoseError("the issuer-signed JWT is not made of JSON objects")
    return SdJwt(issuer_jwt, header, payload, tuple(_disclosure(item) for item in encoded))


def _disclosure(encoded: str) -> Disclosure:
    try:
        content = json.loads(b64url_decode(encoded))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JoseError("a disclosure is not JSON") from exc
    if isinstance(content, list) and len(content) == 3 and isinstance(content[1], str):
        return Disclosure(encoded, content[1], content[2])
    if isinstance(content, list) and len(content) == 2:
        return Disclosure(encoded, None, content[1])
    raise JoseError("a disclosure is not a [salt, name, value] or [salt, value] array")


def _resolve(value: Any, disclosures: dict[str, Disclosure]) -> Any:
    if isinstance(value, dict):
        resolved = {
            name: _resolve(item, disclosures)
            for name, item in value.items()
            if name not in ("_sd", "_sd_alg")
        }
        for digest in value.get("_sd", []):
            disclosure = disclosures.get(digest)
            if disclosure is not None and disclosure.name is not None:
                resolved[disclosure.name] = _resolve(disclosure.value, disclosures)
        return resolved
    if isinstance(value, list):
        items = []
        for item in value:
            if isinstance(item, dict) and set(item) == {"..."}:
                disclosure = disclosures.get(item["..."])
                if disclosure is not None:
                    items.append(_resolve(disclosure.value, disclosures))
            else:
                items.append(_resolve(item, disclosures))
        return items
    return value


def select(sd_jwt: SdJwt, paths: list[list[Any]]) -> tuple[list[Disclosure], list[list[Any]]]:
    """The disclosures that reveal each claims path (DCQL §7, OpenID4VP 1.0), and the paths the
    credential cannot satisfy. Revealing a nested claim reveals the objects that hold it."""
    digests = sd_jwt.by_digest()
    chosen: dict[str, Disclosure] = {}
    missing = []
    for path in paths:
        found = _walk(sd_jwt.payload, list(path), digests)
        if found is None:
            missing.append(path)
        else:
            chosen.update((d.digest, d) for d in found)
    order = [d for d in sd_jwt.disclosures if d.digest in chosen]
    return order, missing


def _walk(node: Any, path: list[Any], digests: dict[str, Disclosure]) -> list[Disclosure] | None:
    if not path:
        return _all_below(node, digests)
    step, rest = path[0], path[1:]
    if isinstance(node, dict) and isinstance(step, str):
        if step in node and step not in ("_sd", "_sd_alg"):
            return _walk(node[step], rest, digests)
        for digest in node.get("_sd", []):
            disclosure = digests.get(digest)
            if disclosure is not None and disclosure.name == step:
                below = _walk(disclosure.value, rest, digests)
                return None if below is None else [disclosure, *below]
        return None
    if isinstance(node, list) and (step is None or isinstance(step, int)):
        return _walk_array(node, step, rest, digests)
    return None


def _walk_array(
    node: list[Any], step: int | None, rest: list[Any], digests: dict[str, Disclosure]
) -> list[Disclosure] | None:
    """``null`` selects every element (DCQL claims path pointer), an integer one element."""
    indexes = range(len(node)) if step is None else [step]
    chosen: list[Disclosure] = []
    for index in indexes:
        if not 0 <= index < len(node):
            return None
        item = node[index]
        if isinstance(item, dict) and set(item) == {"..."}:
            disclosure = digests.get(item["..."])
            if disclosure is None:
                continue
            below = _walk(disclosure.value, rest, digests)
            if below is not None:
                chosen += [disclosure, *below]
        else:
            below = _walk(item, rest, digests)
            if below is not None:
                chosen += below
    return chosen


def _all_below(node: Any, digests: dict[str, Disclosure]) -> list[Disclosure]:
    """A claim is requested whole: every disclosure inside its value goes with it."""
    found: list[Disclosure] = []
    if isinstance(node, dict):
        for digest in node.get("_sd", []):
            disclosure = digests.get(digest)
            if disclosure is not None:
                found += [disclosure, *_all_below(disclosure.value, digests)]
        for name, item in node.items():
            if name not in ("_sd", "_sd_alg"):
                found += _all_below(item, digests)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict) and set(item) == {"..."}:
                disclosure = digests.get(item["..."])
                if disclosure is not None:
                    found += [disclosure, *_all_below(disclosure.value, digests)]
            else:
                found += _all_below(item, digests)
    return found
