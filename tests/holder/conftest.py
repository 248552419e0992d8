"""The service on a real loopback port, so the holder speaks HTTP to it as a wallet would."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import make_server


@dataclass
class Served:
    app: Flask
    base: str


class _Late:
    """The WSGI entry the server binds before the app exists: the app's PUBLIC_URL needs the
    port the server got."""

    app: Any = None

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        return self.app(environ, start_response)


@pytest.fixture
def serve_wsgi() -> Iterator[Callable[..., str]]:
    """Serve on 127.0.0.1 the WSGI app ``build(base_url)`` returns; the base URL (``host``
    names the server in it: ``localhost`` for a certificate naming a DNS name)."""
    servers = []

    def start(build: Callable[[str], Any], host: str = "127.0.0.1") -> str:
        entry = _Late()
        server = make_server("127.0.0.1", 0, entry, threaded=True)
        base = f"http://{host}:{server.server_port}"
        entry.app = build(base)
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        servers.append((server, thread))
        return base

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def serve(make_app, serve_wsgi) -> Callable[..., Served]:
    """Start the service on 127.0.0.1 with the given settings. Issuers the tests start
    themselves live on loopback over http, so the verifier's outbound fetcher is allowed there
    (the development setting ``TRUST_ALLOW_PRIVATE``) unless a test turns it off; the
    service's own issuers need no fetch at all."""

    def start(host: str = "127.0.0.1", **config: Any) -> Served:
        built: list[Flask] = []

        def build(base: str) -> Flask:
            built.append(make_app(**{"PUBLIC_URL": base, "TRUST_ALLOW_PRIVATE": True, **config}))
            return built[0]

        base = serve_wsgi(build, host)
        return Served(built[0], base)

    return start
