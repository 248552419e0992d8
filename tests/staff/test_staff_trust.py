"""The dashboard's Trust page: the organization's trust sources with their refresh state,
adding one (CSRF-checked, refused with the API's words), "Refresh now", deleting one, and the
verification form offering them."""

from __future__ import annotations

import re

from factories import make_staff, make_verification
from flask import Flask
from flask.testing import FlaskClient
from staff_support import sign_in, submit, text_of
from trust_sources.sources_support import make_party

from app.jobs.queue import queue_of

PAGE = "/dashboard/trust"
ROOT = make_party("Our root CA", ca=True)
SIGNER = make_party("List signer", rsa_key=True)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)


def add(browser: FlaskClient, **fields):
    return submit(browser, PAGE, fields)


def source_path(response) -> str:
    location = response.headers["Location"]
    assert re.search(r"/dashboard/trust/[0-9a-f-]{36}$", location), location
    return location


def test_adding_pem_certificates_shows_the_source_and_its_count(browser, client, owner):
    page = browser.get(PAGE)
    assert page.status_code == 200
    assert f'<a href="{PAGE}" aria-current="page">Trust</a>' in text_of(page)
    assert 'value="http://uri.etsi.org/19602/SvcType/PID/Issuance"' in text_of(page)

    added = add(browser, name="Our CAs", kind="PEM", certificates=ROOT.pem)
    assert added.status_code == 303
    detail = text_of(browser.get(source_path(added)))
    assert "Our CAs" in detail and "PEM certificates" in detail
    assert '<dd data-testid="certificate-count">1</dd>' in detail
    listed = client.get("/trust/sources", headers=owner.headers()).get_json()
    assert [s["name"] for s in listed["results"]] == ["Our CAs"]


def test_a_refused_form_keeps_what_was_typed_and_says_why(browser, client, owner):
    refused = add(
        browser, name="DE", kind="TRUSTED_LIST", url="https://tl.example/de.xml", certificates="x"
    )
    assert refused.status_code == 400
    page = text_of(refused)
    assert "signer_certificates holds no readable PEM certificate" in page
    assert 'value="https://tl.example/de.xml"' in page
    assert client.get("/trust/sources", headers=owner.headers()).get_json()["total"] == 0


def test_forms_without_the_csrf_token_are_refused(browser, client, owner):
    refused = browser.post(PAGE, data={"name": "x", "kind": "PEM", "certificates": ROOT.pem})
    assert refused.status_code == 403
    assert client.get("/trust/sources", headers=owner.headers()).get_json()["total"] == 0


def test_a_failed_refresh_shows_why_and_refresh_now_queues_another(app: Flask, browser):
    queue = queue_of(app)
    for huey in queue.hueys.values():  # the shared app's queues: what other tests left there
        huey.flush()
    # An address the outbound fetcher refuses (loopback, outside development): no network.
    added = add(
        browser,
        name="Unreachable list",
        kind="TRUSTED_LIST",
        url="https://127.0.0.1:9/tl.xml",
        certificates=SIGNER.pem,
        service_types="http://uri.etsi.org/TrstSvc/Svctype/CA/QC",
    )
    path = source_path(added)
    assert queue.run_pending() == 1
    detail = text_of(browser.get(path))
    assert 'data-testid="last-error"' in detail
    assert "Refused to fetch from 127.0.0.1" in detail
    assert "Not read yet" in detail

    refreshed = submit(browser, f"{path}/refresh")
    assert refreshed.status_code == 303
    assert queue.pending_count() == 1
    queue.run_pending()


def test_a_source_in_use_is_not_deleted_and_the_form_offers_sources(app, browser, client, owner):
    path = source_path(add(browser, name="Our CAs", kind="PEM", certificates=ROOT.pem))
    source_id = path.rsplit("/", 1)[1]
    make_verification(client, owner, trust_sources=[source_id], attributes=[])
    form = text_of(browser.get("/dashboard/verifications/new"))
    assert f'name="trust_sources" value="{source_id}"' in form

    refused = submit(browser, f"{path}/delete")
    assert refused.status_code == 409
    assert "is used by verification(s) &#39;Adult residents&#39;" in text_of(refused)


def test_another_organizations_source_is_not_found(app, browser):
    path = source_path(add(browser, name="Our CAs", kind="PEM", certificates=ROOT.pem))
    stranger = make_staff(app, email="eve@example.test", org_name="Eve Co")
    other = app.test_client()
    sign_in(other, stranger.token)
    assert other.get(path).status_code == 404
    assert "Our CAs" not in text_of(other.get(PAGE))


def test_the_pages_keep_the_dashboards_strict_csp(browser):
    path = source_path(add(browser, name="Our CAs", kind="PEM", certificates=ROOT.pem))
    for target in (PAGE, path):
        response = browser.get(target)
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy
        assert response.headers["X-Frame-Options"] == "DENY"
        assert not INLINE_SCRIPT.search(text_of(response))
        assert not STYLE_ATTRIBUTE.search(text_of(response))


def test_the_verification_form_saves_the_ticked_sources(browser, client, owner):
    path = source_path(add(browser, name="Our CAs", kind="PEM", certificates=ROOT.pem))
    source_id = path.rsplit("/", 1)[1]
    created = submit(
        browser,
        "/dashboard/verifications/new",
        {
            "name": "By our CAs",
            "schema_id": "5c4a3f3e-0b1d-4c7e-9a51-000000000001",
            "claims": ["given_name"],
            "trust_sources": [source_id],
        },
    )
    assert created.status_code == 303, text_of(created)
    (verification,) = client.get("/verifications", headers=owner.headers()).get_json()["results"]
    assert verification["trust_sources"] == [source_id]
    detail = text_of(browser.get(created.headers["Location"]))
    assert f'href="{path}">Our CAs</a>' in detail
    assert f'name="trust_sources" value="{source_id}" checked' in detail
