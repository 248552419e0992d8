"""Dashboard fixtures: a browser-like client already signed in as a PRO organization's owner."""

from __future__ import annotations

import pytest
from factories import Staff, make_staff
from flask import Flask
from flask.testing import FlaskClient
from staff_support import sign_in


@pytest.fixture
def owner(app: Flask) -> Staff:
    return make_staff(app)


@pytest.fixture
def browser(app: Flask, owner: Staff) -> FlaskClient:
    """A test client holding the owner's dashboard session cookie."""
    client = app.test_client()
    response = sign_in(client, owner.token)
    assert response.status_code == 302, response.get_data(as_text=True)
    return client
