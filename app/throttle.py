"""Rate limits: only /vouchers/exchange is throttled, per client IP (INTERFACE.md 8).

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


def throttle_voucher_exchange(app: Flask) -> Limiter:
    limiter = Limiter(
        get_remote_address,
        app=app,
        default_limits=[],
        headers_enabled=True,
        storage_uri=app.config["RATELIMIT_STORAGE_URI"],
        strategy="moving-window",
    )
    view = app.view_functions[VOUCHER_EXCHANGE_ENDPOINT]
    app.view_functions[VOUCHER_EXCHANGE_ENDPOINT] = limiter.limit(
        lambda: app.config["VOUCHER_EXCHANGE_LIMIT"], key_func=get_remote_address
    )(view)
    app.extensions["rate_limiter"] = limiter
    return limiter
