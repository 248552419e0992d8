"""Rate limits: only voucher redemption is throttled, per client IP (INTERFACE.md 8).

Vouchers can be redeemed through ``POST /vouchers/exchange`` and through the dashboard's plan
page. Both endpoints draw on ONE shared budget per client IP (a Flask-Limiter shared limit with
a single scope): otherwise a browser could guess codes at twice the rate by alternating them.

Each app gets its own limiter so that its storage (memory by default, Redis through
``RATELIMIT_STORAGE_URI`` so all instances share one count) follows that app's configuration.
The client IP is ``remote_addr`` as ProxyFix left it: only ``TRUSTED_PROXY_COUNT`` proxies are
believed, so a raw ``X-Forwarded-For`` from a client cannot buy a fresh budget.
"""

from __future__ import annotations

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

VOUCHER_EXCHANGE_ENDPOINT = "dashboard.exchange_voucher"
VOUCHER_PAGE_ENDPOINT = "staff.plan_voucher"
VOUCHER_ENDPOINTS = (VOUCHER_EXCHANGE_ENDPOINT, VOUCHER_PAGE_ENDPOINT)
# The one bucket every voucher endpoint counts against (per client IP).
VOUCHER_SCOPE = "voucher-exchange"


def throttle_voucher_exchange(app: Flask) -> Limiter:
    """Wrap every voucher endpoint in the same shared limit; a missing one is a bug, not a
    silently unthrottled route, so the lookup fails loudly."""
    limiter = Limiter(
        get_remote_address,
        app=app,
        default_limits=[],
        headers_enabled=True,
        storage_uri=app.config["RATELIMIT_STORAGE_URI"],
        strategy="moving-window",
    )
    shared = limiter.shared_limit(
        lambda: app.config["VOUCHER_EXCHANGE_LIMIT"],
        scope=VOUCHER_SCOPE,
        key_func=get_remote_address,
    )
    for endpoint in VOUCHER_ENDPOINTS:
        app.view_functions[endpoint] = shared(app.view_functions[endpoint])
    app.extensions["rate_limiter"] = limiter
    return limiter
