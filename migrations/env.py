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


def run_migrations_online() -> None:
    with engine.connect() as connection:
        context.configure(connection=connection, **options())
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
