"""The Huey queue of one application: storage chosen by configuration, jobs bound to it.

``JOBS_QUEUE_URL`` picks the storage: empty for SQLite (a file beside the SQLite database, or
in the instance folder), ``redis://...`` for Redis, ``sqlite:///path`` for a given file,
``memory://`` for a queue that lives in one process (tests that never run a worker).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask, current_app
from huey import Huey, MemoryHuey, RedisHuey
from huey.api import Task, TaskWrapper
from huey.storage import SqliteStorage
from sqlalchemy.engine import make_url

from app import config as settings
from app import jobs
from app.extensions import db

log = logging.getLogger(__name__)

# Where the application keeps its queue (``app.extensions``).
EXTENSION = "jobs"


class JobQueue:
    """One application's Huey instance with every registered job bound to it."""

    def __init__(self, huey: Huey, app: Flask) -> None:
        self.huey = huey
        self.app = app
        self.tasks: dict[str, TaskWrapper] = {}
        for registered in jobs.registered().values():
            self._bind(registered)

    def _bind(self, registered: jobs.Job) -> None:
        run = _in_app_context(self.app, registered.func)
        if registered.schedule is not None:
            wrapper = self.huey.periodic_task(registered.schedule, name=registered.name)(run)
        else:
            wrapper = self.huey.task(name=registered.name)(run)
        self.tasks[registered.name] = wrapper

    def enqueue(self, name: str, *args: Any, delay: float | None = None) -> None:
        task = self.tasks[name]
        if delay:
            task.schedule(args=args, delay=delay)
        else:
            task(*args)

    def run_pending(self, limit: int | None = None) -> int:
        """Run the jobs waiting in the queue in this process, oldest first, until it is empty
        (or ``limit`` ran); delayed jobs stay scheduled. For tests and one-off commands."""
        ran = 0
        while limit is None or ran < limit:
            # Asked first: Redis storage blocks a second on an empty dequeue.
            if self.huey.pending_count() == 0:
                break
            task: Task | None = self.huey.dequeue()
            if task is None:
                break
            self.huey.execute(task)
            ran += 1
        return ran

    def pending_count(self) -> int:
        return self.huey.pending_count()


def _in_app_context(app: Flask, func: Callable[..., Any]) -> Callable[..., Any]:
    """A job runs like a request: in an app context, committed once if it returns."""

    def run(*args: Any) -> Any:
        with app.app_context():
            try:
                result = func(*args)
                db.session.commit()
                return result
            except BaseException:
                db.session.rollback()
                raise
            finally:
                db.session.remove()

    run.__name__ = getattr(func, "__name__", "job")
    run.__qualname__ = run.__name__
    return run


class DurableSqliteStorage(SqliteStorage):
    """Huey's SQLite storage with ``synchronous=NORMAL``: in WAL mode that cannot corrupt the
    file, and a power cut may lose only the last few enqueues, which the webhook sweep finds
    again in the database (the queue holds hints, the database the truth). Huey's default
    (FULL, an fsync per enqueue) measured about 40 times slower (bench/delivering.py).

    The file is opened (and its tables made) on first use, not when the application is built,
    so the service starts and answers even while the storage cannot be opened.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._schema_ready = False
        super().__init__(*args, **{**kwargs, "create_tables": False})

    def _create_connection(self) -> Any:
        connection = super()._create_connection()
        connection.execute("pragma synchronous=1")
        if not self._schema_ready:
            connection.execute(self.begin_sql)
            for statement in self.ddl:
                connection.execute(statement)
            connection.commit()
            self._schema_ready = True
        return connection


def build_huey(config: Mapping[str, Any]) -> Huey:
    url = config.get("JOBS_QUEUE_URL") or ""
    name = config.get("JOBS_QUEUE_NAME") or "verity"
    # Results are not read by anyone: keeping them would only grow the storage.
    options: dict[str, Any] = {"results": False, "utc": True}
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisHuey(name, url=url, **options)
    if url.startswith("memory://"):
        return MemoryHuey(name, **options)
    if url.startswith("sqlite:///"):
        return _sqlite_huey(name, url.removeprefix("sqlite:///"), options)
    if url:
        raise RuntimeError(f"JOBS_QUEUE_URL must be redis://, sqlite:/// or memory://: {url!r}")
    return _sqlite_huey(name, str(default_sqlite_path(config)), options)


def _sqlite_huey(name: str, filename: str, options: dict[str, Any]) -> Huey:
    return Huey(name, storage_class=DurableSqliteStorage, filename=filename, **options)


def default_sqlite_path(config: Mapping[str, Any]) -> Path:
    """Beside the SQLite database (``verity.sqlite3`` -> ``verity-jobs.sqlite3``), or in the
    instance folder when the database is elsewhere."""
    database = make_url(config["SQLALCHEMY_DATABASE_URI"])
    if database.get_backend_name() == "sqlite" and database.database not in (None, "", ":memory:"):
        path = Path(database.database)
        return path.with_name(f"{path.stem}-jobs.sqlite3")
    return settings.INSTANCE_DIR / "jobs.sqlite3"


def init_app(app: Flask) -> None:
    import importlib

    for module in jobs.JOB_MODULES:
        importlib.import_module(module)
    app.extensions[EXTENSION] = JobQueue(build_huey(app.config), app)
    jobs.provide(lambda: current_app.extensions[EXTENSION])


def queue_of(app: Flask) -> JobQueue:
    return app.extensions[EXTENSION]
