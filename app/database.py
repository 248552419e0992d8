"""Engine settings per storage engine.

SQLite is the zero-set-up default. Python's sqlite3 driver opens transactions lazily and
breaks SAVEPOINTs, and deferred transactions that later write fail at once under contention
instead of waiting; so the driver's own handling is switched off and every transaction starts
with BEGIN IMMEDIATE, which waits up to the busy timeout. WAL lets readers run beside a writer.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


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
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
