"""SessionTranscript for mdoc presentations over OpenID4VP (OpenID4VP 1.0 Annex B.2.6).

The device signs its response over this transcript, so it binds the response to one request:
``SessionTranscript = [null, null, Handover]`` (ISO 18013-5 9.1.5.1 with no device engagement
and no reader key), ``Handover = [name, sha256(cbor(HandoverInfo))]``. The verifier rebuilds it
from what it sent; it is never read from the response.
"""

from __future__ import annotations

import hashlib

import cbor2


def openid4vp_session_transcript(
    client_id: str, nonce: str, jwk_thumbprint: bytes | None, response_uri: str
) -> bytes:
    """B.2.6.1, redirects and QR codes: OpenID4VPHandoverInfo = [clientId, nonce,
    jwkThumbprint, responseUri]. ``client_id`` carries its prefix; ``jwk_thumbprint`` is the
    RFC 7638 SHA-256 thumbprint of the key the response was encrypted to, else None."""
    return _transcript("OpenID4VPHandover", [client_id, nonce, jwk_thumbprint, response_uri])


def dc_api_session_transcript(origin: str, nonce: str, jwk_thumbprint: bytes | None) -> bytes:
    """B.2.6.2, the browser Digital Credentials API: OpenID4VPDCAPIHandoverInfo = [origin,
    nonce, jwkThumbprint], the origin as the browser asserted it (no "origin:" prefix)."""
    return _transcript("OpenID4VPDCAPIHandover", [origin, nonce, jwk_thumbprint])


def _transcript(name: str, info: list[object]) -> bytes:
    info_hash = hashlib.sha256(cbor2.dumps(info)).digest()
    return cbor2.dumps([None, None, [name, info_hash]])
