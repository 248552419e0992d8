"""Make an mdoc's issuer-signed part (ISO/IEC 18013-5 9.1.2), as OpenID4VCI 1.0 Appendix A.2
delivers it: the base64url CBOR of an ``IssuerSigned``.

Every element becomes an ``IssuerSignedItem`` with its own digest ID and a random salt of 32
bytes (9.1.2.5 asks for at least 16), so a digest tells nothing of its value. The Mobile
Security Object (9.1.2.4) holds the SHA-256 digest of each item as it is sent (tag 24 and
all), the holder's device key, the validity window and, as Token Status List §6.3 and ISO/IEC
18013-5 2nd edition name it, the ``status`` entry of the credential in its issuer's list. The
MSO is signed as a COSE_Sign1 (ES256 from the protected header, the document signer
certificate in ``x5chain``, label 33, unprotected, as 9.1.2.4 places it). Pure: no database.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding

from app.cose import ALG, SIGN1_TAG, X5CHAIN
from app.oid4vci.jose import b64url, es256_signature
from app.sdjwt import SdJwtError, jwk_to_public_key

DATA_ITEM = 24
TDATE = 0
ES256 = -7
SALT_BYTES = 32
MSO_VERSION = "1.0"


def cose_key(jwk: Mapping[str, Any]) -> dict[int, Any]:
    """The EC2 COSE_Key (RFC 9053 7.1) of a P-256 JWK: the device key from the wallet's
    proof. Any other key is refused: 9.1.5 allows more curves, the proof types allow ES256."""
    try:
        public = jwk_to_public_key(dict(jwk))
    except SdJwtError as exc:
        raise ValueError(exc.reason) from exc
    if not isinstance(public, ec.EllipticCurvePublicKey) or not isinstance(
        public.curve, ec.SECP256R1
    ):
        raise ValueError("The device key of an mdoc is a P-256 key")
    numbers = public.public_numbers()
    return {1: 2, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}


def tdate(moment: datetime) -> cbor2.CBORTag:
    """RFC 8949 3.4.1 date-time, whole seconds in UTC as 9.1.2.4 requires."""
    return cbor2.CBORTag(TDATE, moment.strftime("%Y-%m-%dT%H:%M:%SZ"))


def issue_mdoc(
    *,
    private_key: ec.EllipticCurvePrivateKey,
    certificate: x509.Certificate,
    doctype: str,
    namespaces: Mapping[str, Mapping[str, Any]],
    device_jwk: Mapping[str, Any],
    signed: datetime,
    valid_until: datetime,
    status: Mapping[str, Any] | None = None,
) -> str:
    """The base64url ``IssuerSigned`` for ``namespaces`` (namespace -> element -> value),
    bound to ``device_jwk``, signed by the document signer ``private_key``/``certificate``."""
    digest_ids = iter(_shuffled_ids(sum(len(elements) for elements in namespaces.values())))
    items: dict[str, list[cbor2.CBORTag]] = {}
    digests: dict[str, dict[int, bytes]] = {}
    for namespace, elements in namespaces.items():
        for identifier, value in elements.items():
            digest_id = next(digest_ids)
            item = cbor2.CBORTag(
                DATA_ITEM,
                cbor2.dumps(
                    {
                        "digestID": digest_id,
                        "random": secrets.token_bytes(SALT_BYTES),
                        "elementIdentifier": identifier,
                        "elementValue": value,
                    }
                ),
            )
            items.setdefault(namespace, []).append(item)
            digests.setdefault(namespace, {})[digest_id] = hashlib.sha256(
                cbor2.dumps(item)
            ).digest()
    mso: dict[str, Any] = {
        "version": MSO_VERSION,
        "digestAlgorithm": "SHA-256",
        "valueDigests": digests,
        "deviceKeyInfo": {"deviceKey": cose_key(device_jwk)},
        "docType": doctype,
        "validityInfo": {
            "signed": tdate(signed),
            "validFrom": tdate(signed),
            "validUntil": tdate(valid_until),
        },
    }
    if status is not None:
        mso["status"] = dict(status)
    payload = cbor2.dumps(cbor2.CBORTag(DATA_ITEM, cbor2.dumps(mso)))
    issuer_auth = sign1(private_key, payload, {X5CHAIN: certificate.public_bytes(Encoding.DER)})
    return b64url(cbor2.dumps({"nameSpaces": items, "issuerAuth": issuer_auth}))


def sign1(
    private_key: ec.EllipticCurvePrivateKey,
    payload: bytes,
    unprotected: Mapping[int, Any],
    protected: Mapping[int, Any] | None = None,
) -> list[Any]:
    """A COSE_Sign1 array (RFC 9052 4.2), ES256 in the protected header, untagged as
    ``IssuerAuth`` is; ``cbor2.CBORTag(18, ...)`` it where a tagged one is wanted."""
    protected_bytes = cbor2.dumps({ALG: ES256, **(protected or {})})
    to_be_signed = cbor2.dumps(["Signature1", protected_bytes, b"", payload])
    return [protected_bytes, dict(unprotected), payload, es256_signature(private_key, to_be_signed)]


def tagged_sign1(
    private_key: ec.EllipticCurvePrivateKey,
    payload: bytes,
    unprotected: Mapping[int, Any],
    protected: Mapping[int, Any] | None = None,
) -> bytes:
    """The CBOR bytes of a tagged COSE_Sign1 (tag 18), as a CWT travels alone."""
    return cbor2.dumps(
        cbor2.CBORTag(SIGN1_TAG, sign1(private_key, payload, unprotected, protected))
    )


def _shuffled_ids(count: int) -> list[int]:
    """Digest IDs 0..count-1 in random order, so an ID does not give away an element's place
    (9.1.2.5: digest IDs should be unrelated to the elements)."""
    ids = list(range(count))
    for i in range(count - 1, 0, -1):
        j = secrets.randbelow(i + 1)
        ids[i], ids[j] = ids[j], ids[i]
    return ids
