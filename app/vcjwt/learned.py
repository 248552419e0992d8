"""What a presentation teaches about its credential's did:prism issuer: a long form.

A long-form did:prism carries its creation operation, and its short form is the SHA-256 of
that operation (``app.didcomm.prism.parse`` checks it), so a long form is self-certifying:
whoever shows it shows the DID's document as it was created, whatever the presentation around
it proves. A presentation reveals one when the credential's issuer is a long form, or when the
issuer is a short form and the credential's JWS header ``kid`` is a key of a long form of that
same short form. A short-form issuer whose credential names its key by the short form (or
names none) reveals no key at all: only a PRISM node knows the current document of a published
DID, so nothing is learnt and its key must come from the deployment (a pinned document or a
DID resolver, ``app.trust.did_prism``).

Read before, and whatever, the decision: the credential's signature is checked when it is
decided, not here; what is learnt is only ever used once staff choose to trust the issuer.
"""

from __future__ import annotations

from typing import Any

from app.didcomm import prism
from app.didcomm.errors import PrismDidError
from app.vcjwt.claims import read_jwt
from app.vcjwt.errors import VcJwtError
from app.vcjwt.presentation import ENVELOPED_PREFIX


def issuer_long_form(presentation: Any) -> str | None:
    """The long form of the did:prism issuer of the one credential in a VC-JWT presentation,
    hash checked; None when the presentation reveals none (or is not one we can read)."""
    try:
        _, vp = read_jwt(presentation, "Presentation")
        credential = _credential(vp)
        if credential is None:
            return None
        header, payload = read_jwt(credential, "Credential")
    except VcJwtError:
        return None
    issuer = _issuer(payload)
    if not isinstance(issuer, str) or not issuer.startswith(prism.PREFIX):
        return None
    kid = header.get("kid")
    candidates = [issuer]
    if isinstance(kid, str):
        candidates.append(kid.partition("#")[0])
    short = prism.PREFIX + issuer[len(prism.PREFIX) :].split(":", 1)[0]
    for candidate in candidates:
        try:
            parsed = prism.parse(candidate)
        except PrismDidError:
            continue
        if parsed.canonical == short:
            return parsed.did
    return None


def _credential(vp: dict[str, Any]) -> str | None:
    document = vp.get("vp") if isinstance(vp.get("vp"), dict) else vp
    found = document.get("verifiableCredential")
    if isinstance(found, list) and len(found) == 1:
        found = found[0]
    if isinstance(found, dict) and isinstance(found.get("id"), str):
        found = found["id"]
    if isinstance(found, str) and found.startswith(ENVELOPED_PREFIX):
        found = found[len(ENVELOPED_PREFIX) :]
    return found if isinstance(found, str) else None


def _issuer(payload: dict[str, Any]) -> Any:
    if isinstance(payload.get("iss"), str):
        return payload["iss"]
    document = payload.get("vc") if isinstance(payload.get("vc"), dict) else payload
    issuer = document.get("issuer")
    return issuer.get("id") if isinstance(issuer, dict) else issuer
