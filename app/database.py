"""Engine settings per storage engine.

SQLite is the zero-set-up default. Python's sqlite3 driver opens transactions lazily and
breaks SAVEPOINTs, and deferred transactions that later write fail at once under contention
instead of waiting; so the driver's own handling is switched off and every transaction starts
with BEGIN IMMEDIATE, which waits up to the busy timeout. WAL lets readers run beside a writer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

F = TypeVar("F", bound=Callable[..., Any])
BUSY_TIMEOUT_MS = 30_000
_read_only: ContextVar[bool] = ContextVar("read_only_transaction", default=False)


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


def in_read_only_view() -> bool:
    return _read_only.get()


def forbid_writes_when_read_only(session: Any, _context: Any, _instances: Any) -> None:
    if _read_only.get() and (session.new or session.dirty or session.deleted):
        raise RuntimeError("A read-only view tried to write; drop @read_only from it")


def engine_options(uri: str) -> dict[str, Any]:
    if uri.startswith("sqlite"):
        return {"connect_args": {"timeout": 30, "check_same_thread": False}}
    return {"pool_pre_ping": True}


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
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN" if _read_only.get() else "BEGIN IMMEDIATE")


def write_aside(engine: Engine, statement: Any, wait_ms: int = 200) -> bool:
    """Run one write in a short transaction of its own, for bookkeeping a read-only view does.

    It waits at most ``wait_ms`` for the lock (SQLite's busy timeout is 30 s for real work) and
    gives up rather than slow the answer: returns whether the write happened.
    """
    sqlite = engine.dialect.name == "sqlite"
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
    return True
