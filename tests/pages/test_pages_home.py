"""``GET /`` is a small page pointing to the dashboard and the API description; pages name
their icon, and ``/favicon.ico`` answers too."""

from __future__ import annotations


def test_the_root_is_a_page_pointing_to_the_dashboard_and_the_docs(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert 'href="/dashboard/"' in page
    assert 'href="/openapi.json"' in page
    assert "default-src" in response.headers["Content-Security-Policy"]


def test_every_page_names_an_icon_that_is_served(client):
    for path in ("/", "/dashboard/login"):
        page = client.get(path).get_data(as_text=True)
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    with client.get("/static/favicon.svg") as icon:
        assert icon.status_code == 200
        assert icon.mimetype == "image/svg+xml"


def test_favicon_ico_is_not_a_404(client):
    with client.get("/favicon.ico", follow_redirects=True) as response:
        assert response.status_code == 200
        assert response.mimetype == "image/svg+xml"


def test_the_operations_endpoints_are_unchanged(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/openapi.json").get_json()["openapi"] == "3.1.0"
