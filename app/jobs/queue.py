"""The Huey queue of one application: storage chosen by configuration, jobs bound to it.

``JOBS_QUEUE_URL`` picks the storage: empty for SQLite (a file beside the SQLite database, or
in the instance folder), ``redis://...`` for Redis, ``sqlite:///path`` for a given file,
``memory://`` for a queue that lives in one process (tests that never run a worker).

Each queue of ``app.jobs.QUEUES`` is a Huey instance of its own in that storage:
``JOBS_QUEUE_NAME`` for the housekeeping queue, ``<JOBS_QUEUE_NAME>.deliveries`` for the
deliveries (``.uploads``, ``.didcomm``, ``.zk`` likewise), so each is worked by its own threads (``flask jobs worker``).
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
    """One application's Huey instances, one per queue, with every registered job bound to
    the instance of its queue."""

    def __init__(self, hueys: Mapping[str, Huey], app: Flask) -> None:
        self.hueys = dict(hueys)
        self.app = app
        self.outage = jobs.QueueOutage()
        self.tasks: dict[str, TaskWrapper] = {}
        for registered in jobs.registered().values():
            self._bind(registered)

    @property
    def huey(self) -> Huey:
        """The housekeeping queue, whose scheduler runs the periodic jobs."""
        return self.hueys[jobs.HOUSEKEEPING]

    def _bind(self, registered: jobs.Job) -> None:
        run = _in_app_context(self.app, registered.func)
        huey = self.hueys[registered.queue]
        if registered.schedule is not None:
            wrapper = huey.periodic_task(registered.schedule, name=registered.name)(run)
        else:
            wrapper = huey.task(name=registered.name)(run)
        self.tasks[registered.name] = wrapper

    def enqueue(self, name: str, *args: Any, delay: float | None = None) -> None:
        task = self.tasks[name]
        if delay:
            task.schedule(args=args, delay=delay)
        else:
            task(*args)

    def run_pending(self, limit: int | None = None) -> int:
        """Run the jobs waiting in the queues in this process, oldest first in each queue,
        until they are empty (or ``limit`` ran); delayed jobs stay scheduled. For tests and
        one-off commands."""
        ran = 0
        while limit is None or ran < limit:
            # Asked first: Redis storage blocks a second on an empty dequeue.
            huey = next((h for h in self.hueys.values() if h.pending_count()), None)
            if huey is None:
                break
            task: Task | None = huey.dequeue()
            if task is None:
                break
            huey.execute(task)
            ran += 1
        return ran

    def pending_count(self) -> int:
        return sum(huey.pending_count() for huey in self.hueys.values())

    def waiting(self, queue: str) -> int:
        huey = self.hueys[queue]
        return huey.pending_count() + huey.scheduled_count()

    def flush(self) -> None:
        """Empty every queue and schedule (tests sharing one storage)."""
        for huey in self.hueys.values():
            huey.flush()

    def close(self) -> None:
        """Let go of the storage's connections now rather than when the queue is collected:
        an application built and dropped (a test, a one-off command) leaves no socket open."""
        for huey in self.hueys.values():
            pool = getattr(huey.storage, "pool", None)
            if pool is not None:
                pool.disconnect()


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


def queue_name(config: Mapping[str, Any], queue: str = jobs.HOUSEKEEPING) -> str:
    """The housekeeping queue keeps the configured name (what deployments already have)."""
    name = config.get("JOBS_QUEUE_NAME") or "verity"
    return name if queue == jobs.HOUSEKEEPING else f"{name}.{queue}"


def build_huey(config: Mapping[str, Any], queue: str = jobs.HOUSEKEEPING) -> Huey:
    url = config.get("JOBS_QUEUE_URL") or ""
    name = queue_name(config, queue)
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
    hueys = {queue: build_huey(app.config, queue) for queue in jobs.QUEUES}
    app.extensions[EXTENSION] = JobQueue(hueys, app)
    jobs.provide(lambda: current_app.extensions[EXTENSION])


def queue_of(app: Flask) -> JobQueue:
    return app.extensions[EXTENSION]
