"""Refusing at once a webhook URL the deliveries would refuse, and "send a test event"."""

from __future__ import annotations

import pytest
from factories import make_staff
from webhook_support import add_endpoint, drain

from app.webhooks.operations import TEST_EVENT


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hooks",
        "https://10.0.0.8/hooks",
        "https://[::1]/hooks",
        "https://localhost:8443/hooks",
        "https://169.254.169.254/latest",
    ],
)
def test_a_url_deliveries_would_refuse_is_refused_at_creation_with_the_development_hint(
    app, client, url
):
    staff = make_staff(app)
    response = client.post("/webhooks/endpoints", json={"url": url}, headers=staff.headers())
    assert response.status_code == 400
    body = response.get_json()
    assert body["code"] == "INVALID_REQUEST"
    assert "deliveries go only to public addresses" in body["error"]
    assert "TRUST_ALLOW_PRIVATE=1 " in body["error"]
    assert ":8000" not in body["error"]  # Verity's own port (make run) is no receiver
    assert client.get("/webhooks/endpoints", headers=staff.headers()).get_json()["total"] == 0


def test_plain_http_is_refused_with_the_development_hint(app, client):
    staff = make_staff(app)
    response = client.post(
        "/webhooks/endpoints", json={"url": "http://127.0.0.1:8000/hooks"}, headers=staff.headers()
    )
    assert response.status_code == 400
    assert "TRUST_ALLOW_PRIVATE=1 " in response.get_json()["error"]


def test_the_development_setting_accepts_a_private_address(hooks_app):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    created = add_endpoint(client, staff, "https://127.0.0.1:9/hooks")
    assert created["url"] == "https://127.0.0.1:9/hooks"


def test_the_dashboard_form_explains_and_refuses_the_same(app, client):
    from staff.staff_support import sign_in, submit, text_of

    staff = make_staff(app)
    browser = app.test_client()
    sign_in(browser, staff.token)
    form = text_of(browser.get("/dashboard/webhooks"))
    assert "TRUST_ALLOW_PRIVATE=1<" in form and "=true" not in form and ":8000" not in form
    refused = submit(browser, "/dashboard/webhooks", {"url": "https://127.0.0.1/hooks"})
    assert refused.status_code == 400
    assert "deliveries go only to public addresses" in text_of(refused)


def test_the_dashboard_hint_says_what_the_development_setting_allows_while_it_is_on(hooks_app):
    """With TRUST_ALLOW_PRIVATE on, the hint does not claim https://127.0.0.1 is refused."""
    from staff.staff_support import sign_in, submit, text_of

    staff = make_staff(hooks_app)
    browser = hooks_app.test_client()
    sign_in(browser, staff.token)
    form = text_of(browser.get("/dashboard/webhooks"))
    assert "is refused here" not in form
    assert "are accepted too" in form and "TRUST_ALLOW_PRIVATE=1<" in form
    created = submit(browser, "/dashboard/webhooks", {"url": "https://127.0.0.1:9/hooks"})
    assert created.status_code in (200, 303), text_of(created)


def test_a_test_event_reaches_only_that_endpoint_signed(hooks_app, receiver):
    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url, events=["individual.verified"])
    other = add_endpoint(client, staff, receiver.url + "/other")
    response = client.post(f"/webhooks/endpoints/{endpoint['id']}/test", headers=staff.headers())
    assert response.status_code == 202
    queued = response.get_json()
    assert queued["type"] == TEST_EVENT and queued["state"] == "PENDING"
    drain(hooks_app)
    [arrived] = receiver.wait_for(1)
    payload = arrived.verified(endpoint["secret"])
    assert payload["type"] == TEST_EVENT
    assert payload["data"]["endpoint_id"] == endpoint["id"]
    deliveries = client.get(
        f"/webhooks/endpoints/{endpoint['id']}/deliveries", headers=staff.headers()
    ).get_json()["results"]
    assert [(d["type"], d["state"]) for d in deliveries] == [(TEST_EVENT, "DELIVERED")]
    others = client.get(
        f"/webhooks/endpoints/{other['id']}/deliveries", headers=staff.headers()
    ).get_json()
    assert others["total"] == 0


def test_a_test_event_for_another_organizations_endpoint_is_not_found(hooks_app, receiver):
    client = hooks_app.test_client()
    owner = make_staff(hooks_app)
    endpoint = add_endpoint(client, owner, receiver.url)
    stranger = make_staff(hooks_app, "eve@example.test", org_name="Eve")
    response = client.post(f"/webhooks/endpoints/{endpoint['id']}/test", headers=stranger.headers())
    assert response.status_code == 400
    assert response.get_json()["code"] == "NOT_FOUND"


def test_the_dashboard_button_sends_a_test_event(hooks_app, receiver):
    from staff.staff_support import sign_in, submit, text_of

    client = hooks_app.test_client()
    staff = make_staff(hooks_app)
    endpoint = add_endpoint(client, staff, receiver.url)
    browser = hooks_app.test_client()
    sign_in(browser, staff.token)
    page = f"/dashboard/webhooks/{endpoint['id']}"
    assert 'data-testid="send-test"' in text_of(browser.get(page))
    sent = submit(browser, f"{page}/test")
    assert sent.status_code == 303 and sent.headers["Location"] == page
    drain(hooks_app)
    [arrived] = receiver.wait_for(1)
    assert arrived.verified(endpoint["secret"])["type"] == TEST_EVENT
    assert TEST_EVENT in text_of(browser.get(page))
