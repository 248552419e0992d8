"""One transaction per request: committed for a success, rolled back for any error answer.

Views never roll back themselves; the application does it at the request boundary, for an
exception (before any error handler runs) and for a view's own answer of 400 or more.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.errors import Conflict
from app.extensions import db
from app.organizations.models import Organization


def organizations() -> int:
    return db.session.scalar(select(func.count()).select_from(Organization)) or 0


@pytest.fixture
def boundary_app(make_app):
    """An app with routes that write an organization and then answer in different ways."""
    app = make_app()

    def write() -> None:
        db.session.add(Organization(name="written by a view"))
        db.session.flush()

    def answers_201():
        write()
        return "", 201

    def answers_409():
        write()
        return "refused", 409

    def raises_conflict():
        write()
        raise Conflict("refused")

    def raises_unexpected():
        write()
        raise RuntimeError("boom")

    for view in (answers_201, answers_409, raises_conflict, raises_unexpected):
        app.add_url_rule(f"/boundary/{view.__name__}", view_func=view, methods=["POST"])
    return app


@pytest.mark.parametrize(
    ("route", "status", "kept"),
    [
        ("answers_201", 201, 1),
        ("answers_409", 409, 0),
        ("raises_conflict", 409, 0),
        ("raises_unexpected", 500, 0),
    ],
)
def test_only_a_success_commits_what_the_view_wrote(boundary_app, route, status, kept):
    assert boundary_app.test_client().post(f"/boundary/{route}").status_code == status
    with boundary_app.app_context():
        assert organizations() == kept


def test_an_unknown_dashboard_address_is_a_dashboard_page(client):
    response = client.get("/dashboard/no/such/page")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "There is no such page in the dashboard." in response.get_data(as_text=True)
