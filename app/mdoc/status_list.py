"""The issuer's Token Status List in its CWT form (draft-ietf-oauth-status-list §5.2), for
the mdocs the issuer signs: the same bits as the JWT form (``app.oid4vci.statuslist``), signed
as a tagged COSE_Sign1 by the organization's document signer."""

from __future__ import annotations

from collections.abc import Iterable

import cbor2
from cryptography.hazmat.primitives.asymmetric import ec

from app.mdoc.issuing import tagged_sign1
from app.oid4vci.statuslist import STATUS_LIST_CWT_TYPE, compressed_bits

# CWT claim keys (RFC 8392 §4; Token Status List §5.2, §12.2) and COSE header labels.
_SUB, _EXP, _IAT, _TTL, _STATUS_LIST, _TYP, _X5CHAIN = 2, 4, 6, 65534, 65533, 16, 33


def sign_status_list_cwt(
    *,
    private_key: ec.EllipticCurvePrivateKey,
    certificate_der: bytes,
    uri: str,
    revoked: Iterable[int],
    size: int,
    issued_at: int,
    ttl: int,
    expires_at: int,
) -> bytes:
    """§5.2: the same list as a CWT (a tagged COSE_Sign1), signed by the mdoc document signer
    whose certificate goes in ``x5chain``: §11.3 lets a verifier accept a list signed by the
    credential's own signer, so an mdoc reader needs no other key."""
    claims = {
        _SUB: uri,
        _IAT: issued_at,
        _EXP: expires_at,
        _TTL: ttl,
        _STATUS_LIST: {"bits": 1, "lst": compressed_bits(revoked, size)},
    }
    return tagged_sign1(
        private_key,
        cbor2.dumps(claims),
        {_X5CHAIN: certificate_der},
        {_TYP: STATUS_LIST_CWT_TYPE},
    )
