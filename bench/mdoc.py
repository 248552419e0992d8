"""In-process mdoc verification for ``make bench``: ``verify_device_response`` against its
floor, the three ES256 verifications no mdoc verifier can skip (the issuer's signature over
the MSO, the device's over the session transcript, the IACA's over the document signer
certificate).

The device response is built here, by the letter of ISO/IEC 18013-5 (an mdoc of six elements
with an OpenID4VP handover): a benchmark measures the verifier, and the tests, not this file,
check it against an independent issuer.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.x509.oid import NameOID

try:
    import presenting
except ModuleNotFoundError:  # imported by the tests as bench.mdoc
    from bench import presenting

DOCTYPE = "org.iso.18013.5.1.mDL"
NAMESPACE = "org.iso.18013.5.1"
ELEMENTS = {
    "family_name": "Mustermann",
    "given_name": "Erika",
    "birth_date": cbor2.CBORTag(1004, "1984-01-26"),
    "issuing_country": "DE",
    "document_number": "T22000129",
    "age_over_18": True,
}
CLIENT_ID = "redirect_uri:http://127.0.0.1/oid4vp/responses/bench"
RESPONSE_URI = "http://127.0.0.1/oid4vp/responses/bench"


def _certificate(name: str, key: ec.EllipticCurvePrivateKey, issuer: tuple | None, ca: bool):
    now = datetime.now(UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    signer_name, signer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(signer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    return builder.sign(signer_key, hashes.SHA256())


def _sign1(key, payload: bytes | None, to_sign_payload: bytes, unprotected: dict) -> list:
    protected = cbor2.dumps({1: -7})
    to_sign = cbor2.dumps(["Signature1", protected, b"", to_sign_payload])
    r, s = decode_dss_signature(key.sign(to_sign, ec.ECDSA(hashes.SHA256())))
    return [protected, unprotected, payload, r.to_bytes(32, "big") + s.to_bytes(32, "big")]


def _cose_key(key: ec.EllipticCurvePrivateKey) -> dict:
    numbers = key.public_key().public_numbers()
    return {1: 2, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}


def _signed(key, sign1: list, payload: bytes) -> tuple[Any, bytes, bytes]:
    """(key, DER signature, message): one COSE_Sign1 as a raw verification sees it."""
    message = cbor2.dumps(["Signature1", sign1[0], b"", payload])
    r = int.from_bytes(sign1[3][:32], "big")
    s = int.from_bytes(sign1[3][32:], "big")
    return key, encode_dss_signature(r, s), message


def device_response(transcript: bytes) -> tuple[str, x509.Certificate, list]:
    """A base64url DeviceResponse over ``transcript``, its IACA root, and the three
    signatures every verifier checks (issuer, device, certificate) as raw verifications."""
    iaca_key, signer_key, device_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    iaca = _certificate("Bench IACA", iaca_key, None, ca=True)
    signer = _certificate("Bench Document Signer", signer_key, (iaca.subject, iaca_key), ca=False)
    items = [
        cbor2.CBORTag(
            24,
            cbor2.dumps(
                {
                    "digestID": index,
                    "random": secrets.token_bytes(16),
                    "elementIdentifier": name,
                    "elementValue": value,
                }
            ),
        )
        for index, (name, value) in enumerate(ELEMENTS.items())
    ]
    now = datetime.now(UTC).replace(microsecond=0)
    digests = {n: hashlib.sha256(cbor2.dumps(item)).digest() for n, item in enumerate(items)}
    mso = {
        "version": "1.0",
        "digestAlgorithm": "SHA-256",
        "valueDigests": {NAMESPACE: digests},
        "deviceKeyInfo": {"deviceKey": _cose_key(device_key)},
        "docType": DOCTYPE,
        "validityInfo": {
            "signed": now,
            "validFrom": now - timedelta(hours=1),
            "validUntil": now + timedelta(days=30),
        },
    }
    mso_bytes = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(mso)))
    chain = {33: signer.public_bytes(serialization.Encoding.DER)}
    issuer_auth = _sign1(signer_key, mso_bytes, mso_bytes, chain)
    device_namespaces = cbor2.CBORTag(24, cbor2.dumps({}))
    authentication = cbor2.dumps(
        cbor2.CBORTag(
            24,
            cbor2.dumps(
                ["DeviceAuthentication", cbor2.loads(transcript), DOCTYPE, device_namespaces]
            ),
        )
    )
    device_signature = _sign1(device_key, None, authentication, {})
    document = {
        "docType": DOCTYPE,
        "issuerSigned": {"nameSpaces": {NAMESPACE: items}, "issuerAuth": issuer_auth},
        "deviceSigned": {
            "nameSpaces": device_namespaces,
            "deviceAuth": {"deviceSignature": device_signature},
        },
    }
    response = {"version": "1.0", "documents": [document], "status": 0}
    entry = base64.urlsafe_b64encode(cbor2.dumps(response)).rstrip(b"=").decode()
    certificate = (
        iaca_key.public_key(),
        signer.signature,
        signer.tbs_certificate_bytes,
    )
    checks = [
        _signed(signer_key.public_key(), issuer_auth, mso_bytes),
        _signed(device_key.public_key(), device_signature, authentication),
        certificate,
    ]
    return entry, iaca, checks


def in_process_operations(
    first_seen: bool = False,
) -> tuple[Callable[[], object], Callable[[], object]]:
    """``(floor, verify)``: the three raw ES256 verifications, and ``verify_device_response``
    of the same response (base64url and CBOR decoding, the chain, the MSO and its digests,
    the device signature over the transcript), with the anchor already loaded. Validated
    chains and what a document signer certificate says are kept, so the same document signer
    is walked and read once; ``first_seen`` forgets both before each verification, as for a
    signer not seen before."""
    from app.mdoc import openid4vp_session_transcript, verify_device_response
    from app.mdoc.device_response import KNOWN_SIGNERS
    from app.trust.x5c import VALIDATED_PATHS

    transcript = openid4vp_session_transcript(
        CLIENT_ID, secrets.token_urlsafe(24), None, RESPONSE_URI
    )
    entry, iaca, checks = device_response(transcript)
    algorithm = ec.ECDSA(hashes.SHA256())

    def floor() -> None:
        for key, signature, message in checks:
            key.verify(signature, message, algorithm)

    def verify() -> object:
        if first_seen:
            VALIDATED_PATHS.clear()
            KNOWN_SIGNERS.clear()
        return verify_device_response(
            entry, doctype=DOCTYPE, transcript=transcript, anchors=[iaca], now=datetime.now(UTC)
        )

    return floor, verify


def in_process_rounds(
    rounds: int, seconds: float = 0.5, first_seen: bool = False
) -> presenting.InProcess:
    """``floor | verify | floor | ... | floor``, as the SD-JWT figure is measured."""
    return presenting.in_process_rounds(rounds, seconds, in_process_operations(first_seen))


def iso_mdoc_operations() -> tuple[Callable[[], object], Callable[[], object]]:
    """``(floor, verify)`` for ``org-iso-mdoc`` (ISO/IEC 18013-7 Annex C): one HPKE open of
    the sealed response with a key already loaded plus the three raw ES256 verifications, and
    what the service does with the response (derive the request's recipient key, rebuild its
    EncryptionInfo and transcript, open, ``verify_device_response``)."""
    import uuid

    from pyhpke import KEMKey

    from app.mdoc import verify_device_response
    from app.mdoc.annex_c import SUITE, b64url, encryption_info
    from app.mdoc.annex_c import session_transcript as annex_c_transcript
    from app.presentations.iso_mdoc import opened_presentation, recipient_key

    secret, request_id, nonce = b"bench secret", uuid.uuid4(), secrets.token_urlsafe(24)
    origin = "http://127.0.0.1"
    key = recipient_key(secret, request_id)
    transcript = annex_c_transcript(encryption_info(nonce.encode(), key.public_key()), origin)
    entry, iaca, checks = device_response(transcript)
    raw = base64.urlsafe_b64decode(entry + "=" * (-len(entry) % 4))
    enc, sender = SUITE.create_sender_context(
        KEMKey.from_pyca_cryptography_key(key.public_key()), info=transcript
    )
    cipher_text = sender.seal(raw, aad=b"")
    response = b64url(cbor2.dumps(["dcapi", {"enc": enc, "cipherText": cipher_text}]))
    recipient = KEMKey.from_pyca_cryptography_key(key)
    algorithm = ec.ECDSA(hashes.SHA256())

    def floor() -> None:
        SUITE.create_recipient_context(enc, recipient, info=transcript).open(cipher_text, aad=b"")
        for public, signature, message in checks:
            public.verify(signature, message, algorithm)

    def verify() -> object:
        opened, bound = opened_presentation(
            request_id, nonce, response, origin=origin, secret=secret
        )
        return verify_device_response(
            opened, doctype=DOCTYPE, transcript=bound, anchors=[iaca], now=datetime.now(UTC)
        )

    return floor, verify


def iso_mdoc_rounds(rounds: int, seconds: float = 0.5) -> presenting.InProcess:
    """``floor | verify | floor | ... | floor`` for an org-iso-mdoc response."""
    return presenting.in_process_rounds(rounds, seconds, iso_mdoc_operations())
