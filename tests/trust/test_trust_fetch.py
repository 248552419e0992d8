"""The Fetcher: every outbound fetch is refused unless it goes over https to a public address,
connects to the address that was checked, and stays within its time and size limits."""

from __future__ import annotations

import gzip
import ipaddress
import socket
import threading
import time

import pytest
from support.slow_receiver import SlowReceiver
from trust_support import TLS_HOST, FakeDns, LocalServer
from werkzeug.wrappers import Request, Response

from app.trust.errors import DeadlinePassed, FetchError
from app.trust.fetch import Fetcher, TTLCache, address_problem


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1/", "127.0.0.1 is a loopback address"),
        ("https://localhost/", "is a loopback address"),
        ("https://10.0.0.1/", "10.0.0.1 is a private address"),
        ("https://192.168.1.10/", "is a private address"),
        ("https://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
        ("https://[::1]/", "::1 is a loopback address"),
        ("https://0.0.0.0/", "0.0.0.0 is the unspecified address"),
        ("https://[fd00::1]/", "fd00::1 is a private address"),
        ("https://[fe80::1]/", "is a link-local address"),
        ("https://[::ffff:127.0.0.1]/", "is a loopback address"),
        ("https://100.64.0.1/", "100.64.0.1 is not a public address"),
        ("https://224.0.0.1/", "224.0.0.1 is a multicast address"),
        ("https://2130706433/", "127.0.0.1 is a loopback address"),
    ],
)
def test_non_public_addresses_are_refused_before_any_connection(
    url: str, reason: str, connections: list[str]
) -> None:
    with pytest.raises(FetchError, match=reason):
        Fetcher().get_bytes(url)
    assert connections == []


def test_plain_http_is_refused_without_even_resolving(dns: FakeDns, connections: list[str]) -> None:
    with pytest.raises(FetchError, match="Only https:// URLs are fetched"):
        Fetcher().get_bytes("http://example.com/")
    assert dns.asked == []
    assert connections == []


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x/"])
def test_other_schemes_are_refused(url: str, connections: list[str]) -> None:
    with pytest.raises(FetchError, match="Only https://"):
        Fetcher(allow_private=True).get_bytes(url)
    assert connections == []


def test_a_name_resolving_to_loopback_is_refused(dns: FakeDns, connections: list[str]) -> None:
    dns["issuer.example"] = ["127.0.0.1"]
    with pytest.raises(FetchError, match=r"issuer.example: 127.0.0.1 is a loopback address"):
        Fetcher().get_json("https://issuer.example/.well-known/jwt-vc-issuer")
    assert connections == []


def test_a_name_is_refused_when_any_of_its_addresses_is_private(
    dns: FakeDns, connections: list[str]
) -> None:
    dns["issuer.example"] = ["93.184.216.34", "10.1.2.3"]
    with pytest.raises(FetchError, match=r"10.1.2.3 is a private address"):
        Fetcher().get_json("https://issuer.example/")
    assert connections == []


def test_urls_with_credentials_are_refused(connections: list[str]) -> None:
    with pytest.raises(FetchError, match="credentials"):
        Fetcher().get_bytes("https://user:secret@issuer.example/")
    assert connections == []


def test_an_unresolvable_name_is_reported(dns: FakeDns) -> None:
    dns["nowhere.example"] = []
    with pytest.raises(FetchError, match=r"Could not resolve nowhere.example"):
        Fetcher().get_bytes("https://nowhere.example/")


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("93.184.216.34", None),
        ("2606:4700:4700::1111", None),
        ("64:ff9b::a00:1", "a private address"),  # NAT64 form of 10.0.0.1
        ("2002:7f00:1::", "a loopback address"),  # 6to4 form of 127.0.0.1
        ("::ffff:169.254.169.254", "a link-local address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "a reserved address"),
        ("192.0.2.1", "a private address"),  # documentation range
    ],
)
def test_address_classification(address: str, problem: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address)) == problem


def test_the_development_setting_allows_http_and_loopback(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    server.add("/doc", {"a": 1})
    assert dev_fetcher.get_json(server.url("/doc")) == {"a": 1}


def test_redirects_are_not_followed(
    server: LocalServer, dev_fetcher: Fetcher, connections: list[str]
) -> None:
    server.add("/moved", "", status=302, headers={"Location": "http://10.0.0.1/latest/meta-data"})
    with pytest.raises(FetchError, match=r"redirect \(HTTP 302\); redirects are not followed"):
        dev_fetcher.get_bytes(server.url("/moved"))
    assert set(connections) == {"127.0.0.1"}


def test_the_connection_goes_to_the_checked_address_even_if_dns_answers_differently_later(
    dns: FakeDns, server: LocalServer, dev_fetcher: Fetcher, connections: list[str]
) -> None:
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])  # a rebinding name: second answer differs
    dns["rebind.test"] = lambda: next(answers)
    server.add("/doc", {"ok": True})
    assert dev_fetcher.get_json(server.url("/doc", host="rebind.test")) == {"ok": True}
    assert dns.asked.count("rebind.test") == 1
    assert connections == ["127.0.0.1"]
    assert server.seen[-1]["Host"] == f"rebind.test:{server.port}"


