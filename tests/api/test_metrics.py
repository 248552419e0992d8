"""GET /metrics: Prometheus text for a bearer of METRICS_TOKEN, an unknown address to anyone
else. Every scrape is parsed with prometheus_client's own text parser; the values live for
the whole test process, so each test compares a scrape before with one after."""

from __future__ import annotations

import uuid

import pytest
import requests
from factories import make_staff, make_verification
from hardening.served import prepare, served, service_env
from prometheus_client.parser import text_string_to_metric_families
from wallets import Issuer, post_response, python_presentation, read_request

from app.trust import Fetcher
from app.trust.errors import FetchError

TOKEN = "metrics-token-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, keyed by name and sorted labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def metered(make_app):
    return make_app(METRICS_TOKEN=TOKEN)


def start(app, client, email: str, **verification):
    """An individual's presentation request, as its connect link points at it."""
    created = make_verification(client, make_staff(app, email=email), **verification)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return read_request(client, link)


def scrape(client) -> dict:
    response = client.get("/metrics", headers=BEARER)
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    return samples(response.get_data(as_text=True))


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "OPTIONS", "HEAD"])
def test_without_a_token_configured_metrics_answers_like_an_unknown_address(client, method):
    metrics = client.open("/metrics", method=method, headers=BEARER)
    unknown = client.open("/no-such-address", method=method, headers=BEARER)
    assert metrics.status_code == unknown.status_code == 404
    assert metrics.get_data() == unknown.get_data()
    assert "Allow" not in metrics.headers


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}, {"apikey": TOKEN}],
)
@pytest.mark.parametrize("method", ["GET", "POST", "OPTIONS"])
def test_without_the_bearer_token_metrics_answers_like_an_unknown_address(metered, headers, method):
    client = metered.test_client()
    metrics = client.open("/metrics", method=method, headers=headers)
    unknown = client.open("/no-such-address", method=method, headers=headers)
    assert metrics.status_code == unknown.status_code == 404
    assert metrics.get_data() == unknown.get_data()
    assert "Allow" not in metrics.headers


def test_requests_are_counted_per_route_not_per_path(metered):
    client = metered.test_client()
    before = scrape(client)
    ids = [str(uuid.uuid4()) for _ in range(3)]
    for individual_id in ids:
        assert client.get(f"/verifications/{individual_id}/verify").status_code == 400
    for _ in range(2):
        assert client.get("/healthz").status_code == 200
    client.get("/no-such-address")
    after_response = client.get("/metrics", headers=BEARER)
    after = samples(after_response.get_data(as_text=True))

    route = "/verifications/<individual_id>/verify"
    counted = "verity_http_requests_total"
    assert (
        value(after, counted, route=route, method="GET", status="400")
        - value(before, counted, route=route, method="GET", status="400")
        == 3
    )
    assert (
        value(after, counted, route="/healthz", method="GET", status="200")
        - value(before, counted, route="/healthz", method="GET", status="200")
        == 2
    )
    assert (
        value(after, counted, route="unmatched", method="GET", status="404")
        - value(before, counted, route="unmatched", method="GET", status="404")
        == 1
    )
    latency = "verity_http_request_duration_seconds_count"
    assert (
        value(after, latency, route=route, method="GET")
        - value(before, latency, route=route, method="GET")
        == 3
    )
    # The raw paths (and so the IDs in them) are never a label.
    text = after_response.get_data(as_text=True)
    assert not any(individual_id in text for individual_id in ids)
    assert "/no-such-address" not in text


def test_a_bearer_of_another_app_without_metrics_counts_nothing(app, client, metered):
    """Requests are counted only by an app whose metrics can be read."""
    before = scrape(metered.test_client())
    client.get("/healthz")
    after = scrape(metered.test_client())
    name = "verity_http_requests_total"
    labels = {"route": "/healthz", "method": "GET", "status": "200"}
    assert value(after, name, **labels) == value(before, name, **labels)


def test_presentations_are_counted_by_outcome_and_reason_family(app, client, metered):
    issuer = Issuer()
    before = scrape(metered.test_client())
    good = start(app, client, "good@example.test")
    assert post_response(client, good, python_presentation(good, issuer)).status_code == 200
    refused = start(app, client, "refused@example.test", trusted_issuers=["did:jwk:someone-else"])
    assert post_response(client, refused, python_presentation(refused, issuer)).status_code == 200
    after = scrape(metered.test_client())
    name = "verity_presentations_total"
    verified = {"outcome": "VERIFIED", "reason_family": ""}
    untrusted = {"outcome": "FAILED", "reason_family": "UNTRUSTED_ISSUER"}
    assert value(after, name, **verified) - value(before, name, **verified) == 1
    assert value(after, name, **untrusted) - value(before, name, **untrusted) == 1


def test_issuer_fetch_failures_are_counted(metered):
    before = scrape(metered.test_client())
    fetcher = Fetcher(timeout=2, allow_private=True)
    for url in ("http://127.0.0.1:9/.well-known/jwt-vc-issuer", "https://localhost:9/jwks"):
        with pytest.raises(FetchError):
            fetcher.get_json(url)
    after = scrape(metered.test_client())
    name = "verity_issuer_fetch_failures_total"
    assert value(after, name) - value(before, name) == 2


def test_limiter_refusals_are_counted(app, metered):
    client = metered.test_client()
    staff = make_staff(metered)
    before = scrape(client)
    statuses = [
        client.post(
            "/vouchers/exchange", json={"code": "vv_guess"}, headers=staff.headers()
        ).status_code
        for _ in range(12)
    ]
    assert statuses == [404] * 10 + [429] * 2
    after = scrape(client)
    name = "verity_limiter_refusals_total"
    labels = {"scope": "voucher-exchange", "reason": "over_limit"}
    assert value(after, name, **labels) - value(before, name, **labels) == 2


def test_two_gunicorn_workers_are_added_up_in_one_scrape(tmp_path):
    """As ``make run`` serves it: gunicorn.conf.py gives the workers a shared directory, and
    whichever worker answers the scrape reports the requests both of them answered."""
    env = service_env(f"sqlite:///{tmp_path / 'metrics.sqlite3'}", METRICS_TOKEN=TOKEN)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    prepare(env)
    with served(env, tmp_path / "server.log", workers=2) as service:
        session = requests.Session()
        # Separate connections, so that both workers answer some of them.
        for _ in range(40):
            assert requests.get(service.url("/healthz"), timeout=10).status_code == 200
        assert requests.get(service.url("/metrics"), timeout=10).status_code == 404
        scrapes = [
            samples(session.get(service.url("/metrics"), headers=BEARER, timeout=10).text)
            for _ in range(4)
        ]
        pids = {line for line in service.log().splitlines() if "Booting worker" in line}
    labels = {"route": "/healthz", "method": "GET", "status": "200"}
    # 40 healthz plus the one served() waited on; every scrape sees them all.
    for found in scrapes:
        assert value(found, "verity_http_requests_total", **labels) >= 41
    assert len(pids) == 2
