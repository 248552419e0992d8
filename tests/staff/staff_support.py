"""Driving the dashboard like a browser does: cookies, forms and their CSRF tokens."""

from __future__ import annotations

import re
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

TOKEN_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_from(page: TestResponse) -> str:
    match = TOKEN_FIELD.search(page.get_data(as_text=True))
    assert match, "the page carries no CSRF token"
    return match.group(1)


def csrf_of(client: FlaskClient, path: str = "/dashboard/login") -> str:
    """The CSRF token a page of ``path`` hands this browser."""
    return csrf_from(client.get(path))


def sign_in(client: FlaskClient, token: str) -> TestResponse:
    """Sign in with a session token, as the sign-in page's token form does."""
    return client.post(
        "/dashboard/login/token", data={"token": token, "csrf_token": csrf_of(client)}
    )


def submit(
    client: FlaskClient, path: str, data: dict[str, Any] | None = None, **kw
) -> TestResponse:
    """Post a dashboard form with the token a dashboard page gave this browser."""
    return client.post(
        path, data={**(data or {}), "csrf_token": csrf_of(client, "/dashboard/")}, **kw
    )


def text_of(response: TestResponse) -> str:
    return response.get_data(as_text=True)


NONCE_FIELD = re.compile(r'name="upload_nonce" value="([^"]+)"')


def upload_nonce(client: FlaskClient) -> str:
    """The one-time nonce the CSV upload form hands this browser."""
    match = NONCE_FIELD.search(text_of(client.get("/dashboard/credentials/upload")))
    assert match, "the upload form carries no nonce"
    return match.group(1)


def issue_uploads(app) -> int:
    """What the worker does for CSV uploads (and any other job waiting): run the queue."""
    from app.jobs.queue import queue_of

    return queue_of(app).run_pending()