def test_https_verifies_the_certificate_for_the_host_name_while_connecting_by_address(
    tls_server: LocalServer, tls_fetcher: Fetcher, connections: list[str]
) -> None:
    tls_server.add("/doc", {"ok": True})
    assert tls_fetcher.get_json(tls_server.url("/doc", host=TLS_HOST)) == {"ok": True}
    assert connections == ["127.0.0.1"]
    assert tls_server.seen[-1]["Host"] == f"{TLS_HOST}:{tls_server.port}"


def test_https_refuses_a_certificate_issued_for_another_name(
    tls_server: LocalServer, tls_fetcher: Fetcher, dns: FakeDns
) -> None:
    dns["impostor.test"] = ["127.0.0.1"]
    tls_server.add("/doc", {"ok": True})
    with pytest.raises(
        FetchError,
        match=r"TLS with impostor.test failed: its certificate is not valid for this host",
    ):
        tls_fetcher.get_json(tls_server.url("/doc", host="impostor.test"))
    assert tls_server.hits["/doc"] == 0


def test_https_refuses_a_certificate_from_an_untrusted_ca(tls_server: LocalServer) -> None:
    tls_server.add("/doc", {"ok": True})
    with pytest.raises(
        FetchError, match=f"TLS with {TLS_HOST} failed: its certificate could not be verified"
    ):
        Fetcher(allow_private=True).get_json(tls_server.url("/doc", host=TLS_HOST))


def test_a_declared_length_over_the_cap_is_refused(server: LocalServer) -> None:
    server.add("/big", b"x" * 2000)
    with pytest.raises(FetchError, match="more than 1000 bytes"):
        Fetcher(allow_private=True, max_bytes=1000).get_bytes(server.url("/big"))


def test_the_cap_is_enforced_while_streaming_a_body_of_unknown_length(server: LocalServer) -> None:
    server.add("/stream", lambda _request: Response(b"x" * 500 for _ in range(10)))
    with pytest.raises(FetchError, match="more than 1000 bytes"):
        Fetcher(allow_private=True, max_bytes=1000).get_bytes(server.url("/stream"))


def test_a_body_exactly_at_the_cap_is_accepted(server: LocalServer) -> None:
    server.add("/exact", b"x" * 1000)
    body = Fetcher(allow_private=True, max_bytes=1000).get_bytes(server.url("/exact"))
    assert len(body) == 1000


def test_compressed_bodies_are_neither_asked_for_nor_accepted(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    server.add("/gz", gzip.compress(b"{}"), headers={"Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match=r"compressed body \(gzip\)"):
        dev_fetcher.get_bytes(server.url("/gz"))
    assert server.seen[-1]["Accept-Encoding"] == "identity"


def test_a_stalled_server_times_out(server: LocalServer) -> None:
    def stall(_request: Request) -> Response:
        server.release.wait(3)
        return Response("late")

    server.add("/stall", stall)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"did not answer within 0.3 s"):
        Fetcher(allow_private=True, timeout=0.3).get_bytes(server.url("/stall"))
    assert time.monotonic() - started < 2


def test_a_slow_drip_runs_into_the_overall_deadline(server: LocalServer) -> None:
    def drip(_request: Request) -> Response:
        def body():
            for _ in range(20):
                server.release.wait(0.05)
                yield b"x"

        return Response(body())

    server.add("/drip", drip)
    with pytest.raises(FetchError, match=r"did not answer within 0.3 s"):
        Fetcher(allow_private=True, timeout=0.3).get_bytes(server.url("/drip"))


def test_a_closed_port_is_reported(dev_fetcher: Fetcher) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError, match=r"Could not connect to 127.0.0.1"):
        dev_fetcher.get_bytes(f"http://127.0.0.1:{port}/")


def test_error_statuses_are_reported(server: LocalServer, dev_fetcher: Fetcher) -> None:
    with pytest.raises(FetchError, match="answered HTTP 404"):
        dev_fetcher.get_bytes(server.url("/missing"))


@pytest.mark.parametrize(
    ("body", "reason"), [("not json", "not answer with JSON"), ("[1]", "JSON object")]
)
def test_get_json_wants_a_json_object(
    server: LocalServer, dev_fetcher: Fetcher, body: str, reason: str
) -> None:
    server.add("/doc", body)
    with pytest.raises(FetchError, match=reason):
        dev_fetcher.get_json(server.url("/doc"))


def test_the_accept_header_is_sent(server: LocalServer, dev_fetcher: Fetcher) -> None:
    server.add("/list", b"token")
    dev_fetcher.get_bytes(server.url("/list"), accept="application/statuslist+jwt")
    assert server.seen[-1]["Accept"] == "application/statuslist+jwt"


def test_repeat_fetches_are_served_from_the_cache(server: LocalServer) -> None:
    server.add("/doc", {"v": 1})
    fetcher = Fetcher(allow_private=True, cache_ttl=60)
    fetcher.get_json(server.url("/doc"))
    fetcher.get_json(server.url("/doc"))
    assert server.hits["/doc"] == 1


def test_cache_entries_expire(server: LocalServer) -> None:
    clock = [0.0]
    fetcher = Fetcher(allow_private=True, cache_ttl=60, cache=TTLCache(clock=lambda: clock[0]))
    server.add("/doc", {"v": 1})
    fetcher.get_json(server.url("/doc"))
    clock[0] = 61.0
    fetcher.get_json(server.url("/doc"))
    assert server.hits["/doc"] == 2


def test_a_zero_cache_ttl_always_fetches(server: LocalServer) -> None:
    server.add("/doc", {"v": 1})
    fetcher = Fetcher(allow_private=True, cache_ttl=60)
    fetcher.get_json(server.url("/doc"), cache_ttl=0)
    fetcher.get_json(server.url("/doc"), cache_ttl=0)
    assert server.hits["/doc"] == 2


def test_the_cache_drops_its_oldest_entries_when_full() -> None:
    cache = TTLCache(max_entries=2)
    for key in ("a", "b", "c"):
        cache.set(key, key, ttl=60)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, "b", "c")


