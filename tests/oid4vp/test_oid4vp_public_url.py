"""What a verifier checks is named by ``PUBLIC_URL``, never by the Host header of a request.

Whoever posts a response chooses its Host header. Were the key binding's audience or the
browser API's origin read from it, a presentation made for another verifier (``evil.example``)
and relayed here with ``Host: evil.example`` would pass. Without ``PUBLIC_URL`` (development,
tests) the deployment is ``http://127.0.0.1:8000``, ``make run``'s own address; production
refuses to start without one.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from factories import make_staff, make_verification
from wallets import Issuer, dc_api_openid4vp_request, node_presentation, read_request

from app import create_app
from app.config import DEVELOPMENT_PUBLIC_URL

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = "http://evil.example"


@pytest.fixture
def unset(make_app):
    """A deployment started without ``PUBLIC_URL``, as development runs without one."""
    return make_app(PUBLIC_URL="", DC_API_RESPONSE_MODE="dc_api")


def opened(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return individual, read_request(client, link)


def status_of(client, individual) -> str:
    return client.get(f"/verifications/{individual['id']}/verify").get_json()["status"]


def test_without_public_url_the_request_names_the_development_address_not_the_host(unset):
    client = unset.test_client()
    _, request = opened(unset, client)

    assert DEVELOPMENT_PUBLIC_URL == "http://127.0.0.1:8000"
    assert request.client_id == (
        f"redirect_uri:{DEVELOPMENT_PUBLIC_URL}/oid4vp/responses/{request.request_id}"
    )
    assert request.response_uri.startswith(DEVELOPMENT_PUBLIC_URL + "/")


def test_links_shown_to_people_name_the_public_url_whatever_the_host(unset):
    client = unset.test_client()
    staff = make_staff(unset)
    verification = make_verification(client, staff)
    evil = {"Host": "evil.example"}

    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-2", "verification_id": verification["id"]},
        headers=evil,
    ).get_json()
    connect = client.get(f"/verifications/{individual['id']}/connect", headers=evil).get_json()

    assert individual["page_url"] == f"{DEVELOPMENT_PUBLIC_URL}/i/{individual['id']}"
    assert "evil.example" not in json.dumps([individual, connect])
    assert read_request(client, connect["connection_url"]).response_uri.startswith(
        DEVELOPMENT_PUBLIC_URL + "/oid4vp/responses/"
    )


def test_a_presentation_for_another_host_relayed_with_that_host_is_not_verified(unset):
    client = unset.test_client()
    individual, request = opened(unset, client)
    foreign = replace(
        request, client_id=f"redirect_uri:{FOREIGN}/oid4vp/responses/{request.request_id}"
    )
    presentation = node_presentation(foreign, Issuer())

    relayed = client.post(
        f"/oid4vp/responses/{request.request_id}",
        data={"vp_token": json.dumps({"credential": [presentation]}), "state": request.state},
        headers={"Host": "evil.example"},
    )

    assert relayed.status_code == 200, relayed.get_json()
    assert status_of(client, individual) == "FAILED"


def test_a_browser_answer_from_the_host_a_request_names_is_refused(unset):
    client = unset.test_client()
    individual, request = opened(unset, client)
    protocol, _ = dc_api_openid4vp_request(client, request.request_id)
    presentation = node_presentation(request, Issuer(), aud=f"origin:{FOREIGN}")

    relayed = client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={"protocol": protocol, "data": {"vp_token": {"credential": [presentation]}}},
        headers={"Host": "evil.example", "Origin": FOREIGN},
    )

    assert relayed.status_code == 400
    assert relayed.get_json()["code"] == "INVALID_ORIGIN"
    assert DEVELOPMENT_PUBLIC_URL in relayed.get_json()["error"]
    assert status_of(client, individual) != "VERIFIED"


def test_production_refuses_to_start_without_a_public_url() -> None:
    settings = {
        "SQLALCHEMY_DATABASE_URI": "sqlite://",
        "ENV": "production",
        "SECRET_KEY": "a-real-secret",
        "ISSUER_KEY_SECRET": "sealing-secret",
        "PUBLIC_URL": "",
    }
    with pytest.raises(RuntimeError, match="PUBLIC_URL must be set"):
        create_app(settings)
    started = create_app({**settings, "PUBLIC_URL": "https://verity.example/"})
    assert started.config["PUBLIC_URL"] == "https://verity.example"


def make_run(**env: str) -> str:
    """The commands ``make run`` would run (``make -n``: nothing is started)."""
    scrubbed = {k: v for k, v in os.environ.items() if k not in ("PUBLIC_URL", "HOST", "PORT")}
    done = subprocess.run(
        ["make", "-n", "run"],
        cwd=ROOT,
        env={**scrubbed, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_make_run_serves_its_own_address_as_the_public_url_unless_one_is_set() -> None:
    assert "export PUBLIC_URL='http://127.0.0.1:8000'" in make_run()
    assert "export PUBLIC_URL='http://127.0.0.1:8123'" in make_run(PORT="8123")
    assert "export PUBLIC_URL='https://verity.example'" in make_run(
        PUBLIC_URL="https://verity.example", PORT="8123"
    )
