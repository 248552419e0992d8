"""Every setting the service reads from the environment, described for the operator.

The documentation's settings reference is rendered from this table at build time, and
tests/test_settings_reference.py fails when the code reads a setting that is missing here (or
this table names one nothing reads), so the reference cannot fall behind the code. Descriptions
are Markdown; their links are relative to docs/reference/.
"""

from __future__ import annotations

from typing import NamedTuple


class Setting(NamedTuple):
    """One row of the reference: the variables it covers, their default, what they do."""

    names: tuple[str, ...]
    default: str
    meaning: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        ("DATABASE_URL",),
        "`sqlite:///instance/verity.sqlite3`",
        "SQLAlchemy URL; `postgresql+psycopg://...` in production",
    ),
    Setting(
        ("SECRET_KEY",),
        "a development value",
        "required, and not the default, when `VERITY_ENV=production` (the service refuses to start otherwise)",
    ),
    Setting(
        ("VERITY_ENV",),
        "`development`",
        "`production` enables the checks above",
    ),
    Setting(
        ("PUBLIC_URL",),
        "`make run`: `http://$HOST:$PORT`; otherwise `http://127.0.0.1:8000`",
        "the address wallets and people reach this deployment at: links, `response_uri`, the audience and origin presentations must name, issuer identifiers (`iss`), status list URIs and the certificates the organizations' roots sign. Never taken from a request's Host header, so a request sent with another Host gets nothing named after it. Required when `VERITY_ENV=production` (the service refuses to start otherwise); elsewhere, unset means `http://127.0.0.1:8000`, `make run`'s default address",
    ),
    Setting(
        ("DOCS_URL",),
        "empty",
        "the address of the documentation site built from `docs/` (`make docs`), for instance where the operator publishes it; the front page `/` links to it as the reference of every endpoint, setting and page. Empty: the front page names the `docs/` directory of the source repository and `make docs` instead of a link",
    ),
    Setting(
        ("TRUSTED_PROXY_COUNT",),
        "`0`",
        "how many proxies in front may set `X-Forwarded-For`/`-Proto`/`-Host`; the client IP for throttling and the audit trail comes from it",
    ),
    Setting(
        ("AUDIT_RETENTION_DAYS",),
        "`365`",
        "days an audit event is kept; the hourly retention sweep deletes older ones (`0` keeps them forever)",
    ),
    Setting(
        ("RATELIMIT_STORAGE_URI",),
        "unset: the database",
        "where the voucher, nonce and DIDComm throttles count: by default a table of its own in the service's database (`rate_limit_hits`, made by the migrations), which every worker and instance shares; `redis://host:6379/0` for Redis; `memory://` counts per process (a single-process development server only)",
    ),
    Setting(
        ("VOUCHER_EXCHANGE_LIMIT",),
        "`10/minute`",
        "per client IP, on `/vouchers/exchange` and the dashboard's voucher form",
    ),
    Setting(
        ("ISSUER_NONCE_LIMIT",),
        "`60/minute`",
        "per client IP and issuer, on `POST /issuers/<org_id>/nonce` (429 with `Retry-After` beyond it)",
    ),
    Setting(
        ("SESSION_TOKEN_HOURS",),
        "`12`",
        "session token lifetime",
    ),
    Setting(
        ("CONNECT_LINK_SECONDS",),
        "`120`",
        "how long `GET .../connect` hands out the same link",
    ),
    Setting(
        ("PRESENTATION_REQUEST_SECONDS",),
        "`600`",
        "how long a wallet may answer a link once handed out",
    ),
    Setting(
        ("ORGANIZATION_CODE_DAYS",),
        "`7`",
        "read but not used yet: an invitation code lasts the `days` its request names (default 7, 1 to 90)",
    ),
    Setting(
        ("RESPONSE_ENCRYPTION",),
        "`0`",
        "`1` asks wallets for encrypted responses (OpenID4VP `direct_post.jwt`, ECDH-ES with A128GCM or A256GCM) to a key per request; plain `vp_token` posts are then refused",
    ),
    Setting(
        ("DC_API_RESPONSE_MODE",),
        "`dc_api.jwt`",
        "how wallets answer the OpenID4VP requests of the browser's Digital Credentials API: `dc_api.jwt` (encrypted to a key of the request's own, ECDH-ES with A128GCM or A256GCM; a plain `vp_token` is refused) or `dc_api` (plain); any other value stops the start",
    ),
    Setting(
        ("READER_AUTH_CERT_FILE", "READER_AUTH_KEY_FILE"),
        "unset",
        "PEM certificate chain (leaf first) and the leaf's unencrypted P-256 private key, or a `pkcs11:object=<label>` URI for a key kept in the PKCS#11 token (as `REQUEST_SIGNING_KEY_FILE` takes): `org-iso-mdoc` DeviceRequests then carry `readerAuth` (ES256), the reader certificate platforms show the person (Apple issues one to registered verifiers). Read at start-up, which fails unless both are set, the key is P-256 and it is the leaf's. Unset: DeviceRequests go unsigned",
    ),
    Setting(
        ("GOOGLE_REGISTRAR_KEY_FILE", "GOOGLE_REGISTRAR_CHAIN_FILE"),
        "unset",
        "a Google Wallet verifier registrar's CA: its unencrypted P-256 private key (PEM), or a `pkcs11:object=<label>` URI for a key kept in the PKCS#11 token, and its PEM chain (the registrar CA first, then its issuers up to the root Google trusts). Each organization with a display name, logo and privacy policy is then issued a leaf carrying its relying party metadata (extension 1.3.6.1.4.1.11129.10.1), and its Digital Credentials API requests are signed with it under `x509_hash`, with `client_metadata.gw_rp_metadata_bytes` (see [Google Wallet's verifier registrar](../how-to/google-wallet-registrar.md)). Read at start-up, which fails unless both are set, the key is P-256 and the first certificate's, and that certificate is a CA valid now. Unset: no registrar leaves",
    ),
    Setting(
        ("VERIFIER_PROFILE",),
        "unset",
        "`haip`: the start refuses a configuration [HAIP 1.0](../explanation/haip.md#haip-10-verifier_profilehaip) does not allow (unsigned requests, a client identifier prefix other than `x509_hash`, a request signing key other than P-256/ES256, a self-signed certificate in `REQUEST_SIGNING_CERT_FILE`, `RESPONSE_ENCRYPTION` off, `DC_API_RESPONSE_MODE=dc_api`), naming every setting to change; while running, verifications of schemas that are neither SD-JWT VC nor mdoc (`jwt_vc_json`) are refused with 400 `FORMAT_NOT_IN_PROFILE`, as are policy requests, openings and links for such verifications made before. Unset: no profile is enforced",
    ),
    Setting(
        ("REGISTRATION_CERTIFICATE_REQUIRED",),
        "`0`",
        "`1`: every verification and policy request is made under a registration certificate (ETSI TS 119 475) the organization uploaded; saving a verification without one is refused with 400 `NO_REGISTRATION_CERTIFICATE`, what an EU deployment sets (see [Register as a relying party in the EU](../how-to/eu-relying-party.md)). `0`: organizations without one are unaffected; one that has some still has each verification checked against the one it names",
    ),
    Setting(
        ("REQUEST_SIGNING_CERT_FILE", "REQUEST_SIGNING_KEY_FILE"),
        "unset",
        "PEM certificate chain (leaf first, then its issuers) and the leaf's unencrypted EC private key (P-256, P-384 or P-521), or for a key kept in the PKCS#11 token a `pkcs11:object=<label>` URI (RFC 7512; [Keys](../how-to/hsm.md)): Request Objects are then signed JWS, passed by reference, under the `x509_san_dns:` (or `x509_hash:`) client identifier. Read at start-up, which fails unless both are set, the key is the leaf's, the chain is in order, the leaf is valid and, for `x509_san_dns`, it has a DNS subjectAltName equal to `PUBLIC_URL`'s host. The identity of organizations without one of their own (see [Each organization's verifier identity](../how-to/verifier-identity.md))",
    ),
    Setting(
        ("REQUEST_CLIENT_ID_PREFIX",),
        "unset: `x509_san_dns` with a certificate, `redirect_uri` without",
        "`redirect_uri`, `x509_san_dns` or `x509_hash` (client ID `x509_hash:` + base64url SHA-256 of the leaf certificate's DER); start-up refuses one the configuration cannot honour (see [How requests reach a wallet](../explanation/requests-to-wallets.md#how-requests-reach-a-wallet))",
    ),
    Setting(
        ("REQUEST_BY_REFERENCE",),
        "`0`",
        "`1` passes unsigned (`redirect_uri:`) requests by reference, as an `alg` `none` Request Object at `request_uri`, instead of by value in the link: a smaller QR code, for wallets that accept it (when to set it: [The QR code](../reference/person-pages.md#the-qr-code-by-value-or-by-reference-request_by_reference))",
    ),
    Setting(
        ("REQUEST_URI_METHOD",),
        "`get`",
        "`post` adds `request_uri_method=post` to signed links: wallets that support it POST their metadata and a `wallet_nonce` (OpenID4VP 1.0 §5.10); needs a certificate",
    ),
    Setting(
        ("MAX_CONTENT_LENGTH",),
        "`1048576`",
        "request body limit (413 beyond)",
    ),
    Setting(
        ("OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET"),
        "unset",
        "the staff's identity provider; without them `POST /auth` answers 503 `NOT_CONFIGURED`",
    ),
    Setting(
        ("BILLING_PROVIDER",),
        "unset",
        "`stripe` or `fake`; unset means `/billing/*` answers 503 `NOT_CONFIGURED`",
    ),
    Setting(
        ("STRIPE_API_KEY", "STRIPE_PRICE_PRO", "STRIPE_PRICE_PREMIUM_PLUS", "STRIPE_API_BASE"),
        "unset",
        "the Stripe adapter",
    ),
    Setting(
        ("STRIPE_WEBHOOK_SECRET",),
        "unset",
        "verifies `POST /billing/webhook` events (`Stripe-Signature`); unset answers 503",
    ),
    Setting(
        ("REQUEST_LOG",),
        "`1`",
        "one JSON line per request: `request_id`, `method`, `path` (secrets redacted), `status`, `duration_ms`. Redacted are the query parameters `apikey`, `code`, `state`, `token`, `response_code`, `_oob` (a DIDComm invitation on `/didcomm/invitation` and its scanner's `/fetch`: its id is a DIDComm offer's token or a presentation request's ID) and `request_uri` (the issuer's authorization page), and every path segment that opens something: the token of `/p/<token>` and `/o/<token>` (and their `/status`), of `/issuers/<org_id>/offers/<token>` (its answer holds the pre-authorized code), the individual's ID in `/i/<individual_id>` and `/verifications/<individual_id>/connect` and `/verify`, and the presentation request's ID in `/oid4vp/requests/`, `/oid4vp/responses/`, `/oid4vp/dc-requests/` and `/oid4vp/dc-responses/` (one list, `SECRET_ROUTES` in `app/request_log.py`). gunicorn's access log is off unless `--access-logfile` is given; `gunicorn.conf.py` then applies the same redaction to the request line, path, query and `Referer`, and writes `[redacted]` for the `apikey`, `Authorization`, `Cookie` and `DPoP` headers should a log format name them. `deploy/`'s nginx logs no path or referrer at all (its `verity_no_paths` format: address, time, method, status, size, duration, the instance that answered), since it cannot redact by route",
    ),
    Setting(
        ("CACHE_REDIS_URL",),
        "unset",
        "Redis (`redis://host:6379/0`) where every worker and instance finds the person's page's QR drawings (kept 15 minutes; a drawing costs about 20 ms); unset, each worker keeps its last 1024. Only a cache: when Redis cannot be reached the code is drawn and the page served",
    ),
    Setting(
        ("METRICS_TOKEN",),
        "unset",
        "turns on `GET /metrics` (Prometheus) for a bearer of this token: `verity_http_requests_total` and `verity_http_request_duration_seconds` by `route` (the URL rule such as `/i/<individual_id>`, never the raw path; `unmatched` for unknown addresses), `method` and `status`; `verity_presentations_total` by `outcome` and `reason_family` (the families of the person's page reasons: `CONDITION`, `UNTRUSTED_ISSUER`, `REVOKED`, ...); `verity_issuer_fetch_failures_total`; `verity_limiter_refusals_total` by `scope` and `reason` (`over_limit`, `storage_unavailable`). Unset: requests are not counted and `/metrics` is a 404",
    ),
    Setting(
        ("PROMETHEUS_MULTIPROC_DIR",),
        "a temporary directory under gunicorn",
        "where gunicorn's workers keep their values so that one scrape adds up all of them. `gunicorn.conf.py` (read by `make run`, and by gunicorn started in the project directory) makes one when `METRICS_TOKEN` is set and removes it at shutdown; set it yourself only to an empty directory",
    ),
    Setting(
        ("TRUST_ANCHORS_FILE",),
        "unset",
        "PEM file of trust anchors for issuers that sign with an `x5c` chain, for every verification (a verification may add its own in `trusted_issuers`, or choose [trust sources](../how-to/trust-sources.md#trust-sources))",
    ),
    Setting(
        ("TRUST_LIST_STALE",),
        "`refuse`",
        "a trust source list past its next update: `refuse` (its certificates vouch for nobody until refreshed) or `use` (still used); flagged on the page and in the API either way ([Trust sources](../how-to/trust-sources.md#trust-sources)); any other value refuses to start",
    ),
    Setting(
        ("TRUST_LIST_REFRESH_MINUTES",),
        "`60`",
        "how often trust source lists are fetched again",
    ),
    Setting(
        ("TRUST_LIST_MAX_BYTES",),
        "`16777216`",
        "size cap of one fetched list (the EU's member state lists run to megabytes)",
    ),
    Setting(
        ("TRUST_LIST_TIMEOUT",),
        "`30`",
        "seconds for fetching one list",
    ),
    Setting(
        ("FETCH_TIMEOUT",),
        "`5`",
        "seconds for one whole outbound fetch (issuer metadata, `did:web` documents, status lists): connecting, TLS, headers and body together, however slowly the server sends them. Name resolution counts against it but is bounded by the system resolver's own timeouts (it cannot be interrupted)",
    ),
    Setting(
        ("PINNED_DID_DOCUMENTS_FILE",),
        "unset",
        "JSON file of DID documents for short-form `did:prism:<hash>` issuers (Hyperledger Identus), which only a PRISM node can resolve: one document or an array of them, each bare or as a DID resolver's answer (`{\"didDocument\": ...}`), with its `publicKeyJwk` keys listed under `assertionMethod`. Read at start (a malformed file stops it). A pinned document is used without any fetch and also wins over the keys a long-form `did:prism` carries. It says which key a DID signs with, for every organization; whether an organization trusts that issuer is still its verification's `trusted_issuers` (where it names the short form, which also matches the long form). An organization can also pin a DID itself, without this file, by trusting an issuer its presentations showed the long form of ([Present once, trust the issuer shown](../how-to/socious-wallet.md#present-once-with-a-socious-wallet-trust-the-issuer-shown)); this file wins over such a pin",
    ),
    Setting(
        ("DID_RESOLVER_URL",),
        "unset",
        "a DID resolver in the Universal Resolver's style for short-form `did:prism` issuers that are not pinned: `GET <url>/1.0/identifiers/<did>`, answering a resolution result with `didDocument` (or a bare DID document) whose `id` is that DID. Fetched like any issuer document (https, public addresses, `FETCH_TIMEOUT`, cached five minutes). Unset, with no pin either, such credentials are refused with a reason saying how to pin the issuer. Long-form `did:prism` issuers resolve from their own text; with a resolver set, one it knows (not pinned) is checked against its published document: deactivated, or a key no longer listed, fails with that reason, and an unreachable resolver fails it too, while a DID it does not know (404, `notFound`) stands on its long form. Without a resolver or pin a long form is taken at its word, so a key rotated out after publication is still accepted",
    ),
    Setting(
        ("TRUST_ALLOW_PRIVATE",),
        "`0`",
        "`1` lets outbound fetches reach loopback, private and link-local addresses and plain `http`: for development only (the deployment's own issuers never need it: they are read from the database)",
    ),
    Setting(
        ("STATUS_FAIL_OPEN",),
        "`0`",
        "`1` accepts a credential whose status list cannot be fetched; by default such a presentation fails",
    ),
    Setting(
        ("MAIL_URL",),
        "unset",
        "where offer emails go: `smtp://user:pass@host:port` (plain; add `?starttls=true` to require STARTTLS before the password is sent, port 587 by default) or `smtps://user:pass@host:465` (TLS from the first byte); user and password percent-encoded. Unset: in development each email is written to the log instead; in production nothing is sent (and no offer link is logged)",
    ),
    Setting(
        ("MAIL_FROM",),
        "`Verity <no-reply@localhost>`",
        "the emails' sender",
    ),
    Setting(
        ("MAIL_CA_FILE",),
        "unset",
        "PEM file of a private CA for the relay's certificate (always checked, name included)",
    ),
    Setting(
        ("MAIL_TIMEOUT",),
        "`10`",
        "seconds for the relay to answer",
    ),
    Setting(
        ("ISSUER_KEY_SECRET",),
        "unset",
        "the secret the issuers' private keys and each organization's verifier identity key are sealed under (and offer codes keyed with); required when `VERITY_ENV=production`; in development, unset means derived from `SECRET_KEY`",
    ),
    Setting(
        ("KEY_STORE",),
        "`database`",
        "where new issuer keys are made and kept: `database` (sealed under `ISSUER_KEY_SECRET`) or `pkcs11` (generated in the PKCS#11 token below and never leaving it; [Keys](../how-to/hsm.md))",
    ),
    Setting(
        ("PKCS11_MODULE",),
        "unset",
        "path of the token vendor's PKCS#11 module (SoftHSM2: `/usr/lib/softhsm/libsofthsm2.so`)",
    ),
    Setting(
        ("PKCS11_TOKEN_LABEL",),
        "unset",
        "the label of the token keys are kept in",
    ),
    Setting(
        ("PKCS11_PIN",),
        "unset",
        "the token's user PIN (never logged)",
    ),
    Setting(
        ("CREDENTIAL_OFFER_SECONDS",),
        "`604800`",
        "how long a credential offer (and its pre-authorized code) can be taken",
    ),
    Setting(
        ("ISSUER_ACCESS_TOKEN_SECONDS",),
        "`300`",
        "lifetime of an access token from an issuer's token endpoint",
    ),
    Setting(
        ("ISSUER_NONCE_SECONDS",),
        "`300`",
        "lifetime of a `c_nonce` from an issuer's nonce endpoint",
    ),
    Setting(
        ("ISSUER_PAR_SECONDS",),
        "`300`",
        "lifetime of a `request_uri` from an issuer's pushed authorization request endpoint (the person's time on the authorization page)",
    ),
    Setting(
        ("ISSUER_AUTHORIZATION_CODE_SECONDS",),
        "`60`",
        "lifetime of an authorization code",
    ),
    Setting(
        ("ISSUER_COUNTRY",),
        "`UT`",
        "ISO 3166-1 alpha-2 country written into each organization's mdoc IACA and document signer certificates (ISO/IEC 18013-5 Annex B requires one; `UT` is the standard's test country: set your own); anything but two capital letters refuses to start",
    ),
    Setting(
        ("ISSUER_BATCH_SIZE",),
        "`10`",
        "the most proofs (or keys attested by `attestation` proofs), so credentials, one credential request may carry (`batch_credential_issuance.batch_size`, at least 2: the service refuses to start with less)",
    ),
    Setting(
        ("ISSUER_MAX_COPIES",),
        "`50`",
        "the most copies of one credential a wallet may take, over every request its access token serves; past it, fewer credentials than proofs, then `credential_request_denied`",
    ),
    Setting(
        ("ISSUER_DPOP",),
        "`accepted`",
        "DPoP at the issuers' token and credential endpoints: `accepted` binds a token when the wallet sends a proof and keeps Bearer tokens for wallets that do not; `required` refuses token requests without a proof (HAIP 1.0); any other value refuses to start",
    ),
    Setting(
        ("STATUS_LIST_TTL_SECONDS",),
        "`300`",
        "the `ttl` of the issuers' status list tokens: how long verifiers may cache them",
    ),
    Setting(
        ("STATUS_LIST_VALID_SECONDS",),
        "`86400`",
        "the `exp` of the status list tokens, counted from each fetch",
    ),
    Setting(
        ("JOBS_QUEUE_URL",),
        "unset: SQLite",
        "the job queue's storage ([Webhooks](../how-to/webhooks.md#webhooks)): unset keeps it in a SQLite file beside the SQLite database (`instance/verity-jobs.sqlite3`; `instance/jobs.sqlite3` when the database is PostgreSQL); `redis://host:6379/0` for Redis, which production with several instances needs; `sqlite:///path` names the file",
    ),
    Setting(
        ("JOBS_QUEUE_NAME",),
        "`verity`",
        "the housekeeping queue's name inside its storage (the Redis key prefix); the deliveries queue is `<name>.deliveries` (the uploads and DIDComm queues `<name>.uploads`, `<name>.didcomm`): deployments sharing one Redis database need different names",
    ),
    Setting(
        ("WEBHOOK_TIMEOUT",),
        "`10`",
        "seconds for one whole webhook delivery attempt (connect, send, the answer's headers and the first 4 KiB of its body)",
    ),
    Setting(
        ("WEBHOOK_DELIVERIES_PER_ORGANIZATION",),
        "`2`",
        "deliveries of one organization in flight at once, so that one organization's slow endpoints cannot take every delivery thread ([Webhooks](../how-to/webhooks.md#webhooks))",
    ),
    Setting(
        ("EVENTS_HEARTBEAT_SECONDS",),
        "`15`",
        "seconds between the heartbeat comments of an idle event stream (`GET /events`), which keep proxies from closing it; a stream's place (`EVENTS_STREAMS_PER_ORGANIZATION`) is leased for three of them, so a stream whose server died frees its place within that ([Event streams](../how-to/event-streams.md))",
    ),
    Setting(
        ("EVENTS_POLL_SECONDS",),
        "`1`",
        "how often an open event stream reads the log for new events (one indexed query, no connection held in between): the most an event waits before it is pushed",
    ),
    Setting(
        ("EVENTS_STREAMS_PER_ORGANIZATION",),
        "`5`",
        "event streams one organization may hold open at once, counted in the database across every instance; one more is refused with 429 `TOO_MANY_STREAMS`",
    ),
    Setting(
        ("EVENTS_STREAM_SECONDS",),
        "`3600`",
        "an event stream ends after this long and its client reconnects with `Last-Event-ID`, missing nothing: streams spread again over the instances after a restart, and no connection lives forever",
    ),
    Setting(
        ("EVENTS_THREADS",),
        "`64`",
        "threads of the event stream server (`gunicorn.events.conf.py`, started by `make run` and `deploy/cluster.py`): the streams it holds open at once, across every organization",
    ),
    Setting(
        ("DIDCOMM_ADDRESS_LIMIT",),
        "`120/minute`",
        "per client IP, on `POST /didcomm`, counted before the message is opened (429 `RATE_LIMITED` with `Retry-After` beyond it; [DIDComm](didcomm.md#limits))",
    ),
    Setting(
        ("DIDCOMM_SENDER_LIMIT",),
        "`30/minute`",
        "per sender DID, on `POST /didcomm`, counted once the message is opened and its sender authenticated (429 `RATE_LIMITED` with `Retry-After` beyond it)",
    ),
    Setting(
        ("DIDCOMM_QUEUE_LIMIT",),
        "`1000`",
        "DIDComm jobs (messages to handle, messages to send, retries) that may wait in the DIDComm queue; while that many wait, `POST /didcomm` answers 503 `DIDCOMM_BUSY` with `Retry-After: 30` instead of queueing more",
    ),
    Setting(
        ("DIDCOMM_SEND_TIMEOUT",),
        "`10`",
        "seconds for one whole attempt to send a DIDComm message to a holder's mediator; a destination that never answered gets 3 s (or this, if shorter) and 2 attempts instead of 5",
    ),
    Setting(
        ("DIDCOMM_SENDS_PER_HOST",),
        "`2`",
        "DIDComm sends to one host in flight at once in a worker process, so that one slow mediator cannot take every DIDComm thread (`flask jobs worker --didcomm-threads`, 4 by default)",
    ),
    Setting(
        ("ZK_VERIFY_WORKERS",),
        "`1`",
        "proof processes of each job worker (`flask jobs worker`), below the web workers' CPU priority, that check kept zero-knowledge answers, and the threads of its `zk` queue (`--zk-threads` overrides them); each takes about 250 MiB and 0.5-0.8 s of CPU a proof, and no web worker waits for one ([ZK age checks](../how-to/zk-age-checks.md#limits))",
    ),
    Setting(
        ("ZK_VERIFY_QUEUE",),
        "`4`",
        "kept ZK answers that may wait for a proof process besides those being checked, counted in the database for the whole deployment; beyond `ZK_VERIFY_WORKERS` + this, a ZK answer gets 429 `ZK_BUSY` with `Retry-After` before its body is read (nothing consumed; the person's page sends it again). A waiting answer holds no web worker, only its row",
    ),
    Setting(
        ("ZK_VERIFY_TIMEOUT",),
        "`20`",
        "seconds a job waits for one proof's check; past it (or when a proof process died) the check is tried again a few seconds later, three times in all, then the answer is dropped and its request can be answered again",
    ),
    Setting(
        ("ZK_VERIFY_YIELD_SECONDS",),
        "`5`",
        "how long a proof may wait to start while other processes keep more than half of the machine's CPUs busy (a flood of page loads): pages first, and a proof is still checked after this wait whatever the load (at most half of `ZK_VERIFY_TIMEOUT`; `0`: never wait)",
    ),
    Setting(
        ("ZK_ANSWER_LIMIT",),
        "`20/minute`",
        "per client IP, on the Digital Credentials API answer of a ZK verification (429 `RATE_LIMITED` with `Retry-After` beyond it)",
    ),
    Setting(
        ("ZK_MAX_ANSWER_BYTES",),
        "`2097152`",
        "the largest answer body of a ZK verification's request, at the Digital Credentials API answer and `direct_post` (an isrg v7 proof in `dc_api.jwt` is about 1.5 MB); every other body keeps `MAX_CONTENT_LENGTH`",
    ),
)
