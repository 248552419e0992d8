"""Rate limits: voucher redemption per client IP, and each issuer's nonce endpoint per client
IP and issuer.

Vouchers can be redeemed through ``POST /vouchers/exchange`` and through the dashboard's plan
page. Both endpoints draw on ONE shared budget per client IP (a Flask-Limiter shared limit with
a single scope): otherwise a browser could guess codes at twice the rate by alternating them.

``POST /issuers/<org_id>/nonce`` is unauthenticated (OpenID4VCI 1.0 §7) and signs on every
call, so it has a budget of its own per client IP and issuer (``ISSUER_NONCE_LIMIT``). An
address that names no issuer is not counted: it costs one read, and counting it would give
every made-up issuer ID a key of its own in the limiter's storage.

``POST /didcomm`` is unauthenticated too, and each message it takes is decrypted and queued,
so it has two budgets: one per client IP (``DIDCOMM_ADDRESS_LIMIT``), counted before the
message is opened, and one per sender DID (``DIDCOMM_SENDER_LIMIT``), counted once the message
is opened and its sender authenticated (``count_didcomm_sender``; a sender that changes its
address keeps its budget, and many senders behind one address share that address's). Each
refusal is 429 ``RATE_LIMITED`` with ``Retry-After``.

The Digital Credentials API answer of a zero-knowledge verification costs a proof check (most
of a CPU second) and may be 2 MiB, so it has a budget per client IP (``ZK_ANSWER_LIMIT``,
``count_zk_answer``), counted inside the view once the request is known to be a ZK one: other
answers are not counted.

The count must hold for the whole deployment, not per process: ``make run`` starts several
gunicorn workers, and a per-worker count would multiply the documented limit by their number.
By default the hits are kept in the service's own database (a table of their own, which every
worker and every instance shares); ``RATELIMIT_STORAGE_URI`` may name Redis instead
(``redis://...``), or ``memory://`` for a single-process development server.

The limiter fails closed: when its storage cannot be reached, redemption answers 502
STORAGE_UNAVAILABLE with ``Retry-After`` rather than running unthrottled. The client IP is
``remote_addr`` as ProxyFix left it: only ``TRUSTED_PROXY_COUNT`` proxies are believed, so a
raw ``X-Forwarded-For`` from a client cannot buy a fresh budget.
"""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Flask, current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import parse
from limits.errors import StorageError
from limits.storage import MovingWindowSupport, Storage
from sqlalchemy import (
    Column,
    Float,
    Index,
    String,
    Table,
    delete,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from app import metrics
from app.database import reading
from app.errors import ApiError, StorageUnavailable
from app.extensions import db
from app.organizations.models import Organization

VOUCHER_EXCHANGE_ENDPOINT = "staff_api.exchange_voucher"
VOUCHER_PAGE_ENDPOINT = "staff.plan_voucher"
VOUCHER_ENDPOINTS = (VOUCHER_EXCHANGE_ENDPOINT, VOUCHER_PAGE_ENDPOINT)
# The one bucket every voucher endpoint counts against (per client IP).
VOUCHER_SCOPE = "voucher-exchange"
NONCE_ENDPOINT = "issuer.nonce"
NONCE_SCOPE = "issuer-nonce"
DIDCOMM_ENDPOINT = "didcomm.receive"
DIDCOMM_ADDRESS_SCOPE = "didcomm-address"
DIDCOMM_SENDER_SCOPE = "didcomm-sender"
ZK_ANSWER_SCOPE = "zk-answer"
THROTTLED_ENDPOINTS = (*VOUCHER_ENDPOINTS, NONCE_ENDPOINT, DIDCOMM_ENDPOINT)
DATABASE_SCHEME = "database"

# The limiter's table (migration 0004): only recent hits, nothing refers to it, so emptying
# it only restarts the counts.
rate_limit_hits = Table(
    "rate_limit_hits",
    db.metadata,
    Column("key", String(255), nullable=False),
    Column("hit_at", Float, nullable=False),
    Index("rate_limit_hits_key_time", "key", "hit_at"),
)


class DatabaseStorage(Storage, MovingWindowSupport):
    """A `limits` storage on the service's database: one row per hit, a moving window.

    Each acquisition is one short transaction that serializes per key (SQLite's BEGIN
    IMMEDIATE; a transaction-scoped advisory lock on PostgreSQL), so concurrent workers cannot
    both take the last slot.
    """

    STORAGE_SCHEME = DATABASE_SCHEME

    def __init__(self, uri: str | None = None, *, engine: Engine, **options: Any) -> None:
        super().__init__(uri, **options)
        self.engine = engine

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return SQLAlchemyError

    def _transaction(self, key: str | None = None) -> _Locked:
        return _Locked(self.engine, key)

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        with self._transaction(key) as connection:
            now = time.time()
            connection.execute(
                delete(rate_limit_hits).where(
                    rate_limit_hits.c.key == key, rate_limit_hits.c.hit_at <= now - expiry
                )
            )
            taken = _count(connection, key, now - expiry)
            if taken + amount > limit:
                return False
            connection.execute(insert(rate_limit_hits), [{"key": key, "hit_at": now}] * amount)
            return True

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = time.time()
        with self._transaction() as connection:
            oldest, count = connection.execute(
                select(func.min(rate_limit_hits.c.hit_at), func.count()).where(
                    rate_limit_hits.c.key == key, rate_limit_hits.c.hit_at > now - expiry
                )
            ).one()
        return (oldest if count else now), count

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        with self._transaction(key) as connection:
            now = time.time()
            connection.execute(insert(rate_limit_hits), [{"key": key, "hit_at": now}] * amount)
            return _count(connection, key, now - expiry)

    def get(self, key: str) -> int:
        with self._transaction() as connection:
            return _count(connection, key, float("-inf"))

    def get_expiry(self, key: str) -> float:
        with self._transaction() as connection:
            newest = connection.scalar(
                select(func.max(rate_limit_hits.c.hit_at)).where(rate_limit_hits.c.key == key)
            )
        return newest if newest is not None else time.time()

    def check(self) -> bool:
        try:
            with self.engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception:
            return False
        return True

    def reset(self) -> int | None:
        with self._transaction() as connection:
            return connection.execute(delete(rate_limit_hits)).rowcount

    def clear(self, key: str) -> None:
        with self._transaction(key) as connection:
            connection.execute(delete(rate_limit_hits).where(rate_limit_hits.c.key == key))


class _Locked:
    """A transaction on its own connection, holding the per-key lock until it ends."""

    def __init__(self, engine: Engine, key: str | None) -> None:
        self.engine = engine
        self.key = key

    def __enter__(self) -> Connection:
        self.context = self.engine.begin()
        connection = self.context.__enter__()
        if self.key is not None and connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
                {"key": f"rate-limit:{self.key}"},
            )
        return connection

    def __exit__(self, *exc_info: Any) -> None:
        self.context.__exit__(*exc_info)


