"""The migrations leave the database as the application expects to find it."""

from __future__ import annotations

from pathlib import Path

from config_for_tests import TEST_CONFIG
from flask_migrate import upgrade

from app import create_app
from app.extensions import db


def test_sqlite_connections_keep_foreign_keys_on_after_upgrading(tmp_path: Path) -> None:
    """The upgrade turns them off to rebuild tables; the pooled connection must not stay so.

    Otherwise whichever request later draws that connection could delete a recipient who still
    holds credentials, or a schema a verification uses, without the database refusing it.
    """
    app = create_app({**TEST_CONFIG, "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/m.db"})
    with app.app_context():
        upgrade()
        try:
            with db.engine.connect() as connection:
                assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        finally:
            db.engine.dispose()