def test_the_cache_is_bounded_in_bytes() -> None:
    cache = TTLCache(max_bytes=100)
    cache.set("a", "a", ttl=60, size=60)
    cache.set("b", "b", ttl=60, size=60)
    cache.set("huge", "h", ttl=60, size=101)
    assert (cache.get("a"), cache.get("b"), cache.get("huge")) == (None, "b", None)


@pytest.fixture
def dribbling():
    receiver = SlowReceiver(interval=0.5)
    yield receiver
    receiver.close()


@pytest.mark.parametrize("how", ["get", "post"])
def test_headers_dribbled_a_byte_at_a_time_run_into_the_deadline(
    dribbling: SlowReceiver, how: str
) -> None:
    """Each byte arrives well within a read timeout; only the deadline of the whole attempt
    ends it, long before the answer would have been complete."""
    fetcher = Fetcher(allow_private=True, timeout=0.5, cache_ttl=0)
    with pytest.raises(DeadlinePassed, match=r"did not answer within 0.5 s"):
        if how == "get":
            fetcher.get_bytes(dribbling.url)
        else:
            fetcher.post(dribbling.url, b"{}", {"content-type": "application/json"})
    [connection] = dribbling.wait_until_ended(1)
    assert dribbling.whole_answer_takes > 20 * fetcher.timeout
    assert connection.cut_off and connection.sent < 20


class HalfAnswer:
    """Answers a POST with a status, headers and the start of a longer body, then stalls
    (``then="stall"``) or closes the connection (``then="close"``)."""

    def __init__(self, then: str) -> None:
        self.then = then
        self.done = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hooks"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(4096)
            connection.sendall(
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 100000\r\nX-Receiver: half\r\n\r\n"
                + b"started"
            )
            if self.then == "stall":
                self.done.wait(30)

    def close(self) -> None:
        self.done.set()
        self.listener.close()


@pytest.mark.parametrize("then", ["stall", "close"])
def test_a_post_answer_stands_when_its_body_stalls_or_breaks_off(then: str) -> None:
    """The status came: that is the answer. What came of the body is kept, marked as cut."""
    server = HalfAnswer(then)
    try:
        fetcher = Fetcher(allow_private=True, timeout=0.5, cache_ttl=0)
        answer = fetcher.post(
            server.url, b"{}", {"content-type": "application/json"}, body_limit=4096
        )
    finally:
        server.close()
    assert (answer.status, answer.headers["X-Receiver"]) == (202, "half")
    assert (answer.body, answer.body_cut) == (b"started", True)


def test_a_post_keeps_at_most_the_body_limit_and_names_what_it_sends(server: LocalServer) -> None:
    body = b"a" * 5000
    server.add("/hooks", body, status=201)
    url = server.url("/hooks")
    fetcher = Fetcher(allow_private=True, cache_ttl=0)
    answer = fetcher.post(url, b"{}", {"webhook-id": "msg_1"}, body_limit=4096)
    assert (answer.status, answer.body, answer.body_cut) == (201, body[:4096], True)
    whole = fetcher.post(url, b"{}", {}, body_limit=5000)
    assert (whole.body, whole.body_cut) == (body, False)
    sent = fetcher.post_headers(url, b"{}", {"webhook-id": "msg_1"})
    arrived = {name.lower(): value for name, value in server.seen[0].items()}
    assert {name.lower(): arrived[name.lower()] for name in sent} == {
        name.lower(): value for name, value in sent.items()
    }
    assert sent["webhook-id"] == "msg_1" and sent["User-Agent"] == "Verity"
