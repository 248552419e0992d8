"""The configuration every test app starts from (its own module: each test folder has a
``conftest``, so ``from conftest import`` would find whichever was imported first)."""

TEST_CONFIG = {
    "TESTING": True,
    "SECRET_KEY": "test-secret",
    "ISSUER_KEY_SECRET": "test-issuer-key-secret",
    "REQUEST_LOG": True,
    "PUBLIC_URL": "https://verity.test",
    "BILLING_PROVIDER": "",
    "OIDC_ISSUER": "",
    "OIDC_CLIENT_ID": "",
    "OIDC_CLIENT_SECRET": "",
    "RATELIMIT_STORAGE_URI": "memory://",
    "TRUSTED_PROXY_COUNT": 0,
    # No worker runs for the shared test app; tests that deliver build a queue of their own.
    "JOBS_QUEUE_URL": "memory://",
    # A test client reads a whole answer: an event stream (GET /events) ends after this long,
    # as it does after an hour in service. The stream tests set their own.
    "EVENTS_STREAM_SECONDS": 0.3,
    "EVENTS_POLL_SECONDS": 0.05,
    "EVENTS_HEARTBEAT_SECONDS": 0.1,
}
