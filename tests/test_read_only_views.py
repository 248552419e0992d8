"""Views that only read: the status poll and the authenticated lookup.

On SQLite their transactions begin deferred, so they never queue behind a writer for the write
lock; they must therefore never write, and the key's last use is noted in a transaction of its
own.
"""

from __future__ import annotations

import html
import re
import sqlite3
import uuid
from datetime import timedelta

import pytest
from factories import make_apikey, make_staff, make_verification
from flask import Flask
from markupsafe import Markup
from pages.pages_support import wallet_link
from sqlalchemy.orm import Session

from app import clock
from app.database import forbid_writes_when_read_only, read_only
from app.extensions import db
from app.integrations.models import Integration
from app.pages.qr import QrCache


@pytest.fixture
def opened(app: Flask, client) -> dict:
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification},
    ).get_json()
    return {
        "staff": staff,
        "verification": verification,
        "individual": individual["id"],
        "key": make_apikey(app, staff.organization_id),
    }


def sqlite_path(app: Flask) -> str | None:
    url = app.config["SQLALCHEMY_DATABASE_URI"]
    return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else None


def test_polls_lookups_and_repeated_opens_answer_while_a_writer_holds_the_write_lock(
    app, client, opened
):
    path = sqlite_path(app)
    if path is None:
        pytest.skip("the write lock is SQLite's; PostgreSQL readers never wait for writers")
    writer = sqlite3.connect(path, isolation_level=None, timeout=0)
    writer.execute("BEGIN IMMEDIATE")
    try:
        poll = client.get(f"/verifications/{opened['individual']}/verify")
        lookup = client.get(
            f"/verifications/{opened['verification']}/individuals/crm-1",
            headers={"apikey": opened["key"]},
        )
        reopened = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-1", "verification_id": opened["verification"]},
        )
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert poll.status_code == 200, poll.get_json()
    assert lookup.status_code == 200, lookup.get_json()
    assert reopened.status_code == 200, reopened.get_json()  # a retry only reads


def test_the_persons_page_and_its_poll_answer_while_a_writer_holds_the_write_lock(
    app, client, opened
):
    """Within the link's window the page and its poll only read: no BEGIN IMMEDIATE."""
    path = sqlite_path(app)
    if path is None:
        pytest.skip("the write lock is SQLite's; PostgreSQL readers never wait for writers")
    page = client.get(f"/i/{opened['individual']}")  # hands out the link: a write
    poll_path = html.unescape(re.search(r'hx-get="([^"]+)"', page.get_data(as_text=True))[1])
    writer = sqlite3.connect(path, isolation_level=None, timeout=0)
    writer.execute("BEGIN IMMEDIATE")
    try:
        again = client.get(f"/i/{opened['individual']}")
        poll = client.get(poll_path)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert again.status_code == 200
    assert poll.status_code == 204
    assert wallet_link(again.get_data(as_text=True)) == wallet_link(page.get_data(as_text=True))


class LockProbingQrCache(QrCache):
    """The real cache, which also notes whether another connection could take SQLite's write
    lock at the moment a code is drawn."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.lock_was_free: list[bool] = []

    def svg(self, data: str, label: str) -> Markup:
        other = sqlite3.connect(self.path, isolation_level=None, timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            self.lock_was_free.append(True)
        except sqlite3.OperationalError:
            self.lock_was_free.append(False)
        finally:
            other.close()
        return super().svg(data, label)


def test_a_page_that_hands_out_a_new_link_draws_its_code_with_the_write_lock_free(
    app, client, opened
):
    """Drawing a QR code takes tens of milliseconds: other writers must not wait for it."""
    path = sqlite_path(app)
    if path is None:
        pytest.skip("the write lock is SQLite's; PostgreSQL readers never wait for writers")
    probe = LockProbingQrCache(path)
    app.extensions["qr_cache"] = probe
    page = client.get(f"/i/{opened['individual']}")  # hands out the link: a write
    assert page.status_code == 200
    assert probe.lock_was_free == [True]
    assert client.get(f"/verifications/{opened['individual']}/verify").get_json()["status"] == (
        "REQUESTED"  # the link was kept all the same
    )


def last_used(app: Flask) -> object:
    with app.app_context():
        value = db.session.scalars(db.select(Integration.last_used_at)).one()
        db.session.remove()
    return value


def test_a_lookup_notes_the_keys_use_even_when_the_answer_is_not_found(app, client, opened):
    assert last_used(app) is None
    missing = client.get(
        f"/verifications/{uuid.uuid4()}/individuals/crm-1", headers={"apikey": opened["key"]}
    )
    assert missing.status_code == 400
    first = last_used(app)
    assert first is not None

    later = clock.now() + timedelta(hours=1)
    clock.set_source(lambda: later)
    client.get(
        f"/verifications/{opened['verification']}/individuals/crm-1",
        headers={"apikey": opened["key"]},
    )
    assert last_used(app) == later


def test_a_read_only_view_that_writes_fails_loudly(app, opened):
    with app.app_context():

        @read_only
        def sneaky() -> None:
            integration = db.session.scalars(db.select(Integration)).first()
            integration.name = "renamed by a view that should only read"
            db.session.flush()

        with pytest.raises(RuntimeError, match="read-only view tried to write"):
            sneaky()
        db.session.rollback()
        db.session.remove()


def test_the_write_guard_is_installed_on_every_session(app):
    from sqlalchemy import event

    assert event.contains(Session, "before_flush", forbid_writes_when_read_only)


def test_a_status_poll_of_a_connected_individual_reads_one_row(app, client, opened):
    """The link a person's wallet opens carries its request by value, built from the request,
    its verification, schema and organization; a poll every 2 s must not read them again."""
    from sqlalchemy import event

    individual_id = opened["individual"]
    first = client.get(f"/verifications/{individual_id}/connect").get_json()["connection_url"]
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        polled = client.get(f"/verifications/{individual_id}/verify").get_json()
        again = client.get(f"/verifications/{individual_id}/verify").get_json()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert polled["connection_url"] == again["connection_url"] == first
    assert "dcql_query=" in first
    assert len(statements) == 2, statements
