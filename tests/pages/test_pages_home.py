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


def test_the_root_names_every_protocol_and_format_it_speaks(client):
    page = " ".join(client.get("/").get_data(as_text=True).split())
    for words in (
        "OpenID4VP",
        "Digital Credentials API",
        "DIDComm",
        "SD-JWT VC",
        "ISO mdoc",
        "VC-JWT",
        "OpenID4VCI",
    ):
        assert words in page, words
    assert "README" not in page


def test_the_root_links_the_documentation_site_when_it_is_published(make_app):
    published = make_app(DOCS_URL="https://docs.verity.example/")
    page = published.test_client().get("/").get_data(as_text=True)
    assert '<a href="https://docs.verity.example/" data-testid="to-docs">' in page


def test_the_root_names_where_the_documentation_is_when_no_site_is_set(client):
    page = client.get("/").get_data(as_text=True)
    assert "<code>make docs</code>" in page and 'data-testid="to-docs"' not in page
