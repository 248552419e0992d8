"""Sign the issuer's Token Status List (draft-ietf-oauth-status-list §5.1; its CWT form §5.2,
for mdoc credentials, is signed in ``app.mdoc.status_list``).

One bit per credential (VALID 0, INVALID 1): revocation is final, so suspension's second bit
would only double the list. The list is served as a signed ``statuslist+jwt`` a verifier
checks against the same issuer keys as the credentials.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from app.oid4vci.jose import b64url, sign_es256_jwt

STATUS_LIST_TYP = "statuslist+jwt"  # Token Status List §5.1
STATUS_LIST_CWT_TYPE = "application/statuslist+cwt"  # §5.2


def sign_status_list(
    *,
    private_key: ec.EllipticCurvePrivateKey,
    kid: str,
    uri: str,
    revoked: Iterable[int],
    size: int,
    issued_at: int,
    ttl: int,
    expires_at: int,
    issuer: str | None = None,
    x5c: tuple[str, ...] = (),
) -> str:
    """The Status List Token for ``uri`` with the entries in ``revoked`` set to INVALID.

    ``sub`` is the list's own URI (§5.1: it must equal the ``uri`` credentials point at);
    ``ttl`` tells verifiers how long to cache it, ``exp`` when to stop trusting it; ``x5c``
    is the issuer's certificate chain, as its credentials carry it (HAIP 1.0 §6.1.1).
    """
    payload: dict[str, Any] = {"sub": uri, "iat": issued_at, "exp": expires_at, "ttl": ttl}
    if issuer is not None:
        payload = {"iss": issuer, **payload}
    payload["status_list"] = one_bit_status_list(revoked, size)
    return sign_es256_jwt(
        typ=STATUS_LIST_TYP, kid=kid, payload=payload, private_key=private_key, x5c=x5c
    )


def one_bit_status_list(revoked: Iterable[int], size: int) -> dict[str, Any]:
    """The ``status_list`` claim (§4.1, §4.2) of ``size`` one-bit entries, ``revoked`` set."""
    return {"bits": 1, "lst": b64url(compressed_bits(revoked, size))}


def compressed_bits(revoked: Iterable[int], size: int) -> bytes:
    """The ZLIB-compressed bytes of ``size`` one-bit entries with ``revoked`` set.

    The bytes ``app.statuslist.encoding.encode_status_list`` makes from a list of ``size``
    values (entry ``idx`` at bit ``idx % 8`` of byte ``idx // 8``, ZLIB at level 9), set bit by
    bit: a list of 131,072 entries is signed on every change, and only its revoked entries
    need touching.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError("A status list has at least one entry")
    data = bytearray((size + 7) // 8)
    for idx in revoked:
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < size:
            raise ValueError(f"Status index {idx!r} is outside a list of {size} entries")
        data[idx >> 3] |= 1 << (idx & 7)
    return zlib.compress(bytes(data), 9)
