"""Configuration read from the environment, with safe defaults for local use.

Production (``VERITY_ENV=production``) refuses to start with the development secret, so a
deployment can never run on a key that is printed in this file, and without ``PUBLIC_URL``, so
no identifier it signs or checks can come from a request's Host header.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

DEVELOPMENT_SECRET = "dev-only-not-secret"
# Where development and tests are reached when PUBLIC_URL is unset: `make run`'s own address.
# Never the request's Host: issuers, audiences, status lists and certificates follow this.
DEVELOPMENT_PUBLIC_URL = "http://127.0.0.1:8000"
INSTANCE_DIR = Path(__file__).resolve().parent.parent / "instance"


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def _read(path: str) -> str:
    return Path(path).read_text() if path else ""


def from_environment() -> dict[str, Any]:
    """Build the configuration mapping the factory applies; tests pass overrides on top."""
    env = os.environ.get
    return {
        "ENV": env("VERITY_ENV", "development"),
        "SECRET_KEY": env("SECRET_KEY", DEVELOPMENT_SECRET),
        "SQLALCHEMY_DATABASE_URI": env(
            "DATABASE_URL", f"sqlite:///{INSTANCE_DIR / 'verity.sqlite3'}"
        ),
        # Public address of this deployment: the issuer identifiers, audiences, status list
        # URIs and certificates it signs and checks, and the links handed to wallets and
        # people. Required in production; empty elsewhere is DEVELOPMENT_PUBLIC_URL.
        "PUBLIC_URL": env("PUBLIC_URL", "").rstrip("/"),
        # Where the documentation site is published; the front page links to it.
        "DOCS_URL": env("DOCS_URL", ""),
        "MAX_CONTENT_LENGTH": _int("MAX_CONTENT_LENGTH", 1024 * 1024),
        "SESSION_TOKEN_HOURS": _int("SESSION_TOKEN_HOURS", 12),
        # Flask's own cookie carries only the dashboard's one-time notices.
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": env("VERITY_ENV", "development") != "development",
        "CONNECT_LINK_SECONDS": _int("CONNECT_LINK_SECONDS", 120),
        "PRESENTATION_REQUEST_SECONDS": _int("PRESENTATION_REQUEST_SECONDS", 600),
        "ORGANIZATION_CODE_DAYS": _int("ORGANIZATION_CODE_DAYS", 7),
        "TRUSTED_PROXY_COUNT": _int("TRUSTED_PROXY_COUNT", 0),
        "AUDIT_RETENTION_DAYS": _int("AUDIT_RETENTION_DAYS", 365),
        # Empty: the voucher throttle counts in the database, which every worker shares.
        "RATELIMIT_STORAGE_URI": env("RATELIMIT_STORAGE_URI", ""),
        "VOUCHER_EXCHANGE_LIMIT": env("VOUCHER_EXCHANGE_LIMIT", "10/minute"),
        "ISSUER_NONCE_LIMIT": env("ISSUER_NONCE_LIMIT", "60/minute"),
        "OIDC_ISSUER": env("OIDC_ISSUER", ""),
        "OIDC_CLIENT_ID": env("OIDC_CLIENT_ID", ""),
        "OIDC_CLIENT_SECRET": env("OIDC_CLIENT_SECRET", ""),
        "BILLING_PROVIDER": env("BILLING_PROVIDER", ""),
        "STRIPE_API_KEY": env("STRIPE_API_KEY", ""),
        "STRIPE_API_BASE": env("STRIPE_API_BASE", "https://api.stripe.com"),
        "STRIPE_PRICE_PRO": env("STRIPE_PRICE_PRO", ""),
        "STRIPE_PRICE_PREMIUM_PLUS": env("STRIPE_PRICE_PREMIUM_PLUS", ""),
        "STRIPE_WEBHOOK_SECRET": env("STRIPE_WEBHOOK_SECRET", ""),
        "REQUEST_LOG": env("REQUEST_LOG", "1") != "0",
        # Redis that every instance shares for caches (the person's page's QR drawings);
        # empty: each worker keeps its own.
        "CACHE_REDIS_URL": env("CACHE_REDIS_URL", ""),
        # GET /metrics (Prometheus) answers only a bearer of this token; empty: 404, not counted.
        "METRICS_TOKEN": env("METRICS_TOKEN", ""),
        # Issuer trust and revocation.
        "TRUST_ANCHORS_PEM": _read(env("TRUST_ANCHORS_FILE", "")),
        # Development only: let outbound fetches reach loopback and private addresses (and http).
        "TRUST_ALLOW_PRIVATE": env("TRUST_ALLOW_PRIVATE", "0") == "1",
        "FETCH_TIMEOUT": float(env("FETCH_TIMEOUT", "5")),
        # Short-form did:prism issuers (app/trust/did_prism.py): DID documents the operator
        # pins (a JSON file), and a Universal Resolver-style DID resolver for the others.
        "PINNED_DID_DOCUMENTS": _read(env("PINNED_DID_DOCUMENTS_FILE", "")),
        "DID_RESOLVER_URL": env("DID_RESOLVER_URL", "").rstrip("/"),
        # Trust sources (trusted lists, Lists of Trusted Entities, VICALs): a list past its
        # next update is refused ("refuse") or still used ("use"); flagged either way.
        "TRUST_LIST_STALE": env("TRUST_LIST_STALE", "refuse"),
        "TRUST_LIST_REFRESH_MINUTES": _int("TRUST_LIST_REFRESH_MINUTES", 60),
        "TRUST_LIST_MAX_BYTES": _int("TRUST_LIST_MAX_BYTES", 16 * 1024 * 1024),
        "TRUST_LIST_TIMEOUT": float(env("TRUST_LIST_TIMEOUT", "30")),
        # An unreachable status list fails the presentation unless this is set.
        "STATUS_FAIL_OPEN": env("STATUS_FAIL_OPEN", "0") == "1",
        # OpenID4VP direct_post.jwt: wallets encrypt responses to a per-request key.
        "RESPONSE_ENCRYPTION": env("RESPONSE_ENCRYPTION", "0") == "1",
        # Over the Digital Credentials API: dc_api.jwt (encrypted) or dc_api (plain).
        "DC_API_RESPONSE_MODE": env("DC_API_RESPONSE_MODE", "dc_api.jwt"),
        # haip: refuse to start with a configuration HAIP 1.0 does not allow.
        "VERIFIER_PROFILE": env("VERIFIER_PROFILE", ""),
        # Every verification (and policy request) is made under a registration certificate.
        "REGISTRATION_CERTIFICATE_REQUIRED": env("REGISTRATION_CERTIFICATE_REQUIRED", "0") == "1",
        # x509_san_dns: signed Request Objects: PEM chain (leaf first) and its PEM private key.
        "REQUEST_SIGNING_CERT_FILE": env("REQUEST_SIGNING_CERT_FILE", ""),
        "REQUEST_SIGNING_KEY_FILE": env("REQUEST_SIGNING_KEY_FILE", ""),
        # org-iso-mdoc (ISO/IEC 18013-7 Annex C) readerAuth: PEM chain (leaf first) and its P-256
        # key (PEM file or pkcs11:object=<label>); unset: DeviceRequests go unsigned.
        "READER_AUTH_CERT_FILE": env("READER_AUTH_CERT_FILE", ""),
        "READER_AUTH_KEY_FILE": env("READER_AUTH_KEY_FILE", ""),
        # A Google Wallet verifier registrar's CA: its P-256 key (PEM file or
        # pkcs11:object=<label>) and chain (PEM, the CA first); unset: no registrar leaves.
        "GOOGLE_REGISTRAR_KEY_FILE": env("GOOGLE_REGISTRAR_KEY_FILE", ""),
        "GOOGLE_REGISTRAR_CHAIN_FILE": env("GOOGLE_REGISTRAR_CHAIN_FILE", ""),
        # redirect_uri, x509_san_dns or x509_hash; empty: x509_san_dns with a certificate,
        # redirect_uri without (app/deployment.py refuses what the configuration cannot honour).
        "REQUEST_CLIENT_ID_PREFIX": env("REQUEST_CLIENT_ID_PREFIX", ""),
        # Unsigned requests travel by value in the link unless this is set.
        "REQUEST_BY_REFERENCE": env("REQUEST_BY_REFERENCE", "0") == "1",
        # How signed links tell wallets to fetch the Request Object: get, or post (wallet
        # metadata and nonce, OpenID4VP 1.0 §5.10).
        "REQUEST_URI_METHOD": env("REQUEST_URI_METHOD", "get"),
        # Offer emails: smtp://user:pass@host:port (?starttls=true) or smtps://...; empty logs
        # them in development (app/mail/transport.py).
        "MAIL_URL": env("MAIL_URL", ""),
        "MAIL_FROM": env("MAIL_FROM", "Verity <no-reply@localhost>"),
        "MAIL_CA_FILE": env("MAIL_CA_FILE", ""),
        "MAIL_TIMEOUT": float(env("MAIL_TIMEOUT", "10")),
        # Issuing (OpenID4VCI 1.0): the secret the issuer keys are sealed under; empty derives
        # one from SECRET_KEY, which only development accepts.
        "ISSUER_KEY_SECRET": env("ISSUER_KEY_SECRET", ""),
        "CREDENTIAL_OFFER_SECONDS": _int("CREDENTIAL_OFFER_SECONDS", 7 * 24 * 3600),
        "ISSUER_ACCESS_TOKEN_SECONDS": _int("ISSUER_ACCESS_TOKEN_SECONDS", 300),
        "ISSUER_NONCE_SECONDS": _int("ISSUER_NONCE_SECONDS", 300),
        # Authorization code flow: how long a pushed request_uri and an authorization code last.
        "ISSUER_PAR_SECONDS": _int("ISSUER_PAR_SECONDS", 300),
        "ISSUER_AUTHORIZATION_CODE_SECONDS": _int("ISSUER_AUTHORIZATION_CODE_SECONDS", 60),
        # DPoP (RFC 9449) at the issuers' token and credential endpoints: "accepted" binds a
        # token when the wallet sends a proof and keeps Bearer tokens for those that do not;
        # "required" refuses requests without one (the HAIP 1.0 setting).
        "ISSUER_DPOP": env("ISSUER_DPOP", "accepted"),
        # ISO 3166-1 alpha-2 country named in the organizations' mdoc IACA and document
        # signer certificates (ISO/IEC 18013-5 Annex B); "UT" is 18013-5's test country.
        "ISSUER_COUNTRY": env("ISSUER_COUNTRY", "UT"),
        # Batches (OpenID4VCI 1.0 §12.2.4 batch_size, at least 2): the most proofs, so copies,
        # one credential request may carry; and the most copies of one credential a wallet
        # may take in all, over every request its access token serves.
        "ISSUER_BATCH_SIZE": _int("ISSUER_BATCH_SIZE", 10),
        "ISSUER_MAX_COPIES": _int("ISSUER_MAX_COPIES", 50),
        # Where new issuer keys are made and kept: "database" (sealed under ISSUER_KEY_SECRET)
        # or "pkcs11" (generated in the PKCS#11 token below, never leaving it).
        "KEY_STORE": env("KEY_STORE", "database"),
        # The PKCS#11 token issuer keys (KEY_STORE=pkcs11) and a request-signing key named by
        # a pkcs11: URI live in: the vendor's module, the token's label and the user PIN.
        "PKCS11_MODULE": env("PKCS11_MODULE", ""),
        "PKCS11_TOKEN_LABEL": env("PKCS11_TOKEN_LABEL", ""),
        "PKCS11_PIN": env("PKCS11_PIN", ""),
        "STATUS_LIST_TTL_SECONDS": _int("STATUS_LIST_TTL_SECONDS", 300),
        "STATUS_LIST_VALID_SECONDS": _int("STATUS_LIST_VALID_SECONDS", 24 * 3600),
        # The job queue (webhook deliveries, scheduled jobs): empty for a SQLite file beside
        # the database, or redis://... (app/jobs/queue.py).
        "JOBS_QUEUE_URL": env("JOBS_QUEUE_URL", ""),
        # The queue's name inside its storage: deployments sharing one Redis need their own.
        "JOBS_QUEUE_NAME": env("JOBS_QUEUE_NAME", "verity"),
        # Webhooks: the total deadline of one delivery attempt (seconds), and how many of one
        # organization's deliveries may be in flight at once (app/webhooks/delivery.py).
        "WEBHOOK_TIMEOUT": float(env("WEBHOOK_TIMEOUT", "10")),
        "WEBHOOK_DELIVERIES_PER_ORGANIZATION": _int("WEBHOOK_DELIVERIES_PER_ORGANIZATION", 2),
        # GET /events (app/events): seconds between heartbeats, how often a stream looks for
        # new events, the streams one organization may hold open at once (429 beyond).
        "EVENTS_HEARTBEAT_SECONDS": float(env("EVENTS_HEARTBEAT_SECONDS", "15")),
        "EVENTS_POLL_SECONDS": float(env("EVENTS_POLL_SECONDS", "1")),
        "EVENTS_STREAMS_PER_ORGANIZATION": _int("EVENTS_STREAMS_PER_ORGANIZATION", 5),
        # A stream ends after this long; its client reconnects with Last-Event-ID.
        "EVENTS_STREAM_SECONDS": float(env("EVENTS_STREAM_SECONDS", "3600")),
        # POST /didcomm, the door anyone may knock on (app/didcomm_agent/settings.py): the
        # budgets per client IP and per sender DID, the DIDComm jobs that may wait at once
        # (503 past it), one send's deadline, and the sends to one host in flight at once.
        "DIDCOMM_ADDRESS_LIMIT": env("DIDCOMM_ADDRESS_LIMIT", "120/minute"),
        "DIDCOMM_SENDER_LIMIT": env("DIDCOMM_SENDER_LIMIT", "30/minute"),
        "DIDCOMM_QUEUE_LIMIT": _int("DIDCOMM_QUEUE_LIMIT", 1000),
        "DIDCOMM_SEND_TIMEOUT": float(env("DIDCOMM_SEND_TIMEOUT", "10")),
        "DIDCOMM_SENDS_PER_HOST": _int("DIDCOMM_SENDS_PER_HOST", 2),
        # Zero-knowledge proofs (app.zk): the worker processes that check them, the answers
        # that may wait for one on the host (429 past it), one check's deadline (below
        # gunicorn's 30 s worker timeout), the per-client budget of
        # ZK answers, and the largest ZK answer body (only that endpoint reads more).
        "ZK_VERIFY_WORKERS": _int("ZK_VERIFY_WORKERS", 1),
        "ZK_VERIFY_QUEUE": _int("ZK_VERIFY_QUEUE", 4),
        "ZK_VERIFY_TIMEOUT": float(env("ZK_VERIFY_TIMEOUT", "20")),
        "ZK_VERIFY_YIELD_SECONDS": float(env("ZK_VERIFY_YIELD_SECONDS", "5")),
        "ZK_ANSWER_LIMIT": env("ZK_ANSWER_LIMIT", "20/minute"),
        "ZK_MAX_ANSWER_BYTES": _int("ZK_MAX_ANSWER_BYTES", 2 * 1024 * 1024),
    }


KEY_STORES = ("database", "pkcs11")


def check_key_store(config: dict[str, Any]) -> None:
    """Refuse a start whose key store cannot work, naming the setting to fix."""
    store = config.get("KEY_STORE") or "database"
    if store not in KEY_STORES:
        raise RuntimeError(f"KEY_STORE must be one of {', '.join(KEY_STORES)}, not {store!r}")
    if store == "pkcs11" and not (config.get("PKCS11_MODULE") and config.get("PKCS11_TOKEN_LABEL")):
        raise RuntimeError("KEY_STORE=pkcs11 needs PKCS11_MODULE and PKCS11_TOKEN_LABEL")


def check_production_ready(config: dict[str, Any]) -> None:
    """Refuse a production start on the development secret, without a public URL or without
    an issuer key secret."""
    if config.get("ENV") == "production" and config.get("SECRET_KEY") in (
        None,
        "",
        DEVELOPMENT_SECRET,
    ):
        raise RuntimeError("SECRET_KEY must be set to a random value when VERITY_ENV=production")
    if config.get("ENV") == "production" and not config.get("PUBLIC_URL"):
        raise RuntimeError(
            "PUBLIC_URL must be set when VERITY_ENV=production: issuer identifiers, audiences, "
            "status lists and certificates name it (never a request's Host)"
        )
    if config.get("ENV") == "production" and not config.get("ISSUER_KEY_SECRET"):
        raise RuntimeError(
            "ISSUER_KEY_SECRET must be set when VERITY_ENV=production: issuer signing keys are "
            "sealed under it"
        )


def settle_public_url(config: dict[str, Any]) -> None:
    """Give a deployment without ``PUBLIC_URL`` (development, tests) the fixed development
    address: what it signs and checks never follows a request's Host header."""
    config["PUBLIC_URL"] = (config.get("PUBLIC_URL") or DEVELOPMENT_PUBLIC_URL).rstrip("/")
