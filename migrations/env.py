"""Alembic environment: migrations run against the app's own engine and metadata."""

from __future__ import annotations

import logging
from logging.config import fileConfig

from alembic import context
from flask import current_app

config = context.config
if config.config_file_name and not logging.getLogger().handlers:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

db = current_app.extensions["migrate"].db
engine = db.engine
config.set_main_option(
    "sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%")
)


def process_revision_directives(context, revision, directives):
    """Never write an empty migration when autogenerate finds nothing."""
    if getattr(config.cmd_opts, "autogenerate", False) and directives[0].upgrade_ops.is_empty():
        directives[:] = []


def render_item(type_, obj, autogen_context):
    """Write the UTC timestamp type as the plain column type it stores (no app import in
    migrations)."""
    if type_ == "type" and obj.__class__.__name__ == "UTCDateTime":
        return "sa.DateTime(timezone=True)"
    return False


def options() -> dict:
    return {
        "target_metadata": db.metadata,
        "compare_type": True,
        # SQLite alters tables by copying them; batch mode makes that automatic.
        "render_as_batch": engine.dialect.name == "sqlite",
        "process_revision_directives": process_revision_directives,
        "render_item": render_item,
    }


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), literal_binds=True, **options())
    with context.begin_transaction():
        context.run_migrations()


def restore_foreign_keys(connection) -> None:
    """Turn foreign keys back on before the connection returns to the pool.

    SQLite ignores the pragma inside a transaction, and the check above autobegins one (Alembic
    runs SQLite migrations in per-migration transactions, not one around them all); without
    ending it first the pooled connection would go on serving requests with foreign keys off.
    """
    if connection.in_transaction():
        connection.commit()
    driver = connection.connection.driver_connection
    driver.execute("PRAGMA foreign_keys=ON")
    if driver.execute("PRAGMA foreign_keys").fetchone()[0] != 1:
        connection.invalidate()


def run_migrations_online() -> None:
    with engine.connect() as connection:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:
            # Batch mode rebuilds a table by copying it and dropping the old one; with foreign
            # keys on, SQLite's DROP TABLE deletes the rows that reference it (ON DELETE
            # CASCADE). The pragma only takes effect outside a transaction, so it is set on the
            # driver's connection before Alembic begins one, and checked after.
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
        try:
            context.configure(connection=connection, **options())
            with context.begin_transaction():
                context.run_migrations()
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(f"Migration left dangling references: {broken[:5]}")
        finally:
            if sqlite:
                restore_foreign_keys(connection)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
