"""Run a real OpenID Connect provider (npm ``oidc-provider``) on loopback and log in through it.

Login tests use this instead of mocking the identity provider so that the app's OIDC client is
checked against a certified implementation: PKCE, state, nonce, ``iss`` and ID token signatures
all behave as they do in production.

Typical use::

    with OidcProvider(redirect_uris=["http://127.0.0.1:5000/auth/callback"]) as idp:
        ...  # point the app at idp.issuer / idp.client_id / idp.client_secret
        callback_url = complete_login(auth_url, "alice")
"""

from __future__ import annotations

import os
import secrets
import selectors
import shutil
import subprocess
import time
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from types import TracebackType
from urllib.parse import urljoin, urlsplit

import requests

from support.npm import ensure_node_modules

PROVIDER_DIR = Path(__file__).resolve().parent.parent / "oidc_provider"
DEFAULT_REDIRECT_URIS = ("http://127.0.0.1:9/auth/callback",)


class OidcProvider:
    """A running ``oidc-provider`` with one confidential client; use as a context manager.

    The port is chosen by the OS (the provider listens on port 0 and reports its issuer), which
    avoids the race of probing for a free port and handing it over. Provider diagnostics go to
    this process's stderr, where pytest captures them per test.
    """

    def __init__(
        self,
        redirect_uris: Sequence[str] = DEFAULT_REDIRECT_URIS,
        *,
        client_id: str = "verity-test",
        client_secret: str | None = None,
        token_endpoint_auth_method: str = "client_secret_basic",
        require_pkce: bool = True,
        startup_timeout: float = 60.0,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret or secrets.token_urlsafe(24)
        self.redirect_uris = list(redirect_uris)
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.require_pkce = require_pkce
        self.startup_timeout = startup_timeout
        self.issuer = ""
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> OidcProvider:
        """Start node and block until it prints ``READY <issuer>``."""
        ensure_node_modules(PROVIDER_DIR, "oidc-provider")
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is required to run the OIDC test provider")
        env = {
            **os.environ,
            "OIDC_PORT": "0",
            "OIDC_CLIENT_ID": self.client_id,
            "OIDC_CLIENT_SECRET": self.client_secret,
            "OIDC_REDIRECT_URIS": ",".join(self.redirect_uris),
            "OIDC_TOKEN_AUTH": self.token_endpoint_auth_method,
            "OIDC_PKCE_REQUIRED": "1" if self.require_pkce else "0",
            "NODE_ENV": "test",
        }
        self._process = subprocess.Popen(
            [node, "provider.mjs"],
            cwd=PROVIDER_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            self.issuer = self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> str:
        """Read the single ``READY`` line, failing fast if node dies or hangs."""
        assert self._process is not None and self._process.stdout is not None
        deadline = time.monotonic() + self.startup_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while (remaining := deadline - time.monotonic()) > 0:
                if not selector.select(remaining):
                    continue
                line = self._process.stdout.readline()
                if line.startswith("READY "):
                    return line.split(maxsplit=1)[1].strip()
                if not line:
                    code = self._process.wait(timeout=5)
                    raise RuntimeError(f"OIDC provider exited with {code} before READY")
        raise TimeoutError(f"OIDC provider not ready after {self.startup_timeout}s")

    def stop(self) -> None:
        """Terminate node and release its pipe (no ResourceWarning under filterwarnings=error)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> OidcProvider:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def discovery_url(self) -> str:
        """Where the app's OIDC client should load the provider metadata from."""
        return f"{self.issuer}/.well-known/openid-configuration"


class _FormParser(HTMLParser):
    """Collect the first form's action and its named inputs; enough for the dev login pages."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._in_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if tag == "form" and self.action is None:
            self.action = values.get("action", "")
            self._in_form = True
        elif tag == "input" and self._in_form and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def complete_login(auth_url: str, login: str, *, max_steps: int = 12) -> str:
    """Play the browser from ``auth_url`` through login and consent; return the callback URL.

    Redirects are followed by hand and only while they stay on the provider, because the
    client's redirect_uri (the app) may not be listening; the first redirect that leaves the
    provider is returned unvisited, with ``code``, ``state`` and ``iss`` (or ``error``) in it.
    Every form shown is submitted with its hidden fields, ``login`` set to the given login and any
    ``password`` filled in (the dev login form requires one but accepts any value).
    """
    provider = _origin(auth_url)
    url, method, data = auth_url, "GET", None
    with requests.Session() as session:
        for _ in range(max_steps):
            response = session.request(method, url, data=data, allow_redirects=False, timeout=10)
            if response.is_redirect:
                url = urljoin(url, response.headers["Location"])
                if _origin(url) != provider:
                    return url
                method, data = "GET", None
                continue
            if response.status_code != 200:
                raise RuntimeError(
                    f"{method} {url} -> {response.status_code}: {response.text[:500]}"
                )
            form = _FormParser()
            form.feed(response.text)
            if form.action is None:
                raise RuntimeError(f"no form and no redirect at {url}: {response.text[:500]}")
            fields = form.fields
            if "login" in fields:
                fields["login"] = login
            if "password" in fields:
                fields["password"] = fields["password"] or "any-password"
            url, method, data = urljoin(url, form.action), "POST", fields
    raise RuntimeError(f"login did not reach the redirect_uri within {max_steps} steps")
