"""Who this deployment is to wallets, settled once when the application is built.

The verifier identity (client identifier prefix, request signing, response encryption) comes
from configuration; a misconfigured certificate stops the application from starting instead
of producing requests every wallet refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from flask import Flask, current_app

from app import clock
from app.hardware_keys import TokenKeyError, key_label_from_uri, open_token
from app.issuance import settings as issuing_settings
from app.issuance.own import own_issuers
from app.mdoc.annex_c import ReaderIdentity
from app.oid4vp.client import (
    PREFIXES,
    REDIRECT_URI,
    X509_SAN_DNS,
    ClientConfigError,
    ClientIdentity,
    RedirectUriClient,
    load_x509_client,
)
from app.oid4vp.encryption import DC_API_KEY_INFO, ResponseEncryption
from app.oid4vp.google_registrar import RegistrarCA, RegistrarError, read_registrar
from app.oid4vp.profile import HAIP, PROFILES, haip_problems
from app.oid4vp.request import REQUEST_URI_METHODS
from app.oid4vp.verifier import Verifier
from app.statuslist import StatusResult, check_kept
from app.verifications import link_secret
from app.verifications import profile as verification_profile
from app.verifications import relying_party as verification_relying_party
from app.verifier_identity import registration
from app.verifier_identity.operations import check_relying_party

# DC_API_RESPONSE_MODE: how wallets answer over the Digital Credentials API (Appendix A.3).
DC_API_RESPONSE_MODES = ("dc_api.jwt", "dc_api")
# Where the application keeps its Verifier (``app.extensions``).
VERIFIER_EXTENSION = "oid4vp_verifier"
# Where it keeps the org-iso-mdoc reader certificate and key, or None.
READER_EXTENSION = "iso_mdoc_reader"
# Where it keeps the Google Wallet registrar CA (``GOOGLE_REGISTRAR_*``), or None.
REGISTRAR_EXTENSION = "google_wallet_registrar"


def register_verifier(app: Flask) -> None:
    verifier = verifier_from_config(app.config)
    check_profile(app.config, verifier)
    app.extensions[VERIFIER_EXTENSION] = verifier
    app.extensions[READER_EXTENSION] = reader_from_config(app.config)
    app.extensions[REGISTRAR_EXTENSION] = registrar_from_config(app.config)
    # The verification domain reads the profile as it is when asked (several applications
    # may live in one process): HAIP refuses verifications of formats it does not cover.
    verification_profile.provide(lambda: current_app.config.get("VERIFIER_PROFILE") or "")
    registration.provide_required(
        lambda: bool(current_app.config.get("REGISTRATION_CERTIFICATE_REQUIRED"))
    )
    # An intermediary's verification names a relying party it holds an access certificate for.
    verification_relying_party.provide(check_relying_party)


def check_issuing(config: Mapping[str, Any]) -> None:
    """The issuing settings read once as the application is built, so a wrong
    ``ISSUER_BATCH_SIZE``, ``ISSUER_DPOP`` or ``ISSUER_COUNTRY`` stops the start with a
    message naming it (``ValueError``) instead of failing every issuer request later."""
    issuing_settings.from_config(config)


def register_issuing(app: Flask) -> None:
    """The domain reads the running application's issuing settings through this provider
    (several applications may live in one process, and their configuration is read as it is
    when asked, like the database session's)."""
    issuing_settings.provide(lambda: issuing_settings.from_config(current_app.config))
    # The verifications' link secrets are sealed under the same configured secret.
    link_secret.provide(lambda: issuing_settings.current().secret)


def kept_status_check() -> Callable[[dict[str, Any], datetime], StatusResult]:
    """How the running application reads a kept status reference again: with the fetcher and
    trust anchors its presentations are checked with, and its own issuers' lists from the
    database (under ``PUBLIC_URL``, or wherever a kept reference marks them)."""
    fetcher = current_app.extensions["fetcher"]
    anchors = current_app.extensions["trust_anchors"]
    own = own_issuers(current_app.config["PUBLIC_URL"])
    return lambda kept, now: check_kept(kept, fetcher=fetcher, anchors=anchors, now=now, own=own)


def verifier_from_config(config: Mapping[str, Any]) -> Verifier:
    """The client identifier prefix (see ``client_from_config``), how links pass requests,
    encrypted responses when ``RESPONSE_ENCRYPTION`` is on, and over the browser API unless
    ``DC_API_RESPONSE_MODE=dc_api`` (keys derived from SECRET_KEY)."""
    secret = str(config["SECRET_KEY"]).encode("utf-8")
    encryption = None
    if config.get("RESPONSE_ENCRYPTION"):
        encryption = ResponseEncryption(secret)
    dc_api_mode = config.get("DC_API_RESPONSE_MODE") or DC_API_RESPONSE_MODES[0]
    if dc_api_mode not in DC_API_RESPONSE_MODES:
        raise RuntimeError(
            f"DC_API_RESPONSE_MODE must be one of {', '.join(DC_API_RESPONSE_MODES)}, "
            f"not {dc_api_mode!r}"
        )
    dc_api_encryption = (
        ResponseEncryption(secret, DC_API_KEY_INFO) if dc_api_mode == "dc_api.jwt" else None
    )
    client = client_from_config(config)
    method = config.get("REQUEST_URI_METHOD") or "get"
    if method not in REQUEST_URI_METHODS:
        raise RuntimeError(
            f"REQUEST_URI_METHOD must be one of {', '.join(REQUEST_URI_METHODS)}, not {method!r}"
        )
    if method == "post" and not client.signed:
        # §5.10: what a POST to the request URI answers is a signed Request Object.
        raise RuntimeError(
            "REQUEST_URI_METHOD=post needs signed requests: set REQUEST_SIGNING_CERT_FILE and "
            "REQUEST_SIGNING_KEY_FILE"
        )
    return Verifier(
        client,
        encryption,
        bool(config.get("REQUEST_BY_REFERENCE")),
        method,
        dc_api_encryption,
    )


def check_profile(config: Mapping[str, Any], verifier: Verifier) -> None:
    """``VERIFIER_PROFILE=haip``: a configuration HAIP 1.0 does not allow stops the start,
    with every setting to change (``app.oid4vp.profile``)."""
    profile = config.get("VERIFIER_PROFILE") or ""
    if profile not in PROFILES:
        raise RuntimeError(f"VERIFIER_PROFILE must be empty or {HAIP}, not {profile!r}")
    if profile == HAIP and (problems := haip_problems(verifier)):
        raise RuntimeError("VERIFIER_PROFILE=haip: " + "; ".join(problems))


def request_signing_key(
    config: Mapping[str, Any], key_file: str, setting: str = "REQUEST_SIGNING_KEY_FILE"
) -> bytes | ec.EllipticCurvePrivateKey:
    """The PEM file's bytes, or for a ``pkcs11:object=<label>`` URI (RFC 7512) the key kept
    in the configured PKCS#11 token, which then makes every signature; ``setting`` is the
    setting that named it, for the message when it cannot be had."""
    if not key_file.startswith("pkcs11:"):
        return Path(key_file).read_bytes()
    if not (config.get("PKCS11_MODULE") and config.get("PKCS11_TOKEN_LABEL")):
        raise RuntimeError(
            f"{setting} names a PKCS#11 key: set PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN"
        )
    token = issuing_settings.token_settings(config)
    try:
        label = key_label_from_uri(key_file, token.token_label)
        return open_token(token).signing_key(label)
    except TokenKeyError as exc:
        raise RuntimeError(f"{setting}: {exc}") from None


def reader_from_config(config: Mapping[str, Any]) -> ReaderIdentity | None:
    """``READER_AUTH_CERT_FILE`` (PEM chain, leaf first) and ``READER_AUTH_KEY_FILE`` (PEM
    key or ``pkcs11:object=<label>``): what signs ``org-iso-mdoc`` requests' ``readerAuth``.
    None when neither is set; a pair that cannot sign ES256 with its leaf stops the start."""
    cert_file = config.get("READER_AUTH_CERT_FILE") or ""
    key_file = config.get("READER_AUTH_KEY_FILE") or ""
    if not cert_file and not key_file:
        return None
    if not cert_file or not key_file:
        raise RuntimeError("READER_AUTH_CERT_FILE and READER_AUTH_KEY_FILE must be set together")
    try:
        chain = tuple(x509.load_pem_x509_certificates(Path(cert_file).read_bytes()))
        key = request_signing_key(config, key_file, "READER_AUTH_KEY_FILE")
    except OSError as exc:
        raise RuntimeError(f"Reader authentication files cannot be read: {exc}") from None
    except ValueError as exc:
        raise RuntimeError(f"READER_AUTH_CERT_FILE holds no readable certificate: {exc}") from None
    if isinstance(key, bytes):
        try:
            key = serialization.load_pem_private_key(key, password=None)
        except (ValueError, TypeError) as exc:
            raise RuntimeError(f"READER_AUTH_KEY_FILE is not a PEM private key: {exc}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise RuntimeError("READER_AUTH_KEY_FILE must be a P-256 key (readerAuth is ES256)")
    if chain[0].public_key() != key.public_key():
        raise RuntimeError(
            "READER_AUTH_KEY_FILE is not the key of READER_AUTH_CERT_FILE's first certificate"
        )
    return ReaderIdentity(chain, key)


def registrar_from_config(config: Mapping[str, Any]) -> RegistrarCA | None:
    """``GOOGLE_REGISTRAR_KEY_FILE`` (PEM key or ``pkcs11:object=<label>``) and
    ``GOOGLE_REGISTRAR_CHAIN_FILE`` (PEM, the registrar CA first): the CA that issues each
    organization its Google Wallet leaf. None when neither is set; a CA that cannot issue
    (another key, not a CA, not valid now) stops the start."""
    key_file = config.get("GOOGLE_REGISTRAR_KEY_FILE") or ""
    chain_file = config.get("GOOGLE_REGISTRAR_CHAIN_FILE") or ""
    if not key_file and not chain_file:
        return None
    if not key_file or not chain_file:
        raise RuntimeError(
            "GOOGLE_REGISTRAR_KEY_FILE and GOOGLE_REGISTRAR_CHAIN_FILE must be set together"
        )
    try:
        chain = x509.load_pem_x509_certificates(Path(chain_file).read_bytes())
        key = request_signing_key(config, key_file, "GOOGLE_REGISTRAR_KEY_FILE")
    except OSError as exc:
        raise RuntimeError(f"Google registrar files cannot be read: {exc}") from None
    except ValueError as exc:
        raise RuntimeError(
            f"GOOGLE_REGISTRAR_CHAIN_FILE holds no readable certificate: {exc}"
        ) from None
    if isinstance(key, bytes):
        try:
            key = serialization.load_pem_private_key(key, password=None)
        except (ValueError, TypeError) as exc:
            raise RuntimeError(
                f"GOOGLE_REGISTRAR_KEY_FILE is not a PEM private key: {exc}"
            ) from None
    try:
        return read_registrar(key, chain, clock.now())  # type: ignore[arg-type]
    except RegistrarError as exc:
        raise RuntimeError(str(exc)) from None


def client_from_config(config: Mapping[str, Any]) -> ClientIdentity:
    """``REQUEST_CLIENT_ID_PREFIX``, or when it is unset ``x509_san_dns`` with a certificate and
    ``redirect_uri`` without; a prefix the configuration cannot honour stops the start."""
    cert_file = config.get("REQUEST_SIGNING_CERT_FILE") or ""
    key_file = config.get("REQUEST_SIGNING_KEY_FILE") or ""
    prefix = config.get("REQUEST_CLIENT_ID_PREFIX") or ""
    if prefix and prefix not in PREFIXES:
        raise RuntimeError(
            f"REQUEST_CLIENT_ID_PREFIX must be one of {', '.join(PREFIXES)}, not {prefix!r}"
        )
    if not cert_file and not key_file:
        if prefix not in ("", REDIRECT_URI):
            raise RuntimeError(
                f"REQUEST_CLIENT_ID_PREFIX={prefix} signs requests with a certificate: set "
                "REQUEST_SIGNING_CERT_FILE and REQUEST_SIGNING_KEY_FILE, or use redirect_uri"
            )
        return RedirectUriClient()
    if not cert_file or not key_file:
        raise RuntimeError(
            "REQUEST_SIGNING_CERT_FILE and REQUEST_SIGNING_KEY_FILE must be set together"
        )
    if prefix == REDIRECT_URI:
        # §5.9.3: redirect_uri requests cannot be signed, so a certificate would go unused.
        raise RuntimeError(
            "REQUEST_CLIENT_ID_PREFIX=redirect_uri cannot sign requests: unset "
            "REQUEST_SIGNING_CERT_FILE and REQUEST_SIGNING_KEY_FILE, or choose x509_san_dns or "
            "x509_hash"
        )
    try:
        chain_pem = Path(cert_file).read_bytes()
        key = request_signing_key(config, key_file)
    except OSError as exc:
        raise RuntimeError(f"Request signing files cannot be read: {exc}") from None
    try:
        return load_x509_client(
            chain_pem, key, config.get("PUBLIC_URL", ""), clock.now(), prefix or X509_SAN_DNS
        )
    except ClientConfigError as exc:
        raise RuntimeError(
            f"REQUEST_SIGNING_CERT_FILE / REQUEST_SIGNING_KEY_FILE: {exc} "
            f"(REQUEST_CLIENT_ID_PREFIX is {prefix or X509_SAN_DNS!r}, "
            f"PUBLIC_URL is {config.get('PUBLIC_URL')!r})"
        ) from None
