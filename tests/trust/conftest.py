"""Fixtures for the trust and status list tests.

No test here may send traffic beyond this machine: ``connections`` (autouse) fails any
connect to a non-loopback address, and ``dns`` answers made-up names with chosen addresses.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from trust_support import TLS_HOST, FakeDns, LocalServer, make_cert

from app.trust.fetch import Fetcher


@pytest.fixture(autouse=True)
def connections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every address a test connected to; connecting beyond loopback fails the test."""
    made: list[str] = []
    real_connect = socket.socket.connect

    def guarded(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = str(address[0])  # type: ignore[index]
            made.append(host)
            if not ipaddress.ip_address(host.split("%", 1)[0]).is_loopback:
                raise AssertionError(f"test tried to connect to {host}")
        real_connect(sock, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return made


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    fake = FakeDns()
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list:
        fake.asked.append(host)
        entry = fake.table.get(host)
        if entry is None:
            return real(host, port, *args, **kwargs)  # type: ignore[arg-type]
        addresses = entry() if callable(entry) else entry
        return [_addrinfo(address, port) for address in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return fake


def _addrinfo(address: str, port: int) -> tuple:
    if ":" in address:
        return (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))
    return (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()


@dataclass(frozen=True)
class Tls:
    ca_bundle: str
    context: ssl.SSLContext


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    """A private CA and a server certificate for issuer.test (and 127.0.0.1)."""
    directory: Path = tmp_path_factory.mktemp("tls")
    ca = make_cert("Test CA", ca=True)
    leaf = make_cert(TLS_HOST, issuer=ca, dns=[TLS_HOST], ips=["127.0.0.1"])
    (directory / "ca.pem").write_text(ca.pem)
    (directory / "server.pem").write_text(leaf.pem)
    key_pem = leaf.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (directory / "server.key").write_bytes(key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "server.pem", directory / "server.key")
    return Tls(str(directory / "ca.pem"), context)


@pytest.fixture
def tls_server(tls: Tls, dns: FakeDns) -> Iterator[LocalServer]:
    """An HTTPS server reachable as https://issuer.test:<port>/ (resolved to 127.0.0.1)."""
    dns[TLS_HOST] = ["127.0.0.1"]
    local = LocalServer(ssl_context=tls.context)
    yield local
    local.stop()


@pytest.fixture
def dev_fetcher() -> Fetcher:
    """The development setting: plain http and loopback allowed."""
    return Fetcher(allow_private=True, timeout=2.0)


@pytest.fixture
def tls_fetcher(tls: Tls) -> Fetcher:
    """Loopback allowed (the test server lives there), https with the test CA."""
    return Fetcher(allow_private=True, ca_bundle=tls.ca_bundle, timeout=2.0)
