"""What nginx answers itself, when no instance can: the service's error shape, never nginx's
HTML error page.

nginx here stands in front of two addresses where nothing listens, as when every instance is
down. It needs no database, so these run in both passes wherever nginx is installed.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from deploy_support import Answer, free_port, post_json, send

from deploy import cluster

START_TIMEOUT = 30  # seconds for nginx to listen (a guard, not a timing)
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def listening(address: str) -> bool:
    host, port = address.split(":")
    with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1):
        return True
    return False


@pytest.fixture(scope="module")
def nginx_site(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """nginx's base URL and prefix directory, in front of instances that are all down, its
    access log on."""
    if cluster.nginx_binary() is None:
        pytest.skip("nginx is not installed (make test installs Debian's nginx)")
    workdir = tmp_path_factory.mktemp("nginx-alone")
    listen = f"127.0.0.1:{free_port()}"
    down = [f"127.0.0.1:{free_port()}" for _ in range(2)]
    prefix = cluster.nginx_prefix()
    proxy = None
    try:
        config = cluster.write_nginx_config(prefix, listen, down, access_log=True)
        proxy = cluster.launch_nginx(config, listen, workdir / "nginx.log")
        deadline = time.monotonic() + START_TIMEOUT
        while not listening(listen):
            assert proxy.process.poll() is None, proxy.log()
            assert time.monotonic() < deadline, proxy.log()
            time.sleep(0.05)
        yield proxy.base, prefix
    finally:
        if proxy is not None:
            proxy.stop()
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.fixture(scope="module")
def nginx_alone(nginx_site) -> str:
    return nginx_site[0]


def assert_service_unavailable(answer: Answer) -> None:
    assert answer.status == 502, answer.body
    assert answer.headers["Content-Type"].startswith("application/json"), answer.body
    body = answer.json()
    assert body == {"error": body["error"], "code": "SERVICE_UNAVAILABLE"}
    assert int(answer.headers["Retry-After"]) > 0


def test_an_api_client_gets_json_with_a_code_and_retry_after(nginx_alone):
    assert_service_unavailable(send(nginx_alone, "GET", f"/verifications/{uuid.uuid4()}/verify"))
    assert_service_unavailable(send(nginx_alone, "GET", "/healthz"))
    opened = post_json(
        nginx_alone,
        "/verifications/individuals",
        {"customer_id": "c", "verification_id": str(uuid.uuid4())},
    )
    assert_service_unavailable(opened)


def test_a_person_in_a_browser_gets_a_calm_page(nginx_alone):
    page = send(nginx_alone, "GET", f"/i/{uuid.uuid4()}", headers=BROWSER)
    assert page.status == 502
    assert page.headers["Content-Type"].startswith("text/html")
    assert int(page.headers["Retry-After"]) > 0
    text = page.body.decode("utf-8")
    assert "try again in a moment" in text
    assert "nginx" not in text
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]


def test_a_body_over_one_mebibyte_is_refused_as_the_service_refuses_it(nginx_alone):
    too_large = send(
        nginx_alone,
        "POST",
        "/verifications/individuals",
        b"x" * (1024 * 1024 + 1),
        {"Content-Type": "application/json"},
    )
    assert too_large.status == 413, too_large.body
    assert too_large.headers["Content-Type"].startswith("application/json")
    body = too_large.json()
    assert body == {"error": body["error"], "code": "PAYLOAD_TOO_LARGE"}


def test_the_access_log_names_no_path_so_no_secret_in_one(nginx_site):
    """Offer tokens, a person's page and presentation request IDs ride in paths: nginx logs
    the method and status of each request, never its path or referrer."""
    nginx_alone, prefix = nginx_site
    secrets = [uuid.uuid4().hex for _ in range(3)]
    paths = [f"/o/{secrets[0]}/status", f"/i/{secrets[1]}", f"/oid4vp/requests/{secrets[2]}"]
    for path in paths:
        send(nginx_alone, "GET", path, headers={"Referer": f"{nginx_alone}/o/{secrets[0]}"})
    log = prefix / "access.log"
    deadline = time.monotonic() + START_TIMEOUT
    while log.read_text().count("\n") < len(paths):  # nginx writes a line per answer
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    written = log.read_text()
    assert " GET 502 " in written
    assert not [secret for secret in secrets if secret in written], written
