"""Engine settings per storage engine.

SQLite is the zero-set-up default. Python's sqlite3 driver opens transactions lazily and
breaks SAVEPOINTs, and deferred transactions that later write fail at once under contention
instead of waiting; so the driver's own handling is switched off and every transaction starts
with BEGIN IMMEDIATE, which waits up to the busy timeout. WAL lets readers run beside a writer.
"""

from __future__ import annotations

import logging
import re
import select
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

import psycopg
from sqlalchemy import event
from sqlalchemy.engine import Engine, ExceptionContext
from sqlalchemy.exc import DisconnectionError, OperationalError

from app.errors import InvalidRequest, StorageUnavailable

log = logging.getLogger("verity.storage")
F = TypeVar("F", bound=Callable[..., Any])
UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")
BUSY_TIMEOUT_MS = 30_000
_read_only: ContextVar[bool] = ContextVar("read_only_transaction", default=False)
# Set around ``read_row``: its one SELECT runs without a transaction around it.
_single_statement: ContextVar[bool] = ContextVar("single_statement", default=False)
# Set around a write that gives up quickly on a busy SQLite database: that is no outage.
_may_be_busy: ContextVar[bool] = ContextVar("may_be_busy", default=False)


def read_only(view: F) -> F:
    """Mark a view whose transaction only reads.

    On SQLite its transaction begins deferred instead of IMMEDIATE: WAL lets any number of
    readers run beside a writer, so a status poll never queues for the write lock (measured:
    twice the polls per second with two workers). A flush inside such a view is a bug, and
    ``forbid_writes_when_read_only`` makes it fail loudly rather than risk a stale snapshot.
    """

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with reading():
            return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextmanager
def reading() -> Iterator[None]:
    """A block whose queries only read (a transaction begun inside it begins deferred)."""
    token = _read_only.set(True)
    try:
        yield
    finally:
        _read_only.reset(token)


def read_row(engine: Engine, statement: Any, parameters: dict[str, Any]) -> Any | None:
    """The first row of one SELECT, on a connection of its own and outside the ORM session.

    For the hottest reads (status polls, the authenticated lookup): a Core statement built
    once and compiled once (SQLAlchemy caches it) costs a third of an ORM load with its
    session, measured. The transaction begins deferred on SQLite and ends with the read.
    """
    # One statement needs no transaction around it: without BEGIN and ROLLBACK the read is
    # one round trip to PostgreSQL instead of three (psycopg sets autocommit locally), and on
    # SQLite the statement is its own transaction.
    token = _single_statement.set(True)
    try:
        with reading(), engine.connect() as connection:
            if engine.dialect.name == "postgresql":
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
            return connection.execute(statement, parameters).first()
    finally:
        _single_statement.reset(token)


def in_read_only_view() -> bool:
    return _read_only.get()


def forbid_writes_when_read_only(session: Any, _context: Any, _instances: Any) -> None:
    if _read_only.get() and (session.new or session.dirty or session.deleted):
        raise RuntimeError("A read-only view tried to write; drop @read_only from it")


def engine_options(uri: str) -> dict[str, Any]:
    if uri.startswith("sqlite"):
        return {"connect_args": {"timeout": 30, "check_same_thread": False}}
    # No pool_pre_ping: a SELECT 1 inside a transaction of its own at every checkout was three
    # of a status read's five round trips. ``configure_postgresql`` checks idle connections
    # without asking the server; recycling them bounds how long one sits idle behind a
    # firewall that may drop it silently.
    return {"pool_recycle": 1800}


