"""The device key an mdoc's MSO certifies: an EC2 COSE_Key (RFC 9053 7.1) on the curves ISO
18013-5 9.1.5 allows among those this service verifies (P-256, P-384, P-521)."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from app.mdoc.errors import MdocError

KTY, KTY_EC2, CRV, X, Y = 1, 2, -1, -2, -3
CURVES: dict[int, ec.EllipticCurve] = {1: ec.SECP256R1(), 2: ec.SECP384R1(), 3: ec.SECP521R1()}


def ec2_public_key(cose_key: Any) -> ec.EllipticCurvePublicKey:
    """An EC2 COSE_Key with uncompressed x and y coordinates."""
    if not isinstance(cose_key, dict) or cose_key.get(KTY) != KTY_EC2:
        raise MdocError("Device key is not an EC2 COSE key")
    crv = cose_key.get(CRV)
    curve = None if isinstance(crv, bool) else CURVES.get(crv)
    if curve is None:
        raise MdocError("Device key curve is not P-256, P-384 or P-521")
    size = (curve.key_size + 7) // 8
    x, y = cose_key.get(X), cose_key.get(Y)
    if not isinstance(x, bytes) or not isinstance(y, bytes) or len(x) != size or len(y) != size:
        raise MdocError("Device key coordinates are malformed")
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(curve, b"\x04" + x + y)
    except ValueError:
        raise MdocError("Device key is not a point on its curve") from None
