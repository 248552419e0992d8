"""What a wallet tells the request URI with ``request_uri_method=post`` (OpenID4VP 1.0 §5.10).

The wallet POSTs ``wallet_metadata`` (its capabilities, §10 and RFC 8414) and ``wallet_nonce``.
The nonce goes into the signed Request Object. The metadata is honoured where it changes what
the wallet can do with the request: lists we offer are narrowed to what both sides support, and
when nothing is left the request is refused with the error code OpenID4VP gives that case, so
that the wallet stops with a reason instead of failing later. Parameters not listed here are
ignored, as §5.10 and §10 require.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app import json_input
from app.oid4vp.encryption import ALG as ENCRYPTION_ALG
from app.oid4vp.formats import SD_JWT_VC
from app.oid4vp.request import AuthorizationRequest

# A wallet nonce is a random value (§5.10); anything longer than this is not one.
MAX_WALLET_NONCE = 512


class WalletMetadataError(Exception):
    """The wallet's metadata leaves nothing this request can use.

    ``error`` is the OAuth error code (§8.5): ``vp_formats_not_supported`` when the formats or
    their algorithms do not meet, ``invalid_request`` otherwise.
    """

    def __init__(self, error: str, reason: str) -> None:
        super().__init__(reason)
        self.error = error
        self.reason = reason


def invalid(reason: str) -> WalletMetadataError:
    return WalletMetadataError("invalid_request", reason)


def read_wallet_nonce(raw: str | None) -> str | None:
    """``wallet_nonce`` as posted; None when the wallet sent none."""
    if raw is None or raw == "":
        return None
    if len(raw) > MAX_WALLET_NONCE:
        raise invalid(f"wallet_nonce is longer than {MAX_WALLET_NONCE} characters")
    try:
        json_input.check_text(raw)
    except json_input.JsonInputError as exc:
        raise invalid(f"wallet_nonce: {exc}") from None
    return raw


def read_wallet_metadata(raw: str | None) -> dict[str, Any]:
    """``wallet_metadata``: a JSON object in a string (§5.10); absent means nothing is known."""
    if raw is None or raw == "":
        return {}
    try:
        metadata = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        raise invalid(f"wallet_metadata is not JSON: {exc}") from None
    if not isinstance(metadata, dict):
        raise invalid("wallet_metadata is not a JSON object")
    return metadata


def honour(request: AuthorizationRequest, metadata: dict[str, Any]) -> AuthorizationRequest:
    """``request`` as this wallet can take it, or ``WalletMetadataError`` when it cannot."""
    client = request.client
    prefixes = _strings(metadata, "client_id_prefixes_supported")
    if prefixes is not None and client.prefix not in prefixes:
        raise invalid(
            f"the wallet does not support the {client.prefix} client identifier prefix this "
            "verifier uses"
        )
    signing = _strings(metadata, "request_object_signing_alg_values_supported")
    if signing is not None and client.signing_alg not in signing:
        raise invalid(
            f"the wallet does not accept Request Objects signed with {client.signing_alg}, the "
            "only algorithm this verifier's key gives"
        )
    modes = _strings(metadata, "response_modes_supported")
    if modes is not None and request.response_mode not in modes:
        raise invalid(f"the wallet does not support the response mode {request.response_mode}")
    request = _formats(request, metadata)
    if request.encryption_jwk:
        request = _encryption(request, metadata)
    return request


def _formats(request: AuthorizationRequest, metadata: dict[str, Any]) -> AuthorizationRequest:
    """§10.1 ``vp_formats_supported``: the format asked for; for SD-JWT VC, with an issuer and
    a key binding algorithm both sides know."""
    if "vp_formats_supported" not in metadata:
        return request
    formats = metadata["vp_formats_supported"]
    if not isinstance(formats, dict):
        raise invalid("wallet_metadata.vp_formats_supported is not a JSON object")
    asked = request.credential.query_format
    if asked not in formats:
        raise WalletMetadataError(
            "vp_formats_not_supported",
            f"the wallet does not support {asked}, the format this request asks for",
        )
    parameters = formats[asked]
    if not isinstance(parameters, dict):
        raise invalid(f"wallet_metadata.vp_formats_supported.{asked} is not an object")
    if asked != SD_JWT_VC:
        return request
    sd_jwt_algs = _narrowed(request.sd_jwt_algs, parameters, "sd-jwt_alg_values")
    kb_jwt_algs = _narrowed(request.kb_jwt_algs, parameters, "kb-jwt_alg_values")
    return replace(request, sd_jwt_algs=sd_jwt_algs, kb_jwt_algs=kb_jwt_algs)


def _narrowed(ours: tuple[str, ...], parameters: dict[str, Any], name: str) -> tuple[str, ...]:
    theirs = _strings(parameters, name)
    if theirs is None:
        return ours
    both = tuple(alg for alg in ours if alg in theirs)
    if not both:
        raise WalletMetadataError(
            "vp_formats_not_supported",
            f"none of the wallet's {name} ({', '.join(theirs) or 'none'}) is one this verifier "
            f"accepts ({', '.join(ours)})",
        )
    return both


def _encryption(request: AuthorizationRequest, metadata: dict[str, Any]) -> AuthorizationRequest:
    """§5.10 and §8.3: the key agreement must be ours (ECDH-ES); the content encryptions are
    narrowed to those the wallet lists."""
    algs = _strings(metadata, "authorization_encryption_alg_values_supported")
    if algs is not None and ENCRYPTION_ALG not in algs:
        raise invalid(
            f"this verifier asks for responses encrypted with {ENCRYPTION_ALG}, which the wallet "
            "does not list in authorization_encryption_alg_values_supported"
        )
    encs = _strings(metadata, "authorization_encryption_enc_values_supported")
    if encs is None:
        return request
    both = tuple(enc for enc in request.enc_values if enc in encs)
    if not both:
        raise invalid(
            f"none of the wallet's content encryptions ({', '.join(encs) or 'none'}) is one "
            f"this verifier decrypts ({', '.join(request.enc_values)})"
        )
    return replace(request, enc_values=both)


def _strings(metadata: dict[str, Any], name: str) -> list[str] | None:
    """A metadata list of strings; None when absent (the wallet said nothing)."""
    if name not in metadata:
        return None
    value = metadata[name]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid(f"wallet_metadata.{name} is not a list of strings")
    return value