def configure_sqlite(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL cannot corrupt the database; a power cut may lose the last few
        # commits, which a production deployment avoids by running on PostgreSQL anyway.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # Deleted rows are overwritten with zeros, not left in free space where anyone who
        # reads the file finds them: erased claims must leave no bytes behind.
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        if _single_statement.get():
            return  # the driver's autocommit: the one SELECT is its own transaction
        if _read_only.get():
            connection.exec_driver_sql("BEGIN")
        elif _may_be_busy.get():
            connection.exec_driver_sql("BEGIN IMMEDIATE")  # its own short busy timeout
        else:
            begin_writing(connection)


# How often a writer asks again for SQLite's write lock while another holds it.
LOCK_POLL_SECONDS = 0.002


def begin_writing(connection: Any) -> None:
    """BEGIN IMMEDIATE, polling for the write lock every couple of milliseconds.

    SQLite's own busy handler backs off to one try every 100 ms. A writer waiting behind a
    stream of short transactions (a CSV upload issuing 20 rows at a time) then misses the
    gaps between them and waits for the whole stream; asking often takes the first gap. The
    last try, at the busy timeout, goes through the usual path, so a lock held too long is an
    outage exactly as before.
    """
    driver = connection.connection.driver_connection
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    driver.execute("PRAGMA busy_timeout=0")
    try:
        while time.monotonic() < deadline:
            try:
                driver.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "database is locked" not in str(exc).lower():
                    break  # not the lock: let the usual path raise it
            time.sleep(LOCK_POLL_SECONDS)
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    finally:
        driver.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def configure_postgresql(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        return

    @event.listens_for(engine, "checkout")
    def on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        # The pool then opens a fresh connection, or reports the outage if it cannot.
        if closed_by_server(dbapi_connection):
            raise DisconnectionError("the server closed this pooled connection")


def closed_by_server(dbapi_connection: Any) -> bool:
    """Whether an idle pooled connection is known dead, without a round trip.

    A server that restarts or shuts down, or a proxy that drops the connection, closes the
    socket, and an idle connection has nothing else to read: a readable socket means it is
    gone. A connection that died silently is found by its first statement instead, which
    answers that request with STORAGE_UNAVAILABLE and discards the whole pool.
    """
    if dbapi_connection.closed or dbapi_connection.broken:
        return True
    poller = select.poll()
    poller.register(dbapi_connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


def write_aside(engine: Engine, statement: Any, wait_ms: int = 200) -> bool:
    """Run one write in a short transaction of its own, for bookkeeping a read-only view does.

    It waits at most ``wait_ms`` for the lock (SQLite's busy timeout is 30 s for real work) and
    gives up rather than slow the answer: returns whether the write happened.
    """
    sqlite = engine.dialect.name == "sqlite"
    token = _may_be_busy.set(True)
    try:
        with engine.connect() as connection:
            driver = connection.connection.driver_connection
            if sqlite:
                driver.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
            try:
                with connection.begin():
                    connection.execute(statement)
            finally:
                if sqlite:
                    driver.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    except OperationalError:
        return False
    finally:
        _may_be_busy.reset(token)
    return True


def scrub_erased(engine: Engine, wait_ms: int = 2000) -> bool:
    """After an erasure is committed on SQLite: fold the write-ahead log into the database
    and truncate it to nothing.

    ``secure_delete`` zeroes the erased rows in the pages the erasure writes, but the WAL
    still holds the older images of those pages, claims and all, until a checkpoint copies the
    new ones over and the log is cut; a plain checkpoint leaves the log file as it was, to be
    overwritten some time later. Readers still on an old snapshot may keep the log from being
    cut for a while: then this waits ``wait_ms`` at most and returns False, and the next
    erasure (or the automatic checkpoint's reuse of the log) cuts it. Nothing on PostgreSQL,
    whose storage is the server's to vacuum.
    """
    if engine.dialect.name != "sqlite":
        return True
    token = _may_be_busy.set(True)
    try:
        with engine.connect() as connection:
            driver = connection.connection.driver_connection
            driver.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
            try:
                busy, _, _ = driver.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                driver.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    except (OperationalError, sqlite3.OperationalError):
        return False
    finally:
        _may_be_busy.reset(token)
    return busy == 0


# SQLite's words for a database it cannot use right now (as opposed to a bad statement).
SQLITE_UNAVAILABLE = (
    "unable to open database file",
    "database is locked",
    "disk i/o error",
    "database or disk is full",
)


def unavailable(context: ExceptionContext) -> bool:
    """Whether a database error means "cannot reach storage", not "bad statement"."""
    if context.is_disconnect or context.connection is None:
        return True  # a lost connection, or none could be opened
    original = context.original_exception
    if isinstance(original, psycopg.Error):
        return isinstance(original, psycopg.OperationalError) and _connection_failed(original)
    message = str(original).lower()
    if _may_be_busy.get() and "database is locked" in message:
        return False
    return any(words in message for words in SQLITE_UNAVAILABLE)


def _connection_failed(error: Exception) -> bool:
    sqlstate = getattr(error, "sqlstate", None)
    # Class 08 is connection exceptions; 57P0x is the server shutting down or starting up.
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


class OutageLog:
    """One log line when storage becomes unreachable and one when it is back, per process.

    Every request during an outage answers 502 STORAGE_UNAVAILABLE; logging a traceback for
    each of them would bury the two lines an operator needs (measured before: 942 in 5 s).
    """

    def __init__(self) -> None:
        self.since: float | None = None
        self.refused = 0
        self.lock = threading.Lock()

    def failed(self, error: BaseException) -> None:
        with self.lock:
            self.refused += 1
            if self.since is not None:
                return
            self.since = time.monotonic()
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        log.error("storage unavailable: %s: %s", type(error).__name__, first_line[:200])

    def reached(self) -> None:
        if self.since is None:
            return
        with self.lock:
            if self.since is None:
                return
            seconds, refused = time.monotonic() - self.since, self.refused
            self.since, self.refused = None, 0
        log.warning(
            "storage available again after %.1f s (%d operations refused meanwhile)",
            seconds,
            refused,
        )


def _parameter_values(parameters: Any) -> Iterator[Any]:
    """Every bound value, whatever the shape: a row (dict or tuple), many rows, or the flat
    list SQLAlchemy builds for a multi-row INSERT."""
    pending = [parameters]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        else:
            yield item


def watch_storage(engine: Engine) -> OutageLog:
    """Turn an unreachable database into ``StorageUnavailable`` (502) and log the outage once.

    Also refuses, before any driver sees it, text that no engine can store or compare: NUL
    (PostgreSQL rejects it in text) and lone surrogates (not encodable as UTF-8).
    """
    outage = OutageLog()

    @event.listens_for(engine, "handle_error")
    def on_error(context: ExceptionContext) -> BaseException | None:
        if isinstance(context.original_exception, UnicodeEncodeError):
            return InvalidRequest("Text must be valid Unicode (a lone surrogate is not)")
        if not unavailable(context):
            return None
        outage.failed(context.original_exception)
        return StorageUnavailable()

    @event.listens_for(engine, "connect")
    def on_connect(_dbapi_connection: Any, _record: Any) -> None:
        outage.reached()

    @event.listens_for(engine, "commit")
    def on_commit(_connection: Any) -> None:
        # An outage without a reconnect (a database locked for longer than the busy timeout)
        # ends at the first transaction that goes through.
        outage.reached()

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def refuse_unstorable(
        _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool
    ) -> tuple[str, Any]:
        for value in _parameter_values(parameters):
            if isinstance(value, str) and UNSTORABLE_TEXT.search(value):
                raise InvalidRequest(
                    "Text must not contain NUL characters"
                    if "\x00" in value
                    else "Text must be valid Unicode (a lone surrogate is not)"
                )
        return statement, parameters

    return outage