def _count(connection: Connection, key: str, after: float) -> int:
    return connection.scalar(
        select(func.count()).where(rate_limit_hits.c.key == key, rate_limit_hits.c.hit_at > after)
    )


def storage_settings(app: Flask) -> tuple[str, dict[str, Any]]:
    """The limiter's storage URI and options: the database unless a URI is configured."""
    uri = app.config.get("RATELIMIT_STORAGE_URI") or f"{DATABASE_SCHEME}://"
    if uri.startswith(f"{DATABASE_SCHEME}://"):
        with app.app_context():
            return uri, {"engine": db.engine}
    # Storage errors arrive as limits' StorageError, which fail_closed below recognises.
    return uri, {"wrap_exceptions": True}


def fail_closed(view: Callable[..., Any], scope: str = VOUCHER_SCOPE) -> Callable[..., Any]:
    """An unreachable limiter storage refuses the attempt (502) instead of letting it through."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except StorageError:
            metrics.count_limiter_refusal(scope, "storage_unavailable")
            raise StorageUnavailable(
                "The rate limiter's storage is unavailable; try again in a moment"
            ) from None

    return wrapper


def throttle_voucher_exchange(app: Flask) -> Limiter:
    """Wrap every voucher endpoint in the same shared limit; a missing one is a bug, not a
    silently unthrottled route, so the lookup fails loudly."""
    uri, options = storage_settings(app)
    limiter = Limiter(
        get_remote_address,
        app=app,
        default_limits=[],
        headers_enabled=True,
        storage_uri=uri,
        storage_options=options,
        strategy="moving-window",
    )
    shared = limiter.shared_limit(
        lambda: app.config["VOUCHER_EXCHANGE_LIMIT"],
        scope=VOUCHER_SCOPE,
        key_func=get_remote_address,
        on_breach=lambda _limit: metrics.count_limiter_refusal(VOUCHER_SCOPE, "over_limit"),
    )
    for endpoint in VOUCHER_ENDPOINTS:
        app.view_functions[endpoint] = fail_closed(shared(app.view_functions[endpoint]))
    throttle_issuer_nonces(app, limiter)
    throttle_didcomm(app, limiter)
    only_on_throttled_endpoints(app)
    app.extensions["rate_limiter"] = limiter
    return limiter


def throttle_issuer_nonces(app: Flask, limiter: Limiter) -> None:
    """One budget per client IP and issuer on the nonce endpoint; unknown issuers uncounted."""
    per_issuer = limiter.limit(
        lambda: app.config["ISSUER_NONCE_LIMIT"],
        scope=NONCE_SCOPE,
        key_func=_address_and_issuer,
        exempt_when=_names_no_issuer,
        on_breach=lambda _limit: metrics.count_limiter_refusal(NONCE_SCOPE, "over_limit"),
    )
    view = app.view_functions[NONCE_ENDPOINT]
    app.view_functions[NONCE_ENDPOINT] = fail_closed(per_issuer(view), NONCE_SCOPE)


class RateLimited(ApiError):
    """A budget counted inside a view (not by Flask-Limiter's decorator) is spent: the same
    429 the decorator's refusals get, with ``Retry-After``."""

    status = 429
    code = "RATE_LIMITED"

    def __init__(self, retry_after: int) -> None:
        super().__init__("Too many attempts; retry later")
        self.headers = {"Retry-After": str(retry_after)}


def throttle_didcomm(app: Flask, limiter: Limiter) -> None:
    """The per-client-IP budget on ``POST /didcomm``, checked before the message is opened."""
    per_address = limiter.limit(
        lambda: app.config["DIDCOMM_ADDRESS_LIMIT"],
        scope=DIDCOMM_ADDRESS_SCOPE,
        key_func=get_remote_address,
        on_breach=lambda _limit: metrics.count_limiter_refusal(DIDCOMM_ADDRESS_SCOPE, "over_limit"),
    )
    view = app.view_functions[DIDCOMM_ENDPOINT]
    app.view_functions[DIDCOMM_ENDPOINT] = fail_closed(per_address(view), DIDCOMM_ADDRESS_SCOPE)


def count_didcomm_sender(sender_did: str) -> None:
    """Count one message from ``sender_did`` against its budget, or refuse it (429).

    Keyed by a digest of the DID: a did:peer:2 runs to hundreds of characters, past what the
    limiter's storage keeps as a key, and the digest names the same DID just as well."""
    limiter: Limiter = current_app.extensions["rate_limiter"]
    limit = parse(current_app.config["DIDCOMM_SENDER_LIMIT"])
    key = hashlib.sha256(sender_did.encode("utf-8")).hexdigest()
    if limiter.limiter.hit(limit, DIDCOMM_SENDER_SCOPE, key):
        return
    metrics.count_limiter_refusal(DIDCOMM_SENDER_SCOPE, "over_limit")
    reset_at = limiter.limiter.get_window_stats(limit, DIDCOMM_SENDER_SCOPE, key).reset_time
    raise RateLimited(max(1, math.ceil(reset_at - time.time())))


def count_zk_answer() -> None:
    """Count one ZK answer from this client IP against ``ZK_ANSWER_LIMIT``, or refuse it (429)."""
    limiter: Limiter = current_app.extensions["rate_limiter"]
    limit = parse(current_app.config["ZK_ANSWER_LIMIT"])
    key = get_remote_address()
    try:
        if limiter.limiter.hit(limit, ZK_ANSWER_SCOPE, key):
            return
        reset_at = limiter.limiter.get_window_stats(limit, ZK_ANSWER_SCOPE, key).reset_time
    except StorageError:
        metrics.count_limiter_refusal(ZK_ANSWER_SCOPE, "storage_unavailable")
        raise StorageUnavailable(
            "The rate limiter's storage is unavailable; try again in a moment"
        ) from None
    metrics.count_limiter_refusal(ZK_ANSWER_SCOPE, "over_limit")
    raise RateLimited(max(1, math.ceil(reset_at - time.time())))


def _issuer_id() -> uuid.UUID | None:
    try:
        return uuid.UUID(str((request.view_args or {}).get("org_id")))
    except ValueError:
        return None


def _address_and_issuer() -> str:
    # The canonical UUID: another spelling of the same ID must not buy a fresh budget.
    return f"{get_remote_address()}/{_issuer_id()}"


def _names_no_issuer() -> bool:
    """The view's own lookup (the session keeps the row, so the view reads it again free).
    Read as a read-only view reads: on SQLite a write lock taken here would keep the
    limiter's own transaction waiting for this request to end."""
    issuer = _issuer_id()
    if issuer is None:
        return True
    with reading():
        return db.session.get(Organization, issuer) is None


def only_on_throttled_endpoints(app: Flask) -> None:
    """Run the limiter's request hooks on the throttled endpoints only.

    Flask-Limiter hooks every request of the app (its check, its headers, its cleanup) even
    when, as here, no limit applies outside the decorated views: measured, that was a fifth
    of what ``/healthz`` cost. Each hook is kept, behind a test of the endpoint; the decorated
    views check their limit themselves, so the refusals are the same.
    """

    def scoped(hook: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(hook)
        def on_throttled_endpoint(*args: Any) -> Any:
            if request.endpoint in THROTTLED_ENDPOINTS:
                return hook(*args)
            return args[0] if args else None  # after_request: the response, unchanged

        return on_throttled_endpoint

    for hooks in (app.before_request_funcs, app.after_request_funcs, app.teardown_request_funcs):
        chain = hooks.get(None, [])
        chain[:] = [scoped(hook) if is_limiter_hook(hook) else hook for hook in chain]


def is_limiter_hook(hook: Callable[..., Any]) -> bool:
    owner = getattr(getattr(hook, "func", hook), "__module__", "") or ""
    return owner.startswith("flask_limiter")
