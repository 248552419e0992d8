"""Steps the trust source tests share: add a source through the API, run the queued jobs, and
take a credential through a verification's wallet link to the backend's lookup."""

from __future__ import annotations

from factories import Staff, make_apikey, make_verification
from flask import Flask
from pages.pages_support import wallet_link
from wallets import WalletRequest, post_response, read_request

from app.jobs.queue import queue_of


def add_source(client, staff: Staff, body: dict) -> dict:
    response = client.post("/trust/sources", json=body, headers=staff.headers())
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def run_jobs(app: Flask) -> int:
    """What a worker would do: run everything queued (the refreshes)."""
    return queue_of(app).run_pending()


def read_source(client, staff: Staff, source_id: str) -> dict:
    response = client.get(f"/trust/sources/{source_id}", headers=staff.headers())
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def refresh_now(app: Flask, client, staff: Staff, source_id: str) -> dict:
    response = client.post(f"/trust/sources/{source_id}/refresh", headers=staff.headers())
    assert response.status_code == 202, response.get_json()
    run_jobs(app)
    return read_source(client, staff, source_id)


def wallet_request(client, verification: dict, customer_id: str = "crm-1") -> WalletRequest:
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}")
    assert page.status_code == 200
    return read_request(client, wallet_link(page.get_data(as_text=True)))


def outcome(app: Flask, client, staff: Staff, verification: dict, customer_id: str = "crm-1"):
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/{customer_id}", headers={"apikey": key}
    )
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    return body["status"], body["validation_error"]


def verify(app, client, staff, verification, present, customer_id: str = "crm-1"):
    """Present ``present(request)`` to a fresh individual; the lookup's status and reason."""
    request = wallet_request(client, verification, customer_id)
    assert post_response(client, request, present(request)).status_code == 200
    return outcome(app, client, staff, verification, customer_id)


__all__ = ["make_verification"]
